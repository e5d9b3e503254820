// Snapshot tests of every output format (text without colour, gcc, json, sarif,
// github) over
// fixture models that produce GL001-GL004 findings. The goldens are what a
// user sees; review their diff when a change alters them:
//
//   GRAPHLINT_UPDATE_GOLDENS=1 build/tests/graphlint_golden_tests --gtest_filter='ReporterGolden.*'
//   git diff tests/golden/
//
// Fixtures are ONNX textual syntax (tests/fixtures/*.onnxtxt), serialised to a
// temp dir at test time; paths in the output are rewritten to be relative to
// the repository root so the goldens do not depend on where the build runs.
#include "TestSupport.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/unknown_field_set.h>

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>

#include <cstdlib>
#include <sstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

void replaceAll(std::string &s, const std::string &from, const std::string &to) {
  if (from.empty())
    return;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// Builds the fixture models into one directory and maps it back to
// tests/fixtures in the output.
class GoldenFixtures {
public:
  GoldenFixtures() : dir_(tempDir() + "/fixtures") {
    llvm::sys::fs::create_directories(dir_);
    for (const char *name : {"invalid_graph", "custom_op", "clean"}) {
      std::string bytes = onnxFromText(readFile(sourcePath(std::string("tests/fixtures/") + name + ".onnxtxt")));
      if (std::string(name) == "custom_op")
        bytes = withSourceTrace(bytes);
      std::string path = dir_ + "/" + name + ".onnx";
      writeFile(path, bytes);
      files_.push_back(path);
    }
    // A real export whose weights are external and absent: GL004.
    files_.push_back(sourcePath("models/resnet18.onnx"));
    // A file that cannot be linted at all.
    writeFile(dir_ + "/empty.onnx", "");
    files_.push_back(dir_ + "/empty.onnx");
  }

  const std::vector<std::string> &files() const { return files_; }

  std::string normalise(std::string out) const {
    // SARIF URIs: relative to the current directory when under it, else file://.
    llvm::SmallString<256> cwd;
    if (!llvm::sys::fs::current_path(cwd)) {
      std::string prefix = std::string(cwd) + "/";
      for (const std::string &abs : {dir_ + "/", sourcePath("")})
        if (abs.rfind(prefix, 0) == 0 && abs.size() > prefix.size())
          replaceAll(out, "\"uri\": \"" + abs.substr(prefix.size()),
                     "\"uri\": \"" + std::string(abs == dir_ + "/" ? "tests/fixtures/" : ""));
    }
    replaceAll(out, "file://" + dir_ + "/", "tests/fixtures/");
    replaceAll(out, "file://" + sourcePath(""), "");
    replaceAll(out, dir_ + "/", "tests/fixtures/");
    replaceAll(out, sourcePath(""), "");
    replaceAll(out, std::string("\"") + GRAPHLINT_VERSION + "\"", "\"<version>\"");
    return out;
  }

private:
  // The first FancyNorm node carries a torch.onnx stack trace (metadata_props,
  // NodeProto field 9, written as an unknown field for the installed ONNX).
  static std::string withSourceTrace(const std::string &bytes) {
    onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromString(bytes));
    onnx::NodeProto *n = m.mutable_graph()->mutable_node(0);
    n->set_name("/encoder/norm/FancyNorm");
    onnx::StringStringEntryProto kv;
    kv.set_key("pkg.torch.onnx.stack_trace");
    kv.set_value("File \"model.py\", line 12, in forward\n    y = self.norm(x)");
    n->GetReflection()->MutableUnknownFields(n)->AddLengthDelimited(9, kv.SerializeAsString());
    return m.SerializeAsString();
  }

  std::string dir_;
  std::vector<std::string> files_;
};

std::string lint(const GoldenFixtures &fx, std::vector<std::string> args, int wantExit) {
  args.insert(args.end(), fx.files().begin(), fx.files().end());
  CliResult r = runCli(args);
  EXPECT_EQ(r.exitCode, wantExit) << r.out << r.err;
  std::string out = r.out;
  if (!r.err.empty())
    out += "--- stderr ---\n" + r.err;
  return fx.normalise(out);
}

TEST(ReporterGolden, Text) {
  GoldenFixtures fx;
  expectGolden("lint.text.golden", lint(fx, {"--no-color"}, 2));
}

TEST(ReporterGolden, Gcc) {
  GoldenFixtures fx;
  expectGolden("lint.gcc.golden", lint(fx, {"--format", "gcc"}, 2));
}

TEST(ReporterGolden, Json) {
  GoldenFixtures fx;
  expectGolden("lint.json.golden", lint(fx, {"--format", "json"}, 2));
}

TEST(ReporterGolden, Sarif) {
  GoldenFixtures fx;
  expectGolden("lint.sarif.golden", lint(fx, {"--format", "sarif"}, 2));
}

TEST(ReporterGolden, Github) {
  GoldenFixtures fx;
  expectGolden("lint.github.golden", lint(fx, {"--format", "github"}, 2));
}

TEST(ReporterGolden, EveryRuleAppears) {
  // The fixtures are chosen to exercise every foundation rule; if one stops
  // firing, the goldens lose coverage silently.
  GoldenFixtures fx;
  std::string out = lint(fx, {"--no-color"}, 2);
  // GL004 on a bundled model is a note: its metadata says the weights were
  // stripped on purpose (a missing file without it is a warning: BadInputTest).
  for (const char *code : {"error[GL001]", "warning[GL002]", "warning[GL003]", "note[GL004]"})
    EXPECT_NE(out.find(code), std::string::npos) << code;
}

TEST(ReporterGolden, RulesCatalogue) {
  CliResult r = runCli({"rules"});
  EXPECT_EQ(r.exitCode, 0);
  expectGolden("rules.text.golden", r.out);
}

}  // namespace
