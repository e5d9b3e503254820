// What graphlint says when a rule could not run or the input is not a model
// at all (issue 16), and which source files the text reporter may read for
// its snippets (src/engine/SourceLines.cpp).
#include "TestSupport.h"

#include "graphlint/engine/SourceLines.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::vector<std::string> hintsOf(const std::string &path) {
  CliResult r = runCli({"--format", "json", path});
  auto doc = llvm::json::parse(r.out);
  EXPECT_TRUE(static_cast<bool>(doc)) << r.out;
  std::vector<std::string> out;
  if (!doc)
    return out;
  const llvm::json::Object *file = (*doc->getAsObject()->getArray("files"))[0].getAsObject();
  for (const llvm::json::Value &h : *file->getArray("hints"))
    out.push_back(h.getAsString()->str());
  return out;
}

}  // namespace

TEST(Hints, APythonFilePointsAtTheExporter) {
  std::string dir = tempDir();
  writeFile(dir + "/model.py", "import torch\n\nclass M(torch.nn.Module):\n    pass\n");
  CliResult r = runCli({"--no-color", dir + "/model.py"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.out.find(dir + "/model.py: fatal: is Python source, not a model: export it first with "
                             "`graphlint-export model.py -o model.fx.json [--train]`"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("protobuf"), std::string::npos) << r.out;
  // Recognised by content too (a script without the extension).
  writeFile(dir + "/train", "#!/usr/bin/env python3\nimport torch\n");
  r = runCli({"--no-color", dir + "/train"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.out.find("is Python source, not a model"), std::string::npos) << r.out;
}

TEST(Hints, ForwardOnlyExportCannotCheckSavedTensors) {
  auto forward = hintsOf(sourcePath("tests/fixtures/fx/layers.fx.json"));
  ASSERT_EQ(forward.size(), 1u);  // exported with --device cuda: no GL111 hint
  EXPECT_NE(forward[0].find("GL132 (inplace-on-saved-tensor) could not run: this is a forward-only export"),
            std::string::npos);
  EXPECT_NE(forward[0].find("graphlint-export --train"), std::string::npos);
  // A --train export on the CPU: GL132 ran, GL111 could not see a device.
  auto train = hintsOf(sourcePath("tests/fixtures/fx/saved.fx.json"));
  ASSERT_EQ(train.size(), 1u);
  EXPECT_NE(train[0].find("GL111 (cross-device) saw every tensor on one CPU device"), std::string::npos);
  EXPECT_NE(train[0].find("--device cuda"), std::string::npos);
  // Disabled rules give no hint; ONNX files none at all.
  CliResult r = runCli({"--no-color", "--ignore", "GL132", sourcePath("tests/fixtures/fx/layers.fx.json")});
  EXPECT_EQ(r.out.find("hint:"), std::string::npos) << r.out;
  EXPECT_TRUE(hintsOf(sourcePath("models/resnet18.onnx")).empty());
}

TEST(SourceLines, OnlyRelativePathsInsideTheModelsFoldersAreRead) {
  std::string root = tempDir();
  std::string models = root + "/proj/models";
  llvm::sys::fs::create_directories(models);
  writeFile(models + "/net.py", "import torch\n    y = x.relu_()\t# tab\x1b[31m\n");
  writeFile(root + "/secret.py", "password = 'hunter2'\n");
  FileReport r;
  r.path = models + "/m.fx.json";
  auto at = [&](const std::string &file, unsigned line) {
    Diagnostic d;
    d.location.source.file = file;
    d.location.source.line = line;
    r.diagnostics.push_back(d);
  };
  at("net.py", 2);
  at("../../secret.py", 1);          // climbs out of the folder
  at(root + "/secret.py", 1);        // absolute: a library frame, never read
  at("net.py", 99);                  // past the end
  attachSourceLines(r);
  ASSERT_EQ(r.sourceLines.size(), 1u);
  // Tabs become one space (the caret counts characters), escapes are dropped.
  EXPECT_EQ(r.sourceLines.begin()->second, "    y = x.relu_() # tab[31m");
}
