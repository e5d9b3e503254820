// Every file graphlint writes (the report of -o, --emit-dot, --memory-plot,
// --write-baseline, verify -o, inspect --emit-dot) goes through here:
// - OutputGuard refuses, before anything is opened or truncated, an output
//   path that is the same file as one of the run's inputs (a model, the
//   external-data files it names, a config file, the baseline, the hardware
//   file) or as another output of the same run, compared by device and inode
//   (so '../dir/model.onnx', a hard link or a symlink to the model are
//   caught), or by absolute path for outputs that do not exist yet;
// - AtomicOutput writes to a temporary file beside the target and renames it
//   over the target only when everything was written, so a failed or killed
//   run never leaves a truncated file (docs/robustness.md).
#pragma once

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/FileSystem/UniqueID.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace graphlint {

class OutputGuard {
public:
  /// A file the run reads; `role` names it in messages ("model", "config
  /// file", "external data file"). Paths that do not exist are ignored.
  void addInput(const std::string &path, const std::string &role);
  /// Checks the output `path` that `flag` names against every input and
  /// every output added before, then adds it. Fails with "refusing to write
  /// FLAG 'PATH': it is the ROLE 'INPUT' this run reads ..." or "... FLAG2
  /// writes the same file 'OTHER' ..." when they are one file: the same
  /// device and inode when it exists, else the same absolute path (its
  /// folder resolved). An input whose role is `allowedRole` may be
  /// rewritten. "-", devices and FIFOs are never compared.
  llvm::Error addOutput(const std::string &path, llvm::StringRef flag, llvm::StringRef allowedRole = "");

private:
  struct File {
    std::string path, role;  // role: an input's role, or an output's flag
    std::optional<llvm::sys::fs::UniqueID> id;
    std::string normalized;
  };
  std::vector<File> inputs_, outputs_;
};

class AtomicOutput {
public:
  /// Creates the temporary file next to `path` ("-" is stdout, written
  /// directly; so is a FIFO or device such as /dev/null). Fails with "cannot
  /// write 'PATH': ..." when the directory is not writable.
  static llvm::Expected<std::unique_ptr<AtomicOutput>> create(const std::string &path);
  ~AtomicOutput();  // removes the temporary file unless committed

  llvm::raw_ostream &os() { return *os_; }
  /// Flushes, closes and renames the temporary file over the target.
  llvm::Error commit();

private:
  AtomicOutput() = default;
  std::string path_, target_, temp_;
  std::unique_ptr<llvm::raw_fd_ostream> os_;
  bool committed_ = false;
};

/// create() + render + commit().
llvm::Error writeOutputAtomically(const std::string &path, llvm::function_ref<void(llvm::raw_ostream &)> render);

}  // namespace graphlint
