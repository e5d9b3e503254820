// Per-phase CPU time of one lint (`graphlint lint --timings`, docs/performance.md):
// parse, import, shape completion, each analysis, each rule, reporting. A
// phase is a scope; its time is exclusive (an analysis a rule asks for counts
// for the analysis, not the rule), so the phases add up to the run. It lives in
// the lowest layer because the importers, the engine and the CLI all time
// their own phases. Off unless enabled: a disabled scope costs one load.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <cstdint>

namespace graphlint {

class PhaseTimes {
public:
  static void enable() { enabled_.store(true, std::memory_order_relaxed); }
  static bool enabled() { return enabled_.load(std::memory_order_relaxed); }

  /// Times one phase on this thread until destroyed. `name` must outlive the
  /// run (a literal, or a name kept by the caller); `items` is the number of
  /// nodes the phase walks, for the nodes/s column.
  class Scope {
  public:
    explicit Scope(llvm::StringRef name, uint64_t items = 0) {
      if (enabled())
        begin({}, name, items);
    }
    /// Named `group` + `name` ("analysis " + a type name).
    Scope(llvm::StringRef group, llvm::StringRef name, uint64_t items) {
      if (enabled())
        begin(group, name, items);
    }
    ~Scope() {
      if (active_)
        end();
    }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    void begin(llvm::StringRef group, llvm::StringRef name, uint64_t items);
    void end();
    bool active_ = false;
    Scope *parent_ = nullptr;
    llvm::StringRef group_, name_;
    uint64_t items_ = 0;
    int64_t start_ = 0;   // this thread's CPU ns when the scope last resumed
    int64_t own_ = 0;     // exclusive ns accumulated so far
  };

  /// The table on `os`: each phase in order of first use, its CPU ms, its
  /// share of the process's CPU time, nodes/s and the peak RSS when it ended;
  /// then what no phase covers
  /// (process start, ONNX's schema registry, option parsing).
  static void print(llvm::raw_ostream &os);

private:
  static std::atomic<bool> enabled_;
};

}  // namespace graphlint
