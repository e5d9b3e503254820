// Issue 40 ("Hostile inputs, round two"): the disclosure, trust and data-loss
// classes, as a user sees them. Each test builds its reproducer from
// ../shared/robustness/round2/cases (the case named in the test) and checks
// the message, the exit code and that no secret byte or changed input is left.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string fixture(const std::string &name) { return sourcePath("tests/fixtures/robustness/" + name); }

size_t lines(const std::string &s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

std::string modelCopy(const std::string &dir, const std::string &name = "model.onnx") {
  std::string path = dir + "/" + name;
  writeFile(path, readFile(fixture("control_flow.onnx")));
  return path;
}

constexpr const char *kSecret = "root:$6$THIS-IS-THE-SECRET:19000:0:99999:7:::\n";

// config-symlink-discloses-file: a discovered .graphlint.yaml symlinked out
// of the repository is passed over with a warning, and an explicit --config
// naming a non-config file does not print its content.
TEST(HostileInputs, ConfigSymlinkedOutOfTheRepositoryIsNotReadNorEchoed) {
  std::string top = tempDir(), repo = top + "/repo";
  llvm::sys::fs::create_directories(repo + "/.git");
  std::string model = modelCopy(repo);
  writeFile(top + "/shadow", kSecret);
  ASSERT_FALSE(llvm::sys::fs::create_link(top + "/shadow", repo + "/.graphlint.yaml"));
  CliResult r = runCliTimed({model}, 20);
  EXPECT_NE(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("graphlint: warning: ignoring config file '" + repo +
                       "/.graphlint.yaml': it is a symlink that resolves outside '" + repo + "'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("SECRET"), std::string::npos) << r.out;

  r = runCliTimed({model, "--config", top + "/shadow"}, 20);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(top + "/shadow:1:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("SECRET"), std::string::npos) << r.err;
}

// config-discovered-from-foreign-parent: discovery stops at the repository's
// top level; outside one, a config in a world-writable directory is passed
// over with one warning line.
TEST(HostileInputs, ConfigAboveTheRepositoryOrInAWorldWritableDirectoryIsIgnored) {
  std::string shared = tempDir() + "/shared_tmp", repo = shared + "/ci/repo";
  llvm::sys::fs::create_directories(repo + "/.git");
  std::string model = modelCopy(repo);
  writeFile(shared + "/.graphlint.yaml", "select: [GL005]\nfail-on: never\n");
  ASSERT_EQ(chmod(shared.c_str(), 01777), 0);
  CliResult r = runCliTimed({"config", "--dump", model}, 20);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("# config file: none (built-in defaults)"), std::string::npos) << r.out;

  // No repository: the walk goes on up, and passes the untrusted file over.
  llvm::sys::fs::remove(repo + "/.git");
  r = runCliTimed({"config", "--dump", model}, 20);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("# config file: none (built-in defaults)"), std::string::npos) << r.out;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("ignoring config file '" + shared + "/.graphlint.yaml': its directory '" + shared +
                       "' is writable by every user"),
            std::string::npos)
      << r.err;
}

TEST(HostileInputs, NoConfigAndIsolatedIgnoreConfigFilesAndTheHardwareFile) {
  std::string dir = tempDir(), model = modelCopy(dir);
  writeFile(dir + "/.graphlint.yaml", "fail-on: never\n");
  CliResult r = runCliTimed({"config", "--dump", model}, 20);
  EXPECT_NE(r.out.find("fail-on: never"), std::string::npos) << r.out;
  for (const char *flag : {"--no-config", "--isolated"}) {
    r = runCliTimed({"config", "--dump", model, flag}, 20);
    EXPECT_EQ(r.exitCode, 0) << flag << r.err;
    EXPECT_NE(r.out.find("# config file: none (built-in defaults)"), std::string::npos) << flag << r.out;
    EXPECT_NE(r.out.find("fail-on: error"), std::string::npos) << flag << r.out;
  }
  // --isolated: a broken GRAPHLINT_HARDWARE_FILE is not even read.
  writeFile(dir + "/hw.yaml", "profiles: [\n");
  r = runCliTimed({model, "--no-config"}, 20, {"GRAPHLINT_HARDWARE_FILE=" + dir + "/hw.yaml"});
  EXPECT_EQ(r.exitCode, 2) << r.err;
  r = runCliTimed({model, "--isolated"}, 20, {"GRAPHLINT_HARDWARE_FILE=" + dir + "/hw.yaml"});
  EXPECT_NE(r.exitCode, 2) << r.err;
  r = runCliTimed({model, "--isolated", "--config", dir + "/.graphlint.yaml"}, 20);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("graphlint: --config cannot be combined with --isolated"), std::string::npos) << r.err;
}

// response-files-unguarded: @FILE goes through the input reader.
TEST(HostileInputs, ResponseFilesAreCheckedAndNeverNested) {
  std::string dir = tempDir(), model = modelCopy(dir);
  std::string nested = dir + "/lint.rsp", fifo = dir + "/fifo.rsp", ok = dir + "/ok.rsp";
  writeFile(nested, model + "\n@/etc/passwd\n");
  CliResult r = runCliTimed({"@" + nested}, 20);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.err, "graphlint: response file '" + nested +
                       "' line 2: names another response file (@FILE inside a response file is not expanded)\n");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  r = runCliTimed({"@" + fifo}, 20);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.err, "graphlint: " + fifo + ": is a FIFO (named pipe), not a regular file (response files must be regular files)\n");
  r = runCliTimed({"@/dev/zero"}, 20);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  writeFile(dir + "/binary.rsp", std::string("model.onnx\0\x1b[2J", 15));
  r = runCliTimed({"@" + dir + "/binary.rsp"}, 20);
  EXPECT_EQ(r.err, "graphlint: response file '" + dir + "/binary.rsp': is not a text file of arguments\n");
  writeFile(ok, "'" + model + "' --format gcc\n");
  r = runCliTimed({"@" + ok}, 20);
  EXPECT_NE(r.exitCode, 2) << r.err;
  EXPECT_NE(r.out.find(model + ":"), std::string::npos) << r.out;
}

// source-snippet-reads-outside: a recorded source file resolved against the
// current directory, or a symlink beside the model leading out, shows no line.
TEST(HostileInputs, SnippetsAreReadOnlyInsideTheModelsRepository) {
  std::string src = fixture("round2/cases/source-snippet-reads-outside/model/secret_link.pt2");
  std::string dir = tempDir(), model = dir + "/model/secret_link.pt2";
  llvm::sys::fs::create_directories(dir + "/model");
  writeFile(model, readFile(src));
  writeFile(dir + "/secret.txt", kSecret);
  ASSERT_FALSE(llvm::sys::fs::create_link(dir + "/secret.txt", dir + "/model/notes.py"));
  CliResult r = runCliTimed({model}, 20);
  EXPECT_NE(r.out.find("notes.py:1: warning[GL141]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("SECRET"), std::string::npos) << r.out;
  // A regular notes.py inside the folder is shown.
  llvm::sys::fs::remove(dir + "/model/notes.py");
  writeFile(dir + "/model/notes.py", "y = self.fc2(x)\n");
  r = runCliTimed({model}, 20);
  EXPECT_NE(r.out.find(" 1 | y = self.fc2(x)"), std::string::npos) << r.out;
}

// outputs-clobber-each-other and output-overwrites-external-data.
TEST(HostileInputs, OutputsMayNeitherMeetNorReplaceExternalData) {
  std::string dir = tempDir(), out = dir + "/out.txt";
  std::string model = fixture("round2/cases/output-overwrites-external-data/model.onnx");
  std::string copy = dir + "/model.onnx", weights = dir + "/weights.bin";
  writeFile(copy, readFile(model));
  std::string bytes = readFile(fixture("round2/cases/output-overwrites-external-data/weights.bin"));
  writeFile(weights, bytes);
  for (const char *flag : {"-o", "--emit-dot", "--memory-plot", "--write-baseline"}) {
    CliResult r = runCliTimed({copy, flag, weights}, 20);
    EXPECT_EQ(r.exitCode, 2) << flag;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("it is the external data file '" + weights + "' this run reads"), std::string::npos)
        << r.err;
  }
  EXPECT_TRUE(readFile(weights) == bytes);
  CliResult r = runCliTimed({copy, "-o", out, "--emit-dot", out, "--memory-plot", out}, 20);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.err, "graphlint: refusing to write --emit-dot '" + out + "': --output writes the same file '" + out +
                       "' (one output would replace the other)\n");
  EXPECT_FALSE(llvm::sys::fs::exists(out));
}

// terminal-escapes-in-names: a node named "mm\r\e[2K..." is escaped in text
// and gcc output.
TEST(HostileInputs, ControlCharactersInNamesAreEscaped) {
  std::string esc = fixture("round2/cases/terminal-escapes-in-names/esc.onnx");
  for (const char *format : {"text", "gcc", "github"}) {
    CliResult r = runCliTimed({esc, "--format", format, "--color", "never"}, 20);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << format;
    EXPECT_EQ(r.out.find('\r'), std::string::npos) << format;
    EXPECT_NE(r.out.find("mm\\r\\x1b[2K\\x1b]0;PWNED\\x07"), std::string::npos) << format << r.out;
  }
}

// A model file's own name is the user's bytes too: shown escaped in every
// text-like format, for a lint and for a file that cannot be read.
TEST(HostileInputs, ControlCharactersInFileNamesAreEscaped) {
  std::string dir = tempDir();
  std::string model = modelCopy(dir, "a\r\x1b[2Kb.onnx");
  std::string missing = dir + "/gone\x1b]0;PWNED\x07.onnx";
  for (const char *format : {"text", "gcc", "github"}) {
    for (const std::string &path : {model, missing}) {
      CliResult r = runCliTimed({path, "--format", format, "--color", "never", "--memory", "--fusion"}, 20);
      std::string all = r.out + r.err;
      EXPECT_EQ(all.find('\x1b'), std::string::npos) << format << all;
      EXPECT_EQ(all.find('\r'), std::string::npos) << format << all;
      EXPECT_EQ(all.find('\x07'), std::string::npos) << format << all;
    }
  }
  CliResult r = runCliTimed({model, "--color", "never"}, 20);
  EXPECT_NE(r.out.find("a\\r\\x1b[2Kb.onnx: "), std::string::npos) << r.out;
}

}  // namespace
