// Snapshot tests of the fusion plan as users see it: the `--fusion` text table
// (per backend) and the JSON `fusion` section, over the bundled GPT decoder and
// control-flow exports. Only the fusion parts of the output are compared, so
// rule changes do not disturb these goldens; planner changes do, on purpose:
//
//   GRAPHLINT_UPDATE_GOLDENS=1 build/tests/graphlint_golden_tests --gtest_filter='FusionGolden.*'
//   git diff tests/golden/
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>

#include <cstdlib>
#include <regex>
#include <sstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

const std::vector<std::string> kModels = {"models/gpt_tiny.onnx", "models/control_flow.onnx"};

CliResult run(std::vector<std::string> args) {
  for (const std::string &m : kModels)
    args.push_back(sourcePath(m));
  CliResult r = runCli(args);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::string root = sourcePath("");
  for (std::string *s : {&r.out, &r.err})
    for (size_t at = s->find(root); at != std::string::npos; at = s->find(root, at))
      s->erase(at, root.size());
  return r;
}

// The fusion block of each file: from "PATH: fusion plan for" to the summary line.
std::string fusionBlocks(const std::string &out) {
  std::istringstream in(out);
  std::string result;
  bool inside = false;
  static const std::regex summary(R"(  \d+ nodes, \d+ groups, \d+ kernels; breaks: .*; structural: .*)");
  for (std::string l; std::getline(in, l);) {
    if (l.find(": fusion plan for ") != std::string::npos)
      inside = true;
    if (inside)
      result += l + "\n";
    if (inside && std::regex_match(l, summary))
      inside = false;
  }
  return result;
}

// `label` is the profile name the plan reports (an alias reports its target).
void textGolden(const std::string &backend, const std::string &golden, const std::string &label = "") {
  CliResult r = run({"--no-color", "--fail-on", "never", "--fusion", "--backend", backend});
  std::string blocks = fusionBlocks(r.out);
  for (const std::string &m : kModels)
    EXPECT_NE(blocks.find(m + ": fusion plan for " + (label.empty() ? backend : label) + "\n"), std::string::npos)
        << m << "\n" << r.out;
  expectGolden(golden, blocks);
}

TEST(FusionGolden, TextInductor) { textGolden("inductor", "fusion.text.golden"); }
TEST(FusionGolden, TextInductorCpu) { textGolden("inductor-cpu", "fusion.inductor-cpu.text.golden"); }
TEST(FusionGolden, TextTensorRT) { textGolden("tensorrt", "fusion.tensorrt.text.golden"); }
TEST(FusionGolden, TextOrt) { textGolden("ort", "fusion.ort.text.golden", "ort-cpu"); }
TEST(FusionGolden, TextOrtCuda) { textGolden("ort-cuda", "fusion.ort-cuda.text.golden"); }

TEST(FusionGolden, Json) {
  CliResult r = run({"--format", "json", "--fail-on", "never"});
  auto doc = llvm::json::parse(r.out);
  ASSERT_TRUE(static_cast<bool>(doc)) << llvm::toString(doc.takeError());
  llvm::json::Array out;
  for (const llvm::json::Value &f : *doc->getAsObject()->getArray("files")) {
    const llvm::json::Object &file = *f.getAsObject();
    ASSERT_TRUE(file.get("fusion") && file.get("fusion")->getAsObject()) << file.getString("path")->str();
    out.push_back(llvm::json::Object{{"path", *file.getString("path")}, {"fusion", *file.get("fusion")}});
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
  expectGolden("fusion.json.golden", os.str());
}

}  // namespace
