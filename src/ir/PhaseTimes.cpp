#include "graphlint/ir/PhaseTimes.h"

#include <llvm/ADT/StringMap.h>

#include <fmt/format.h>

#include <mutex>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <time.h>

namespace graphlint {

std::atomic<bool> PhaseTimes::enabled_{false};

namespace {

int64_t threadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Phase {
  std::string name;
  int64_t ns = 0;
  uint64_t items = 0;
  uint64_t calls = 0;
  long maxRssKiB = 0;  // the process's peak RSS when the phase last ended
};

// Phases in order of first use (a file's phases repeat for the next file).
struct Table {
  std::mutex mu;
  std::vector<Phase> phases;
  llvm::StringMap<size_t> index;
};

Table &table() {
  static Table t;
  return t;
}

thread_local PhaseTimes::Scope *current = nullptr;

}  // namespace

void PhaseTimes::Scope::begin(llvm::StringRef group, llvm::StringRef name, uint64_t items) {
  active_ = true;
  group_ = group;
  name_ = name;
  items_ = items;
  parent_ = current;
  int64_t now = threadCpuNs();
  if (parent_)
    parent_->own_ += now - parent_->start_;
  start_ = now;
  current = this;
}

void PhaseTimes::Scope::end() {
  int64_t now = threadCpuNs();
  own_ += now - start_;
  current = parent_;
  if (parent_)
    parent_->start_ = now;
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  std::string full = group_.str() + name_.str();
  auto [it, added] = t.index.try_emplace(full, t.phases.size());
  if (added)
    t.phases.push_back(Phase{full});
  Phase &p = t.phases[it->second];
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  p.maxRssKiB = ru.ru_maxrss;
  p.ns += own_;
  p.items += items_;
  ++p.calls;
}

void PhaseTimes::print(llvm::raw_ostream &os) {
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double processMs = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  double phasesMs = 0;
  for (const Phase &p : t.phases)
    phasesMs += p.ns / 1e6;
  os << fmt::format("{:<48} {:>10} {:>6} {:>14} {:>10}\n", "phase", "CPU ms", "share", "nodes/s", "peak MiB");
  auto row = [&](llvm::StringRef name, double ms, uint64_t items, long rssKiB) {
    // A rate over a tenth of a millisecond says nothing.
    std::string rate = items && ms >= 0.1 ? fmt::format("{:.3g}", items / (ms / 1e3)) : "";
    os << fmt::format("{:<48} {:>10.1f} {:>5.1f}% {:>14} {:>10}\n", name.str(), ms,
                      processMs > 0 ? 100 * ms / processMs : 0.0, rate,
                      rssKiB ? std::to_string(rssKiB / 1024) : std::string());
  };
  for (const Phase &p : t.phases) {
    // A rule's resolved options are an analysis type named after the rule's
    // class: "analysis detail::ResolvedRuleOptions<graphlint::{anonymous}::X>".
    llvm::StringRef name = p.name;
    std::string options;
    if (name.consume_front("analysis detail::ResolvedRuleOptions<") && name.consume_back(">"))
      name = options = "rule options " + name.rsplit("::").second.str();
    row(name, p.ns / 1e6, p.items, p.maxRssKiB);
  }
  row("(outside phases: start-up, schema registry)", processMs - phasesMs, 0, 0);
  os << fmt::format("{:<48} {:>10.1f}   max RSS {} MiB (this thread {:.1f} ms)\n", "process CPU so far", processMs,
                    ru.ru_maxrss / 1024, threadCpuNs() / 1e6);
}

}  // namespace graphlint
