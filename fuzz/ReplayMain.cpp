// Replays inputs through a fuzz target without libFuzzer: the normal build
// links each target with this main, and CTest runs it over
// fuzz/regressions/<target>/ so every case a campaign found stays fixed.
// Usage: graphlint_fuzz_replay_<target> FILE_OR_DIR... ; exit 0 when every
// input ran (a crash or sanitizer report ends the process first).
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
// Optional, as in libFuzzer: a target that sets itself up (argv: its scratch directory).
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (!llvm::sys::fs::is_directory(argv[i])) {
      files.push_back(argv[i]);
      continue;
    }
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(argv[i], ec), end; it != end && !ec; it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()) && llvm::StringRef(it->path()).rsplit('/').second != "README.md")
        files.push_back(it->path());
    if (ec) {
      llvm::errs() << argv[i] << ": " << ec.message() << "\n";
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (std::string &f : files) {  // LLVMFuzzerInitialize may change directory
    llvm::SmallString<256> abs(f);
    llvm::sys::fs::make_absolute(abs);
    f = std::string(abs);
  }
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  for (const std::string &f : files) {
    auto buf = llvm::MemoryBuffer::getFile(f, /*IsText=*/false, /*RequiresNullTerminator=*/false);
    if (!buf) {
      llvm::errs() << f << ": " << buf.getError().message() << "\n";
      return 2;
    }
    llvm::outs() << "replay " << f << "\n";
    llvm::outs().flush();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>((*buf)->getBufferStart()), (*buf)->getBufferSize());
  }
  llvm::outs() << files.size() << " input(s) replayed without a crash\n";
  return 0;
}
