// Case 18 (security): verify reads weights only through the importer's
// external-data resolver, and refuses to run on a model whose import refused
// a path. The hostile neighbours of ../shared/robustness/cases/18 are rebuilt
// here: a symlink to /etc/passwd, a FIFO (opening it would block), /dev/zero,
// absolute and '../..' locations. A run that opened the FIFO would hang: each
// runs under a deadline.
#include "TestSupport.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>

#include <sys/stat.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string hostileDir() {
  std::string dir = tempDir() + "/models";
  llvm::sys::fs::create_directories(dir);
  for (const char *name : {"absolute", "devzero", "dotdot_deep", "fifo", "symlink"})
    writeFile(dir + "/" + name + ".onnx",
              readFile(sourcePath(std::string("tests/fixtures/robustness/extdata_") + name + ".onnx")));
  EXPECT_FALSE(llvm::sys::fs::create_link("/etc/passwd", dir + "/link_out"));
  EXPECT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  return dir;
}

TEST(VerifyExternalData, Case18RefusedPathsStopVerifyBeforeAnythingIsOpened) {
  std::string dir = hostileDir();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"absolute", "names an absolute external data path '/etc/passwd'; refused"},
      {"dotdot_deep", "escapes the model's directory; refused"},
      {"symlink", "'link_out' resolves outside the model's directory (symlink); refused"},
      {"devzero", "names an absolute external data path '/dev/zero'; refused"},
      {"fifo", "external data path 'fifo' is not a regular file; refused"},
  };
  for (const auto &[name, why] : cases) {
    std::string model = dir + "/" + name + ".onnx";
    for (bool random : {false, true}) {
      std::vector<std::string> args{"verify", "--device", "cpu", model, "--format", "json"};
      if (random)
        args.push_back("--random-weights");
      CliResult r = runCliTimed(args, 20);
      ASSERT_NE(r.exitCode, -2) << name << ": verify hung (it opened the external data)";
      EXPECT_EQ(r.exitCode, 2) << name << r.out << r.err;
      EXPECT_EQ(r.out, "") << name;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_EQ(r.err.rfind(model + ": error: verify: refusing to run on a model with unsafe external data: ", 0), 0u)
          << r.err;
      EXPECT_NE(r.err.find(why), std::string::npos) << "want '" << why << "' in " << r.err;
    }
  }
}

// The resolver still lets verify read weights that sit next to the model.
TEST(VerifyExternalData, WeightsInsideTheFolderAreRead) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, float[2] w = {1.0, 2.0}) => (float[2] y) {
      y = Add(x, w)
    })")));
  auto *t = m.mutable_graph()->mutable_initializer(0);
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair<const char *, const char *>{"location", "sub/w.bin"}, {"offset", "0"}, {"length", "8"}}) {
    auto *e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  std::string dir = tempDir();
  llvm::sys::fs::create_directories(dir + "/sub");
  writeFile(dir + "/m.onnx", m.SerializeAsString());
  float w[2] = {1.0f, 2.0f};
  writeFile(dir + "/sub/w.bin", std::string(reinterpret_cast<const char *>(w), sizeof w));
  CliResult r = runCliTimed({"verify", "--device", "cpu", dir + "/m.onnx", "--format", "json"}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"complete\": true"), std::string::npos) << r.out;
  // Truncated weights: a one-line error naming the file, not a crash.
  writeFile(dir + "/sub/w.bin", std::string(4, '\0'));
  r = runCliTimed({"verify", "--device", "cpu", dir + "/m.onnx"}, 60);
  EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("external data 'sub/w.bin': has 4 bytes, fewer than offset 0 + 8 bytes"), std::string::npos)
      << r.err;
}

}  // namespace
