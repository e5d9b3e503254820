// The reproducers of ../shared/robustness/cases for configuration, baselines,
// the hardware file, FX JSON, external data under verify and output paths
// (issue 12 part B), run as they were reported. Skipped when ../shared is
// absent; tests/cli/RobustFilesTest.cpp and VerifyExternalDataTest.cpp carry
// copies of the small inputs for a clone without it.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <functional>
#include <map>

#include <sys/stat.h>
#include <unistd.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

// A writable copy of one case folder (the shared one is read-only).
std::string caseCopy(const std::string &name) {
  std::string src = sharedPath("robustness/cases/" + name), dst = tempDir() + "/" + name;
  llvm::sys::fs::create_directories(dst);
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(src, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef file = llvm::sys::path::filename(it->path());
    if (file.endswith(".onnx") || file.endswith(".json") || file.endswith(".yaml"))
      writeFile(dst + "/" + file.str(), readFile(it->path()));
  }
  return dst;
}

struct CaseRun {
  std::vector<std::string> args;
  std::vector<std::string> env = {};
  int exitCode = 2;
  std::string message = {};  // part of the one stderr line
};

void expectCase(const std::string &name, const std::vector<CaseRun> &runs,
                const std::function<void(const std::string &)> &setup = {}) {
  if (!sharedAvailable() || !llvm::sys::fs::is_directory(sharedPath("robustness/cases/" + name)))
    GTEST_SKIP() << "../shared/robustness/cases/" << name << " is not available";
  std::string dir = caseCopy(name);
  if (setup)
    setup(dir);
  // Every input's bytes (size and mtime for the sparse giants).
  auto fingerprint = [](const std::string &path) {
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(path, st))
      return std::string("absent");
    if (st.getSize() > (64u << 20))
      return std::to_string(st.getSize()) + "@" +
             std::to_string(st.getLastModificationTime().time_since_epoch().count());
    return readFile(path);
  };
  std::map<std::string, std::string> before;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::sys::fs::is_regular_file(it->path()))
      before[it->path()] = fingerprint(it->path());
  llvm::SmallString<256> cwd;
  llvm::sys::fs::current_path(cwd);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  for (const CaseRun &run : runs) {
    CliResult r = runCliTimed(run.args, 30, run.env);
    std::string what = name + ": graphlint " + llvm::join(run.args, " ");
    ASSERT_NE(r.exitCode, -2) << what << " hung";
    EXPECT_EQ(r.exitCode, run.exitCode) << what << "\n" << r.out << r.err;
    if (run.exitCode == 2)
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n" << r.err;
    EXPECT_NE(r.err.find(run.message), std::string::npos) << what << ": want '" << run.message << "' in " << r.err;
  }
  ASSERT_EQ(chdir(cwd.c_str()), 0);
  for (const auto &[path, bytes] : before)
    EXPECT_TRUE(fingerprint(path) == bytes) << path << " was modified";
}

TEST(RobustnessIoCases, Case11DeepBaseline) {
  expectCase("11-sigsegv-baseline-deep-json",
             {{{"control_flow.onnx", "--baseline", "deep_baseline.json"}, {}, 2, "JSON nested deeper than 64 levels"}});
}

TEST(RobustnessIoCases, Case12DeepConfig) {
  // 1.2 MB: refused by the config size limit before the nesting scan.
  expectCase("12-sigsegv-config-deep-yaml",
             {{{"control_flow.onnx", "--config", "deep.yaml"}, {}, 2, "larger than the 1.00 MiB limit for config files"}});
}

TEST(RobustnessIoCases, Case13DeepHardwareFile) {
  expectCase("13-sigsegv-hardware-file-deep-yaml",
             {{{"control_flow.onnx"}, {"GRAPHLINT_HARDWARE_FILE=hw.yaml"}, 2, "YAML nested deeper than 64 levels"}});
}

TEST(RobustnessIoCases, Case14HugeJson) {
  expectCase("14-sigabrt-huge-json-file",
             {{{"huge.fx.json", "--format", "json"}, {}, 2, "larger than the 1.00 GiB limit for FX graphs"},
              {{"big3g.fx.json", "--format", "json"}, {}, 2, "larger than the 1.00 GiB limit for FX graphs"}},
             [](const std::string &dir) {
               for (auto [file, size] : {std::pair<const char *, uint64_t>{"huge.fx.json", 40ull << 30},
                                         {"big3g.fx.json", 3ull << 30}}) {
                 std::string p = dir + "/" + file;
                 writeFile(p, "{");
                 ASSERT_EQ(truncate(p.c_str(), static_cast<off_t>(size)), 0);
               }
             });
}

TEST(RobustnessIoCases, Case15Glob) {
  expectCase("15-hang-glob-per-node-ignores", {{{"model.onnx", "--config", "glob.yaml", "--format", "gcc"}, {}, 1, ""}});
}

TEST(RobustnessIoCases, Case18VerifyExternalData) {
  std::vector<CaseRun> runs;
  for (const char *m : {"absolute.onnx", "dotdot_deep.onnx", "symlink.onnx", "devzero.onnx", "fifo.onnx"})
    runs.push_back({{"verify", "--device", "cpu", m, "--format", "json"}, {}, 2,
                    "refusing to run on a model with unsafe external data"});
  expectCase("18-verify-reads-external-data-outside-model-dir", runs, [](const std::string &dir) {
    ASSERT_FALSE(llvm::sys::fs::create_link("/etc/passwd", dir + "/link_out"));
    ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  });
}

TEST(RobustnessIoCases, Case22OutputOntoTheModel) {
  std::vector<CaseRun> runs;
  for (const char *flag : {"-o", "--emit-dot", "--memory-plot", "--write-baseline"})
    runs.push_back({{"resnet18.onnx", flag, "resnet18.onnx"}, {}, 2, "refusing to write"});
  runs.push_back({{"verify", "--device", "cpu", "--random-weights", "resnet18.onnx", "-o", "resnet18.onnx"}, {}, 2,
                  "refusing to write --output"});
  runs.push_back({{"inspect", "resnet18.onnx", "--emit-dot", "resnet18.onnx"}, {}, 2, "refusing to write --emit-dot"});
  expectCase("22-output-path-overwrites-input", runs);
}

TEST(RobustnessIoCases, Case24DevZero) {
  expectCase("24-hang-devzero-config-baseline",
             {{{"control_flow.onnx", "--config", "/dev/zero"}, {}, 2, "is a character device, not a regular file"},
              {{"control_flow.onnx", "--baseline", "/dev/zero"}, {}, 2, "is a character device, not a regular file"}});
}

TEST(RobustnessIoCases, Case25OneLineMessages) {
  expectCase("25-poor-multiline-error-messages",
             {{{"control_flow.onnx", "--config", "cfg.yaml"}, {}, 2, "unknown key '<17 bytes, not shown>'"},
              {{"fx_newline.fx.json", "--format", "json"}, {}, 2, "is not a qualified op name"}});
}

}  // namespace
