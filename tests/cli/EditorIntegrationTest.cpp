// tools/editors/vscode/tasks.json: its problem matcher is read from the file
// (after dropping // comment lines, which VS Code allows) and every
// `--format gcc` line graphlint prints for the bundled models, and for a model
// with an error, must match it with the file, line, column, severity and
// message in the groups the matcher names.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <regex>
#include <set>
#include <sstream>

using namespace graphlint::test;

namespace {

std::string stripLineComments(const std::string &text) {
  std::istringstream in(text);
  std::string out;
  for (std::string l; std::getline(in, l);) {
    size_t first = l.find_first_not_of(" \t");
    if (first != std::string::npos && l.compare(first, 2, "//") == 0)
      continue;
    out += l + "\n";
  }
  return out;
}

TEST(EditorIntegration, VsCodeProblemMatcherMatchesGccLines) {
  std::string text = readFile(sourcePath("tools/editors/vscode/tasks.json"));
  ASSERT_FALSE(text.empty());
  auto parsed = llvm::json::parse(stripLineComments(text));
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Array *tasks = parsed->getAsObject()->getArray("tasks");
  ASSERT_TRUE(tasks && !tasks->empty());

  const llvm::json::Object *task = nullptr;
  for (const llvm::json::Value &t : *tasks)
    if (t.getAsObject() && t.getAsObject()->getString("label") == llvm::StringRef("graphlint: lint models"))
      task = t.getAsObject();
  ASSERT_NE(task, nullptr) << "no task labelled 'graphlint: lint models'";
  auto command = task->getString("command");
  ASSERT_TRUE(command);
  EXPECT_NE(command->str().find("graphlint --format gcc"), std::string::npos) << command->str();

  const llvm::json::Object *matcher = task->getObject("problemMatcher");
  ASSERT_NE(matcher, nullptr);
  EXPECT_EQ(matcher->getString("owner"), llvm::StringRef("graphlint"));
  const llvm::json::Array *loc = matcher->getArray("fileLocation");
  ASSERT_TRUE(loc && loc->size() == 2);
  EXPECT_EQ((*loc)[0].getAsString(), llvm::StringRef("relative"));
  EXPECT_EQ((*loc)[1].getAsString(), llvm::StringRef("${workspaceFolder}"));

  const llvm::json::Object *pattern = matcher->getObject("pattern");
  ASSERT_NE(pattern, nullptr);
  auto regexp = pattern->getString("regexp");
  ASSERT_TRUE(regexp);
  auto group = [&](const char *name) { return pattern->getInteger(name).getValueOr(-1); };
  int64_t file = group("file"), line = group("line"), column = group("column"), severity = group("severity"),
          message = group("message");
  for (int64_t g : {file, line, column, severity, message})
    ASSERT_TRUE(g >= 1 && g <= 5) << "a pattern group is missing or out of range";
  const std::regex re(regexp->str());

  std::string invalid = tempDir() + "/invalid.onnx";
  writeFile(invalid, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      y = Add(x, ghost)
    })"));
  std::vector<std::string> inputs = {sourcePath("models/control_flow.onnx"), sourcePath("models/gpt_tiny.onnx"),
                                     sourcePath("models/mobilenet_v3_small.onnx"),
                                     sourcePath("models/resnet18.onnx"), invalid};
  std::vector<std::string> args = {"--format", "gcc"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  CliResult r = runCli(args);
  EXPECT_EQ(r.exitCode, 1) << r.err;

  std::istringstream out(r.out);
  std::set<std::string> files, severities;
  size_t count = 0;
  for (std::string l; std::getline(out, l); ++count) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(l, m, re)) << l;
    files.insert(m[file]);
    EXPECT_GE(std::stoul(m[line]), 1u) << l;
    EXPECT_GE(std::stoul(m[column]), 1u) << l;
    severities.insert(m[severity]);
    if (m[severity] != "note") {  // a finding ends with its code and name; its fix-it note does not
      EXPECT_TRUE(std::regex_search(std::string(m[message]), std::regex(R"( \[GL\d{3} [a-z0-9-]+\]$)"))) << l;
    }
  }
  EXPECT_GE(count, inputs.size()) << r.out;
  EXPECT_EQ(files, std::set<std::string>(inputs.begin(), inputs.end())) << r.out;
  EXPECT_TRUE(severities.count("error")) << r.out;
  EXPECT_TRUE(severities.count("warning")) << r.out;
}

}  // namespace
