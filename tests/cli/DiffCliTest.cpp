// `graphlint diff` (docs/diff.md) on real captures: before/after pairs of
// validation/diff_pairs.py (a nanoGPT-style GPT and a torchvision-style
// ResNet, captured with graphlint-export --train as `model.py` on both
// sides; tests/fixtures/diff/, regenerated with `PY validation/diff_pairs.py
// --write-fixtures tests/fixtures/diff`). A re-export and a change that only
// moves lines are empty diffs; a real change names the source line it was
// made at and moves the metrics by what the model's arithmetic says; the
// gate, the formats and the expected-values file behave as documented.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string pairFile(const std::string &pair, const char *side) {
  return sourcePath("tests/fixtures/diff/" + pair + "." + side + ".fx.json");
}

// The 1-based line of the only line of validation/diff_pairs/FILE holding `needle`.
unsigned lineOf(const std::string &file, const std::string &needle) {
  std::istringstream in(readFile(sourcePath("validation/diff_pairs/" + file)));
  unsigned n = 0, found = 0;
  for (std::string l; std::getline(in, l);) {
    ++n;
    if (l.find(needle) != std::string::npos) {
      EXPECT_EQ(found, 0u) << needle << " is not unique in " << file;
      found = n;
    }
  }
  EXPECT_NE(found, 0u) << needle;
  return found;
}

struct DiffRun {
  CliResult cli;
  llvm::json::Object json;
};

DiffRun diffJson(const std::string &pair, const std::vector<std::string> &extra = {}) {
  std::vector<std::string> args{"diff", pairFile(pair, "before"), pairFile(pair, "after"), "--train", "--format",
                                "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  DiffRun r;
  r.cli = runCliTimed(args, 120);
  auto v = llvm::json::parse(r.cli.out);
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError()) << "\n" << r.cli.out.substr(0, 400) << r.cli.err;
    return r;
  }
  r.json = std::move(*v->getAsObject());
  return r;
}

// (kind, source, side) of each entry of a list of the diff.
std::set<std::tuple<std::string, std::string, std::string>> entries(const llvm::json::Object &d, const char *list) {
  std::set<std::tuple<std::string, std::string, std::string>> out;
  if (const llvm::json::Array *a = d.getArray(list))
    for (const llvm::json::Value &v : *a) {
      const llvm::json::Object &o = *v.getAsObject();
      out.insert({o.getString("kind").getValueOr("").str(), o.getString("source")->str(), o.getString("side")->str()});
    }
  return out;
}

double metric(const llvm::json::Object &d, const char *name, const char *field) {
  const llvm::json::Object *m = d.getObject("metrics")->getObject(name);
  EXPECT_NE(m, nullptr) << name;
  return m ? m->getNumber(field).getValueOr(-1) : -1;
}

// The attribution entries of one metric, by source.
std::map<std::string, double> attribution(const llvm::json::Object &d, const std::string &metricName) {
  std::map<std::string, double> out;
  for (const llvm::json::Value &v : *d.getArray("attribution")) {
    const llvm::json::Object &o = *v.getAsObject();
    if (o.getString("metric")->str() == metricName)
      out[o.getString("source")->str()] += *o.getNumber("delta");
  }
  return out;
}

std::string dump(const llvm::json::Object &d) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object(d)));
  return os.str().substr(0, 6000);
}

// nanoGPT's parameter count at width E (validation/diff_pairs/gpt.py): the
// embeddings, per block two LayerNorms, c_attn, c_proj, c_fc, c_proj with
// biases, the final LayerNorm and the bias-free head.
double gptParams(double e, double layers) {
  const double vocab = 128, block = 32;
  double perBlock = 2 * e + (e * 3 * e + 3 * e) + (e * e + e) + 2 * e + (e * 4 * e + 4 * e) + (4 * e * e + e);
  return vocab * e + block * e + layers * perBlock + 2 * e + e * vocab;
}

// ---- empty diffs ----------------------------------------------------------

TEST(DiffCli, ReexportOfTheSameModelIsAnEmptyDiff) {
  DiffRun r = diffJson("gpt_reexport");
  EXPECT_EQ(r.cli.exitCode, 0) << r.cli.err;
  EXPECT_EQ(r.json.getBoolean("empty"), true) << dump(r.json);
  EXPECT_TRUE(r.json.getObject("findings")->getArray("new")->empty());
  EXPECT_TRUE(r.json.getObject("findings")->getArray("fixed")->empty());
  EXPECT_TRUE(r.json.getArray("attribution")->empty());
  for (const char *m : {"peak_allocated_bytes", "peak_reserved_bytes", "step_time_s", "flops", "kernels",
                        "communication_bytes", "params"})
    EXPECT_EQ(metric(r.json, m, "delta"), 0) << m;
}

TEST(DiffCli, ACommentThatMovesEveryLineBelowIsAnEmptyDiff) {
  DiffRun r = diffJson("gpt_comment_shift");
  EXPECT_EQ(r.cli.exitCode, 0) << r.cli.err;
  EXPECT_EQ(r.json.getBoolean("empty"), true) << dump(r.json);
  EXPECT_TRUE(r.json.getArray("changes")->empty()) << dump(r.json);
  // The files really differ in their lines: the same node is two lines lower.
  EXPECT_NE(readFile(pairFile("gpt_comment_shift", "before")), readFile(pairFile("gpt_comment_shift", "after")));
}

// ---- real changes ---------------------------------------------------------

TEST(DiffCli, ADtypeCastNamesItsLineAndItsNewFinding) {
  DiffRun r = diffJson("gpt_softmax_fp32");
  ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
  EXPECT_EQ(r.json.getBoolean("empty"), false);
  std::string line = "model.py:" + std::to_string(lineOf("gpt.py", "att = F.softmax(att, dim=-1)"));
  auto changes = entries(r.json, "changes");
  EXPECT_TRUE(changes.count({"added", line, "head"})) << dump(r.json);
  // Nothing above the attention changed: no line before it is named.
  unsigned first = lineOf("gpt.py", "att = (q @ k.transpose(-2, -1))");
  for (const auto &[kind, source, side] : changes)
    if (source.rfind("model.py:", 0) == 0)
      EXPECT_GE(std::stoul(source.substr(9)), first) << kind << " " << source;
  // GL101 (a precision change between compute ops) is new at the casts up
  // and back, both on that line, and nowhere else.
  const llvm::json::Array *added = r.json.getObject("findings")->getArray("new");
  ASSERT_FALSE(added->empty()) << dump(r.json);
  for (const llvm::json::Value &v : *added) {
    const llvm::json::Object &f = *v.getAsObject();
    EXPECT_EQ(f.getString("code").getValueOr(""), "GL101");
    EXPECT_EQ(f.getString("source").getValueOr("").rsplit(':').first, line);
  }
  EXPECT_TRUE(r.json.getObject("findings")->getArray("fixed")->empty());
  // The float64 softmax keeps a bigger tensor: the peak grows at that line.
  EXPECT_GT(metric(r.json, "peak_allocated_bytes", "delta"), 0);
  EXPECT_GT(attribution(r.json, "peak_allocated_bytes")[line], 0) << dump(r.json);
}

TEST(DiffCli, AWiderModelMovesParamsByTheArithmetic) {
  DiffRun r = diffJson("gpt_wider");
  ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
  EXPECT_DOUBLE_EQ(metric(r.json, "params", "base"), gptParams(64, 2));
  EXPECT_DOUBLE_EQ(metric(r.json, "params", "head"), gptParams(96, 2));
  EXPECT_DOUBLE_EQ(metric(r.json, "params", "delta"), gptParams(96, 2) - gptParams(64, 2));
  double pct = 100 * (gptParams(96, 2) - gptParams(64, 2)) / gptParams(64, 2);
  EXPECT_NEAR(metric(r.json, "params", "delta_pct"), pct, 1e-9);
  // Each parameter is resized where it is first read.
  std::string fc = "model.py:" + std::to_string(lineOf("gpt.py", "x = self.c_fc(x)"));
  EXPECT_TRUE(entries(r.json, "params").count({"changed", fc, "head"})) << dump(r.json);
  EXPECT_GT(metric(r.json, "flops", "delta"), 0);
  EXPECT_GT(attribution(r.json, "flops")[fc], 0);
}

TEST(DiffCli, ADeeperModelAddsABlockAtTheBlocksLines) {
  DiffRun r = diffJson("gpt_deeper");
  ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
  EXPECT_DOUBLE_EQ(metric(r.json, "params", "delta"), gptParams(64, 3) - gptParams(64, 2));
  std::string attn = "model.py:" + std::to_string(lineOf("gpt.py", "x = x + self.attn(self.ln_1(x))"));
  auto changes = entries(r.json, "changes");
  EXPECT_TRUE(changes.count({"added", attn, "head"})) << dump(r.json);
  // One block of three more: a third more kernels and block FLOPs, and a
  // higher peak from the third block's saved activations.
  EXPECT_GT(metric(r.json, "kernels", "delta"), 0);
  EXPECT_GT(metric(r.json, "peak_allocated_bytes", "delta"), 0);
  EXPECT_GT(metric(r.json, "step_time_s", "delta"), 0);
  bool addedFusion = false;
  for (const llvm::json::Value &v : *r.json.getArray("fusion"))
    addedFusion |= v.getAsObject()->getString("kind")->str() == "added";
  EXPECT_TRUE(addedFusion) << dump(r.json);
}

TEST(DiffCli, ARemovedLineIsNamedOnTheBaseSide) {
  DiffRun r = diffJson("gpt_remove_ln_f");
  ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
  std::string line = "model.py:" + std::to_string(lineOf("gpt.py", "x = self.ln_f(x)"));
  EXPECT_TRUE(entries(r.json, "changes").count({"removed", line, "base"})) << dump(r.json);
  // ln_f is still constructed: its parameters stay, its FLOPs go, from that line.
  EXPECT_TRUE(entries(r.json, "params").empty()) << dump(r.json);
  EXPECT_LT(metric(r.json, "flops", "delta"), 0);
  EXPECT_LT(attribution(r.json, "flops")[line], 0) << dump(r.json);
}

TEST(DiffCli, ANewStemLayerNamesItsLine) {
  DiffRun r = diffJson("resnet_maxpool_stem");
  ASSERT_EQ(r.cli.exitCode, 0) << r.cli.err;
  std::string relu = "model.py:" + std::to_string(lineOf("resnet.py", "        x = self.relu(x)") + 1);
  EXPECT_TRUE(entries(r.json, "changes").count({"added", relu, "head"})) << dump(r.json);
  // The pool quarters every later activation: FLOPs and the peak fall.
  EXPECT_LT(metric(r.json, "flops", "delta"), 0);
  EXPECT_LT(metric(r.json, "peak_allocated_bytes", "delta"), 0);
}

// ---- alignment without names ----------------------------------------------

// The same graph exported twice with every node renamed and two independent
// branches scheduled the other way round: nothing changed.
TEST(DiffCli, NodeNamesAndTheOrderOfIndependentBranchesDoNotMatter) {
  std::string dir = tempDir();
  std::string a = dir + "/a.onnx", b = dir + "/b.onnx";
  writeFile(a, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8, 16] x, float[16, 16] w1, float[16, 16] w2) => (float[8, 16] y) {
      n1 = MatMul(x, w1)
      n2 = Relu(n1)
      n3 = MatMul(x, w2)
      n4 = Sigmoid(n3)
      y = Add(n2, n4)
    })"));
  writeFile(b, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8, 16] x, float[16, 16] w1, float[16, 16] w2) => (float[8, 16] y) {
      t7 = MatMul(x, w2)
      t8 = Sigmoid(t7)
      t5 = MatMul(x, w1)
      t6 = Relu(t5)
      y = Add(t6, t8)
    })"));
  CliResult r = runCli({"diff", a, b, "--format", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto v = llvm::json::parse(r.out);
  ASSERT_TRUE(bool(v));
  EXPECT_EQ(v->getAsObject()->getBoolean("empty"), true) << r.out;
  // The same with a real change: the second branch's Sigmoid becomes a Tanh.
  std::string c = dir + "/c.onnx";
  writeFile(c, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8, 16] x, float[16, 16] w1, float[16, 16] w2) => (float[8, 16] y) {
      t7 = MatMul(x, w2)
      t8 = Tanh(t7)
      t5 = MatMul(x, w1)
      t6 = Relu(t5)
      y = Add(t6, t8)
    })"));
  r = runCli({"diff", a, c});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("added 1 node (Tanh)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("removed 1 node (Sigmoid)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Relu"), std::string::npos) << r.out;
}

// ---- the gate -------------------------------------------------------------

TEST(DiffCli, FailOnBreaksOneLinePerLimit) {
  std::vector<std::string> args{"diff", pairFile("gpt_deeper", "before"), pairFile("gpt_deeper", "after"), "--train",
                                "--format", "json"};
  auto with = [&](const std::string &spec) {
    std::vector<std::string> a = args;
    a.push_back("--fail-on");
    a.push_back(spec);
    return runCliTimed(a, 120);
  };
  CliResult broken = with("peak+1%,step+1%,comm+10%,kernels+1");
  EXPECT_EQ(broken.exitCode, 1) << broken.err;
  EXPECT_NE(broken.err.find("graphlint: diff: peak+1%: peak_allocated_bytes grew +"), std::string::npos)
      << broken.err;
  EXPECT_NE(broken.err.find("graphlint: diff: step+1%: step_time_s grew"), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find("kernels+1: kernels grew"), std::string::npos) << broken.err;
  EXPECT_EQ(broken.err.find("comm+10%"), std::string::npos) << "no communication on one GPU: " << broken.err;
  EXPECT_FALSE(llvm::json::parse(broken.out).takeError()) << "stdout stays the report";
  CliResult fine = with("peak+500%,new-errors");
  EXPECT_EQ(fine.exitCode, 0) << fine.err;
  EXPECT_TRUE(fine.err.empty()) << fine.err;
  // A model that shrank does not break a growth limit, and breaks a fall limit.
  CliResult shrink = runCliTimed({"diff", pairFile("gpt_deeper", "after"), pairFile("gpt_deeper", "before"),
                                  "--train", "--fail-on", "peak+0%,flops-10%"},
                                 120);
  EXPECT_EQ(shrink.exitCode, 1) << shrink.err;
  EXPECT_EQ(shrink.err.find("peak+0%"), std::string::npos) << shrink.err;
  EXPECT_NE(shrink.err.find("flops-10%: flops fell"), std::string::npos) << shrink.err;
  for (const char *bad : {"bogus", "peak+", "peak+x%", "nosuchmetric+5%", ""}) {
    CliResult r = with(bad);
    EXPECT_EQ(r.exitCode, 2) << bad;
    EXPECT_NE(r.err.find("--fail-on"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << "one line and the --help hint: " << r.err;
  }
}

TEST(DiffCli, UsageErrorsAreOneLineAndExitTwo) {
  CliResult one = runCli({"diff", pairFile("gpt_deeper", "before")});
  EXPECT_EQ(one.exitCode, 2);
  EXPECT_NE(one.err.find("diff expects two model files"), std::string::npos) << one.err;
  CliResult missing = runCli({"diff", pairFile("gpt_deeper", "before"), "/nonexistent/x.fx.json"});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("/nonexistent/x.fx.json"), std::string::npos) << missing.err;
  CliResult format = runCli({"diff", pairFile("gpt_deeper", "before"), pairFile("gpt_deeper", "after"), "--format",
                             "gcc"});
  EXPECT_EQ(format.exitCode, 2);
  EXPECT_NE(format.err.find("--format must be one of text, json, markdown, sarif, github"), std::string::npos);
}

// ---- formats --------------------------------------------------------------

TEST(DiffCli, MarkdownGithubAndSarifPointAtTheChangedLine) {
  std::string before = pairFile("gpt_softmax_fp32", "before"), after = pairFile("gpt_softmax_fp32", "after");
  std::string line = std::to_string(lineOf("gpt.py", "att = F.softmax(att, dim=-1)"));
  CliResult md = runCliTimed({"diff", before, after, "--train", "--format", "markdown", "--link-base",
                              "https://github.com/o/r/blob/abc"},
                             120);
  ASSERT_EQ(md.exitCode, 0) << md.err;
  EXPECT_NE(md.out.find("| metric | base | head | Δ | Δ% |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| **peak_allocated_bytes** |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("[`model.py:" + line + "`](https://github.com/o/r/blob/abc/model.py#L" + line + ")"),
            std::string::npos)
      << md.out;
  CliResult gh = runCliTimed({"diff", before, after, "--train", "--format", "github"}, 120);
  ASSERT_EQ(gh.exitCode, 0) << gh.err;
  EXPECT_NE(gh.out.find("::notice file=model.py,line=" + line + ",title=graphlint diff::added"), std::string::npos)
      << gh.out;
  CliResult sarif = runCliTimed({"diff", before, after, "--train", "--format", "sarif"}, 120);
  ASSERT_EQ(sarif.exitCode, 0) << sarif.err;
  auto v = llvm::json::parse(sarif.out);
  ASSERT_TRUE(bool(v)) << sarif.out.substr(0, 300);
  EXPECT_EQ(v->getAsObject()->getString("version").getValueOr(""), "2.1.0");
  CliResult text = runCliTimed({"diff", before, after, "--train"}, 120);
  EXPECT_NE(text.out.find("model.py:" + line + ": added"), std::string::npos) << text.out;
}

TEST(DiffCli, JsonFindingsCarryTheContractFields) {
  DiffRun r = diffJson("gpt_softmax_fp32");
  const llvm::json::Object *f = r.json.getObject("findings");
  ASSERT_NE(f, nullptr);
  for (const char *list : {"new", "fixed"})
    for (const llvm::json::Value &v : *f->getArray(list)) {
      const llvm::json::Object &o = *v.getAsObject();
      for (const char *k : {"code", "severity", "message", "source"})
        EXPECT_TRUE(o.get(k)) << list << " lacks " << k;
    }
  EXPECT_TRUE(f->getInteger("unchanged"));
  for (const llvm::json::Value &v : *r.json.getArray("attribution")) {
    const llvm::json::Object &o = *v.getAsObject();
    for (const char *k : {"source", "metric", "delta"})
      EXPECT_TRUE(o.get(k)) << "attribution lacks " << k;
  }
  const llvm::json::Object *m = r.json.getObject("metrics")->getObject("peak_allocated_bytes");
  ASSERT_NE(m, nullptr);
  for (const char *k : {"base", "head", "delta", "delta_pct"})
    EXPECT_TRUE(m->get(k)) << k;
}

// ---- expected values (lint --expect / --write-expected) -------------------

TEST(ExpectedValues, FailInBothDirectionsAndPrintTheProposedFile) {
  std::string dir = tempDir();
  std::string model = dir + "/model.fx.json", file = dir + "/expected.json";
  writeFile(model, readFile(pairFile("gpt_deeper", "before")));
  CliResult w = runCliTimed({model, "--train", "--exit-zero", "--write-expected", file}, 120);
  ASSERT_EQ(w.exitCode, 0) << w.err;
  std::string written = readFile(file);
  EXPECT_NE(written.find("\"model\": \"model.fx.json\""), std::string::npos) << written;
  EXPECT_NE(written.find("\"setup\": \"train: true\""), std::string::npos) << written;
  // The same run passes.
  CliResult same = runCliTimed({model, "--train", "--exit-zero", "--expect", file}, 120);
  EXPECT_EQ(same.exitCode, 0) << same.err;
  EXPECT_TRUE(same.err.empty()) << same.err;
  // Another setup has no entry: it fails and proposes one.
  CliResult other = runCliTimed({model, "--train", "--exit-zero", "--target", "A100-80GB", "--expect", file}, 120);
  EXPECT_EQ(other.exitCode, 1);
  EXPECT_NE(other.err.find("no expected values for this model and setup"), std::string::npos) << other.err;
  // Expected peak 10% below the prediction: a regression; 10% above: an
  // unexplained win. Both print the proposed file, which holds the real value.
  auto v = llvm::json::parse(written);
  ASSERT_TRUE(bool(v));
  llvm::json::Object *peak = (*v->getAsObject()->getArray("models"))[0]
                                 .getAsObject()
                                 ->getObject("metrics")
                                 ->getObject("peak_allocated_bytes");
  ASSERT_NE(peak, nullptr);
  double actual = *peak->getNumber("value");
  for (double factor : {0.9, 1.1}) {
    (*peak)["value"] = actual * factor;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::json::Value(llvm::json::Object(*v->getAsObject()));
    writeFile(file, os.str());
    CliResult r = runCliTimed({model, "--train", "--exit-zero", "--expect", file}, 120);
    EXPECT_EQ(r.exitCode, 1) << factor;
    EXPECT_NE(r.err.find(factor < 1 ? "a regression" : "an unexplained win"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the proposed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(fmt::format("\"value\": {}", static_cast<int64_t>(actual))), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("flops is"), std::string::npos) << "only the changed metric: " << r.err;
  }
}

TEST(ExpectedValues, ABrokenFileIsOneLineAndExitTwo) {
  std::string dir = tempDir();
  std::string file = dir + "/expected.json";
  writeFile(file, "{\"models\": []}");
  CliResult r = runCliTimed({pairFile("gpt_deeper", "before"), "--train", "--expect", file}, 120);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("no \"graphlint_expected\" version"), std::string::npos) << r.err;
}

}  // namespace
