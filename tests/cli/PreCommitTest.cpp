// The pre-commit hook end to end: `pre-commit try-repo` runs the hook that
// .pre-commit-hooks.yaml defines (language: system, so the graphlint built
// here is put first on PATH) over files of a throwaway git repository. A clean
// model passes, a model with a dangling input fails with its GL001 line, and a
// Git LFS pointer committed in place of a model fails with the LFS message.
// Skips when Debian's `pre-commit` is not installed.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <cstdlib>
#include <string>
#include <sys/wait.h>

using namespace graphlint::test;

namespace {

std::string quote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Shell {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

/// Runs `cmd` with /bin/sh in `cwd`, with `env` prefixed (already quoted).
Shell sh(const std::string &cwd, const std::string &cmd, const std::string &env = "") {
  std::string log = tempDir() + "/log";
  std::string full = "cd " + quote(cwd) + " && " + (env.empty() ? "" : "env " + env + " ") + cmd + " > " +
                     quote(log) + " 2>&1 < /dev/null";
  int status = std::system(full.c_str());
  Shell r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = readFile(log);
  return r;
}

class PreCommit : public ::testing::Test {
protected:
  void SetUp() override {
    if (!llvm::sys::findProgramByName("pre-commit"))
      GTEST_SKIP() << "pre-commit is not on PATH (apt-get install pre-commit); skipping the hook test";
    if (!llvm::sys::findProgramByName("git"))
      GTEST_SKIP() << "git is not on PATH; skipping the hook test";

    std::string home = tempDir();
    llvm::SmallString<256> cliDir(GRAPHLINT_CLI);
    llvm::sys::path::remove_filename(cliDir);
    const char *path = std::getenv("PATH");
    env_ = "HOME=" + quote(home) + " PRE_COMMIT_HOME=" + quote(home + "/pre-commit-cache") +
           " PRE_COMMIT_COLOR=never GIT_CONFIG_NOSYSTEM=1 PATH=" +
           quote(std::string(cliDir.str()) + ":" + (path ? path : "/usr/bin:/bin"));

    // The hook repository: the working tree's .pre-commit-hooks.yaml, committed
    // in a repository of its own so the test neither depends on what is
    // committed in the source tree nor touches its (shared) index.
    hooks_ = tempDir();
    writeFile(hooks_ + "/.pre-commit-hooks.yaml", readFile(sourcePath(".pre-commit-hooks.yaml")));
    git(hooks_, "add .pre-commit-hooks.yaml && git commit -q -m hooks");

    // The user's repository with the models to lint.
    work_ = tempDir();
    git(work_, "status -s");
  }

  void git(const std::string &dir, const std::string &cmd) {
    if (!llvm::sys::fs::exists(dir + "/.git")) {
      Shell init = sh(dir, "git init -q && git config user.name graphlint-test && git config user.email test@graphlint.invalid "
                           "&& git config commit.gpgsign false", env_);
      ASSERT_EQ(init.exitCode, 0) << init.output;
    }
    Shell r = sh(dir, "git " + cmd, env_);
    ASSERT_EQ(r.exitCode, 0) << cmd << "\n" << r.output;
  }

  Shell tryRepo(const std::string &file) {
    Shell add = sh(work_, "git add -- " + quote(file), env_);
    EXPECT_EQ(add.exitCode, 0) << add.output;
    return sh(work_, "pre-commit try-repo " + quote(hooks_) + " graphlint --files " + quote(file), env_);
  }

  std::string env_, hooks_, work_;
};

TEST_F(PreCommit, CleanModelPasses) {
  writeFile(work_ + "/clean.onnx", onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 16] x, float[16, 8] w) => (float[N, 8] y) {
      h = MatMul(x, w)
      y = Relu(h)
    })"));
  Shell r = tryRepo("clean.onnx");
  EXPECT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("Passed"), std::string::npos) << r.output;
}

TEST_F(PreCommit, DanglingInputFailsWithGL001) {
  writeFile(work_ + "/bad.onnx", onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      y = Add(x, ghost)
    })"));
  Shell r = tryRepo("bad.onnx");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("Failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("- exit code: 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bad.onnx"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GL001"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'ghost'"), std::string::npos) << r.output;
}

TEST_F(PreCommit, GitLfsPointerFailsWithTheLfsMessage) {
  writeFile(work_ + "/model.onnx", "version https://git-lfs.github.com/spec/v1\n"
                                   "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
                                   "size 46827520\n");
  Shell r = tryRepo("model.onnx");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("- exit code: 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("is a Git LFS pointer file, not the model itself (run `git lfs pull` to fetch it)"),
            std::string::npos)
      << r.output;
}

}  // namespace
