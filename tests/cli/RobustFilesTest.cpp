// Issue 12, part B: configuration, baselines, the hardware file, FX JSON and
// every output path. Each test is a reproducer from ../shared/robustness/cases
// (the number in its name), built here: one line naming the file and the
// problem, exit 2, never a crash, a hang or a changed input.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string fixture(const std::string &name) { return sourcePath("tests/fixtures/robustness/" + name); }

std::string repeat(const std::string &s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

size_t lines(const std::string &s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// A model in a fresh directory (no .graphlint.yaml above it to pick up).
std::string modelCopy(const std::string &dir, const std::string &name = "model.onnx") {
  std::string path = dir + "/" + name;
  writeFile(path, readFile(fixture("control_flow.onnx")));
  return path;
}

// Exit 2 with exactly one stderr line that contains `want`.
void expectOneLineError(const CliResult &r, const std::string &want) {
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(want), std::string::npos) << "expected '" << want << "' in: " << r.err;
}

TEST(RobustFiles, Case11DeepBaselineJsonIsRefusedInOneLine) {
  std::string dir = tempDir(), model = modelCopy(dir), baseline = dir + "/deep.json";
  writeFile(baseline, "{\"graphlint_baseline\": 2, \"findings\": " + repeat("[", 40000) + repeat("]", 40000) + "}");
  expectOneLineError(runCliTimed({model, "--baseline", baseline}, 60),
                     baseline + ":1: JSON nested deeper than 64 levels; refused");
}

TEST(RobustFiles, Case12DeepConfigYamlIsRefusedInOneLine) {
  std::string dir = tempDir(), model = modelCopy(dir), config = dir + "/deep.yaml";
  writeFile(config, "rules: {GL001: " + repeat("[", 300000) + repeat("]", 300000) + "}\n");
  expectOneLineError(runCliTimed({model, "--config", config}, 60),
                     config + ":1: YAML nested deeper than 64 levels; refused");
  // Also when the file is discovered next to the model.
  writeFile(dir + "/.graphlint.yaml", "select: [ALL]\nrules:\n  GL001:\n" + repeat("  ", 1) + repeat("- ", 100000) + "x\n");
  expectOneLineError(runCliTimed({model}, 60), ".graphlint.yaml:4: YAML nested deeper than 64 levels; refused");
}

TEST(RobustFiles, Case13DeepHardwareFileIsRefusedInOneLine) {
  std::string dir = tempDir(), model = modelCopy(dir), hw = dir + "/hw.yaml";
  writeFile(hw, "profiles: " + repeat("[", 100000) + repeat("]", 100000) + "\n");
  CliResult r = runCliTimed({model, "--target", "H100"}, 60, {"GRAPHLINT_HARDWARE_FILE=" + hw});
  expectOneLineError(r, hw + ":1: YAML nested deeper than 64 levels; refused");
}

// A command line is bytes: a -D name that is not UTF-8 is echoed in the
// "binds nothing" warning, which the JSON report must still carry as UTF-8
// (the argv fuzzer's abort: llvm::json asserts on invalid UTF-8).
TEST(RobustFiles, ADimNameThatIsNotUtf8KeepsTheJsonReportValid) {
  CliResult r = runCli({sourcePath("tests/fixtures/fx/symbolic_v2.fx.json"), "-D", "ba\xf4tch=8", "--format", "json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(r.out);
  ASSERT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_NE(r.out.find("-D ba\\\\xF4tch=8 binds nothing"), std::string::npos) << r.out;
}

// A malformed user hardware file is its own error, not "unknown target" for
// the profile it was meant to define.
TEST(RobustFiles, MalformedHardwareFileIsNamedBeforeTheTargetItDefines) {
  std::string dir = tempDir(), model = modelCopy(dir), hw = dir + "/hw.yaml";
  writeFile(hw, "targets:\n  B200:\n    peak: [oops\n");
  CliResult r = runCliTimed({model, "--target", "B200"}, 60, {"GRAPHLINT_HARDWARE_FILE=" + hw});
  expectOneLineError(r, hw + ": line 3: Could not find closing ]!");
  EXPECT_EQ(r.err.find("unknown target"), std::string::npos) << r.err;
}

TEST(RobustFiles, Case14HugeJsonLookingFileIsRefusedBeforeReading) {
  std::string dir = tempDir(), path = dir + "/huge.fx.json";
  writeFile(path, "{");
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(40ull << 30)), 0);  // sparse: no disk used
  CliResult r = runCliTimed({path, "--format", "json"}, 30);
  unlink(path.c_str());
  expectOneLineError(r, path + ": error: is a 40.00 GiB JSON file, larger than the 1.00 GiB limit for FX graphs");
}

TEST(RobustFiles, Case14OversizedConfigAndBaselineAreRefused) {
  std::string dir = tempDir(), model = modelCopy(dir), config = dir + "/big.yaml", baseline = dir + "/big.json";
  writeFile(config, "select: [ALL]\n");
  ASSERT_EQ(truncate(config.c_str(), static_cast<off_t>(2ull << 20)), 0);
  expectOneLineError(runCliTimed({model, "--config", config}, 30),
                     config + ": is 2.00 MiB, larger than the 1.00 MiB limit for config files");
  writeFile(baseline, "{");
  ASSERT_EQ(truncate(baseline.c_str(), static_cast<off_t>(300ull << 20)), 0);
  expectOneLineError(runCliTimed({model, "--baseline", baseline}, 30),
                     baseline + ": is 300.00 MiB, larger than the 256.00 MiB limit for baselines");
}

TEST(RobustFiles, Case24DevicesAndFifosAsConfigOrBaselineAreRefusedWithoutBlocking) {
  std::string dir = tempDir(), model = modelCopy(dir), fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expectOneLineError(runCliTimed({model, "--config", "/dev/zero"}, 20),
                     "/dev/zero: is a character device, not a regular file (config files must be regular files)");
  expectOneLineError(runCliTimed({model, "--baseline", "/dev/zero"}, 20),
                     "/dev/zero: is a character device, not a regular file (baselines must be regular files)");
  expectOneLineError(runCliTimed({model, "--config", fifo}, 20), fifo + ": is a FIFO (named pipe), not a regular file");
  expectOneLineError(runCliTimed({model, "--baseline", fifo}, 20), fifo + ": is a FIFO (named pipe), not a regular file");
  expectOneLineError(runCliTimed({model}, 20, {"GRAPHLINT_HARDWARE_FILE=" + fifo}),
                     fifo + ": is a FIFO (named pipe), not a regular file (hardware files must be regular files)");
}

TEST(RobustFiles, Case15ManyStarGlobFinishesAndStillMatches) {
  std::string dir = tempDir();
  std::string model = dir + "/model.onnx", config = dir + "/glob.yaml";
  writeFile(model, readFile(fixture("glob_model.onnx")));
  writeFile(config, readFile(fixture("glob64.yaml")));
  CliResult r = runCliTimed({model, "--config", config, "--no-color"}, 20);
  ASSERT_NE(r.exitCode, -2) << "timed out";
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;  // the GL001 is not suppressed: the name has no 'b'
  EXPECT_NE(r.out.find("GL001"), std::string::npos) << r.out;
  // The same many-star pattern ending in 'a' matches and suppresses it.
  writeFile(config, "per-node-ignores: {\"" + repeat("*a", 11) + "*\": [GL001]}\n");
  r = runCliTimed({model, "--config", config, "--no-color"}, 20);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("suppressed"), std::string::npos) << r.out;
}

TEST(RobustFiles, Case25ConfigKeyWithANewlineIsOneLine) {
  std::string dir = tempDir(), model = modelCopy(dir), config = dir + "/cfg.yaml";
  writeFile(config, readFile(fixture("multiline_key.yaml")));
  CliResult r = runCliTimed({model, "--config", config}, 20);
  // Not a name-like token: described by its size, never quoted (issue 40).
  expectOneLineError(r, "unknown key '<17 bytes, not shown>'");
  // Nor is a very long value.
  writeFile(config, "fail-on: " + std::string(5000, 'k') + "\n");
  r = runCliTimed({model, "--config", config}, 20);
  expectOneLineError(r, "got '<5000 bytes, not shown>'");
  EXPECT_LT(r.err.size(), 400u) << r.err;
}

TEST(RobustFiles, Case25FxFieldWithANewlineIsOneLine) {
  std::string dir = tempDir(), path = dir + "/fx_newline.fx.json";
  writeFile(path, readFile(fixture("fx_newline.fx.json")));
  CliResult r = runCliTimed({path, "--format", "json"}, 20);
  // The op is U+2028 LINE SEPARATOR, which terminals show as a line break.
  expectOneLineError(r, "nodes[2].op: '\\u2028' is not a qualified op name");
}

// ---- case 22: outputs never overwrite inputs -------------------------------------

struct Victim {
  std::string dir, model, bytes;
  explicit Victim() : dir(tempDir()), model(modelCopy(dir, "victim.onnx")), bytes(readFile(model)) {}
  void expectIntact() const { EXPECT_TRUE(readFile(model) == bytes) << model << " was modified"; }
};

TEST(RobustFiles, Case22EveryOutputFlagOntoTheModelIsRefused) {
  const std::vector<std::vector<std::string>> runs = {
      {"-o"}, {"--output"}, {"--emit-dot"}, {"--memory-plot"}, {"--write-baseline"}};
  for (const auto &flag : runs) {
    Victim v;
    CliResult r = runCliTimed({v.model, flag[0], v.model}, 60);
    std::string shown = flag[0] == "-o" ? "--output" : flag[0];
    expectOneLineError(r, "refusing to write " + shown + " '" + v.model + "': it is the model '" + v.model +
                              "' this run reads (the output would overwrite it)");
    EXPECT_EQ(r.out, "") << "nothing is linted before the refusal";
    v.expectIntact();
  }
  Victim v;
  expectOneLineError(runCliTimed({"inspect", v.model, "--emit-dot", v.model}, 60), "refusing to write --emit-dot");
  expectOneLineError(runCliTimed({"verify", "--device", "cpu", "--random-weights", v.model, "-o", v.model}, 60),
                     "refusing to write --output");
  v.expectIntact();
}

TEST(RobustFiles, Case22AliasesOfTheModelAndOtherInputsAreRefused) {
  Victim v;
  ASSERT_FALSE(llvm::sys::fs::create_link(v.model, v.dir + "/link.txt"));
  llvm::sys::fs::create_directory(v.dir + "/sub");
  for (const std::string &out : {v.dir + "/link.txt", v.dir + "/sub/../victim.onnx"})
    expectOneLineError(runCliTimed({v.model, "-o", out}, 60), "it is the model");
  std::string config = v.dir + "/.graphlint.yaml";
  writeFile(config, "select: [ALL]\n");
  expectOneLineError(runCliTimed({v.model, "-o", config}, 60), "it is the config file");
  EXPECT_EQ(readFile(config), "select: [ALL]\n");
  v.expectIntact();
}

TEST(RobustFiles, Case22RewritingTheAppliedBaselineIsAllowed) {
  Victim v;
  std::string baseline = v.dir + "/baseline.json";
  ASSERT_EQ(runCliTimed({v.model, "--write-baseline", baseline}, 60).exitCode, 0);
  CliResult r = runCliTimed({v.model, "--baseline", baseline, "--write-baseline", baseline}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(readFile(baseline).find("\"graphlint_baseline\": 2"), std::string::npos);
  v.expectIntact();
}

TEST(RobustFiles, OutputIsReplacedWholeOrNotAtAll) {
  Victim v;
  std::string report = v.dir + "/report.txt";
  writeFile(report, "previous report\n");
  // A run that fails before reporting (bad config) leaves the old report.
  writeFile(v.dir + "/bad.yaml", "nonsense: 1\n");
  expectOneLineError(runCliTimed({v.model, "--config", v.dir + "/bad.yaml", "-o", report}, 60), "unknown key");
  EXPECT_EQ(readFile(report), "previous report\n");
  CliResult r = runCliTimed({v.model, "-o", report, "--no-color"}, 60);
  EXPECT_LE(r.exitCode, 1) << r.err;
  EXPECT_NE(readFile(report).find("1 file checked"), std::string::npos) << readFile(report);
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(v.dir, ec), end; it != end && !ec; it.increment(ec))
    EXPECT_EQ(it->path().find(".graphlint-"), std::string::npos) << "left behind: " << it->path();
}

}  // namespace
