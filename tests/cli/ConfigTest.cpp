// Configuration, suppressions and baselines: .graphlint.yaml parsing and its
// errors, discovery (nearest wins, --config overrides), precedence (defaults <
// file < command line), per-rule severity and options, per-file and per-node
// ignores, node suppressions in ONNX metadata_props with GL005, and the
// baseline round trip (weights change: nothing new; a bad node: one new).
#include "TestSupport.h"

#include "graphlint/engine/Config.h"
#include "graphlint/rules/Rule.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>

#include <onnx/onnx_pb.h>

#include <cstdlib>

using namespace graphlint;
using namespace graphlint::test;

namespace {

// Two findings: GL102 on the same-dtype Cast 'recast' (warning) and nothing
// else. The initializer W gives the model weights to change.
const char *kModel = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) <float[4] W = {1.0, 2.0, 3.0, 4.0}> {
  c = Cast <to = 1> (x)
  s = Add (c, W)
  y = Relu (s)
}
)";

// The same graph with different weight values.
const char *kModelNewWeights = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) <float[4] W = {5.0, 6.0, 7.0, 8.0}> {
  c = Cast <to = 1> (x)
  s = Add (c, W)
  y = Relu (s)
}
)";

// One more bad node: a second same-dtype Cast.
const char *kModelExtraBadNode = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) <float[4] W = {5.0, 6.0, 7.0, 8.0}> {
  c = Cast <to = 1> (x)
  s = Add (c, W)
  r = Relu (s)
  y = Cast <to = 1> (r)
}
)";

// Serialises `text` with node names set ("n0", "n1", ...) and, for node
// `metaNode`, a metadata_props entry (NodeProto field 9, newer than the
// installed ONNX: written as an unknown field, as newer exporters do).
std::string modelBytes(const std::string &text, int metaNode = -1, const std::string &key = "",
                       const std::string &value = "") {
  onnx::ModelProto mp;
  EXPECT_TRUE(mp.ParseFromString(onnxFromText(text)));
  for (int i = 0; i < mp.graph().node_size(); ++i) {
    onnx::NodeProto *n = mp.mutable_graph()->mutable_node(i);
    n->set_name("n" + std::to_string(i));
    if (i == metaNode) {
      onnx::StringStringEntryProto kv;
      kv.set_key(key);
      kv.set_value(value);
      n->GetReflection()->MutableUnknownFields(n)->AddLengthDelimited(9, kv.SerializeAsString());
    }
  }
  return mp.SerializeAsString();
}

std::string writeModel(const std::string &dir, const std::string &name, const std::string &bytes) {
  llvm::sys::fs::create_directories(dir);
  std::string path = dir + "/" + name;
  writeFile(path, bytes);
  return path;
}

std::vector<std::string> codesIn(const std::string &gccOut) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = gccOut.find(" [GL", at)) != std::string::npos) {
    out.push_back(gccOut.substr(at + 2, 5));
    at += 4;
  }
  return out;
}

std::string parseError(const std::string &yaml) {
  auto layer = parseConfigYaml(yaml, "cfg/.graphlint.yaml");
  if (layer)
    return "";
  return llvm::toString(layer.takeError());
}

TEST(Config, ParsesEveryKey) {
  auto layer = parseConfigYaml(R"(
select: [GL1, invalid-model]
extend-select: GL004
ignore: [GL142]
fail-on: warning
report-unused-ignores: true
rules:
  GL102: {severity: error}
  launch-bound: {min-kernels: 6}
  GL141: {severity: off}
per-file-ignores:
  "legacy/*.onnx": [GL101]
per-node-ignores:
  "encoder.*": [inplace-alias]
setup:
  target: a100-80gb
  backend: ort
  dims: {batch: 8, seq: 2048}
  train: true
  optimizer: adamw
  precision: bf16-mixed
  zero: 2
  world-size: 16
  recompute: full
  gpus-per-node: 4
  intra: nvlink3
  inter: hdr
)",
                               "x/.graphlint.yaml");
  ASSERT_TRUE(static_cast<bool>(layer)) << llvm::toString(layer.takeError());
  ASSERT_TRUE(layer->select.has_value());
  EXPECT_EQ(std::count(layer->select->begin(), layer->select->end(), "GL001"), 1);
  EXPECT_EQ(std::count(layer->select->begin(), layer->select->end(), "GL131"), 1);
  EXPECT_EQ(std::count(layer->select->begin(), layer->select->end(), "GL004"), 0);
  EXPECT_EQ(layer->extendSelect, std::vector<std::string>{"GL004"});
  EXPECT_EQ(layer->severity.at("GL102"), Severity::Error);
  EXPECT_TRUE(layer->disabled.count("GL141"));
  EXPECT_EQ(layer->options.at("GL142").at("min-kernels"), 6);
  ASSERT_EQ(layer->perNodeIgnores.size(), 1u);
  EXPECT_EQ(layer->perNodeIgnores[0].codes, std::vector<std::string>{"GL131"});
  EXPECT_EQ(layer->perNodeIgnores[0].origin, "x/.graphlint.yaml:14");

  Config c = llvm::cantFail(resolveConfig({&*layer}, "x/model.onnx"));
  EXPECT_TRUE(c.policy.isEnabled("GL001"));
  EXPECT_TRUE(c.policy.isEnabled("GL004"));
  EXPECT_FALSE(c.policy.isEnabled("GL142"));
  EXPECT_FALSE(c.policy.isEnabled("GL141"));
  EXPECT_FALSE(c.policy.isEnabled("GL002"));
  EXPECT_EQ(c.failOn, Severity::Warning);
  EXPECT_TRUE(c.policy.reportUnusedIgnores);
  EXPECT_EQ(c.setup.target, "A100-80GB") << "resolved once to the profile's spelling";
  EXPECT_EQ(c.setup.backend, FusionBackend::OrtCpu) << "the old name ort is an alias of ort-cpu";
  EXPECT_EQ(c.setup.dims.at("seq"), 2048);
  EXPECT_TRUE(c.setup.train);
  EXPECT_EQ(c.setup.optimizer, Optimizer::AdamW);
  EXPECT_EQ(c.setup.precision, Precision::BF16Mixed);
  EXPECT_EQ(c.setup.zero, 2u);
  EXPECT_EQ(c.setup.worldSize, 16u);
  EXPECT_EQ(c.setup.recompute, Recompute::Layer) << "full is an alias of layer (Megatron's --recompute-granularity full)";
  EXPECT_EQ(c.setup.gpusPerNode, 4u);
  EXPECT_EQ(c.setup.intra, "nvlink3");
  EXPECT_EQ(c.setup.inter, "hdr");
  EXPECT_EQ(c.setup.ruleOption("GL142", "min-kernels", 4), 6);
  EXPECT_EQ(c.setup.ruleOption("GL142", "other", 4), 4);
}

TEST(Config, ErrorsNameFileLineAndKey) {
  struct Case { const char *yaml; const char *expected; };
  const Case cases[] = {
      {"select: [GL1]\nbogus: 1\n", "cfg/.graphlint.yaml:2: unknown key 'bogus'"},
      {"select: [GL999]\n", "cfg/.graphlint.yaml:1: unknown rule 'GL999' in 'select'"},
      {"ignore: [not-a-rule]\n", "unknown rule 'not-a-rule' in 'ignore'"},
      {"rules:\n  GL999: {severity: note}\n", "cfg/.graphlint.yaml:2: unknown rule 'GL999' in 'rules'"},
      {"rules:\n  GL102: {severity: loud}\n", "'severity' of GL102 must be one of error, warning, note, off"},
      {"rules:\n  GL142: {min-kernels: 1}\n", "option 'min-kernels' of GL142 expects a number from 2 to"},
      {"rules:\n  GL142: {max: 1}\n", "unknown option 'max' for GL142 launch-bound (known: severity, min-kernels)"},
      {"fail-on: sometimes\n", "'fail-on' must be one of error, warning, note, never"},
      {"setup:\n  target: tpu-v9\n", "cfg/.graphlint.yaml:2: 'target': "},
      {"setup:\n  zero: 4\n", "'zero' expects an integer from 0 to 3, got '4'"},
      {"setup:\n  optimizer: lion\n", "'optimizer' must be one of sgd, momentum, adam, adamw"},
      {"setup:\n  dims: {batch: -1}\n", "'dims: batch' expects an integer"},
      {"setup:\n  gpus: 8\n", "unknown key 'setup: gpus'"},
      {"setup:\n  intra: warp-drive\n", "cfg/.graphlint.yaml:2: 'intra': unknown interconnect 'warp-drive' (known: "},
      {"setup: [1, 2]\n", "'setup' expects a mapping"},
      {"per-node-ignores:\n  \"a[\": [GL101]\n", "bad glob 'a['"},
      {"- just\n- a list\n", "the file must be a mapping"},
      {"select: [GL1\n", "cfg/.graphlint.yaml:"},
  };
  for (const Case &c : cases) {
    std::string err = parseError(c.yaml);
    EXPECT_NE(err.find(c.expected), std::string::npos) << c.yaml << "\ngot: " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  EXPECT_EQ(parseError(""), "");
  EXPECT_EQ(parseError("# only a comment\n"), "");
}

TEST(Config, SelectorsResolveCodesNamesPrefixes) {
  EXPECT_EQ(resolveRuleSelector("GL102"), std::vector<std::string>{"GL102"});
  EXPECT_EQ(resolveRuleSelector("gl102"), std::vector<std::string>{"GL102"});
  EXPECT_EQ(resolveRuleSelector("redundant-cast"), std::vector<std::string>{"GL102"});
  EXPECT_EQ(resolveRuleSelector("GL13"), (std::vector<std::string>{"GL131", "GL132"}));
  EXPECT_EQ(resolveRuleSelector("ALL").size(), allRules().size());
  EXPECT_TRUE(resolveRuleSelector("GL9").empty());
  EXPECT_TRUE(resolveRuleSelector("G").empty());
  EXPECT_TRUE(resolveRuleSelector("GLX").empty());
}

TEST(Config, DiscoveryNearestWinsAndConfigFlagOverrides) {
  std::string root = tempDir();
  std::string bytes = modelBytes(kModel);
  std::string top = writeModel(root, "top.onnx", bytes);
  std::string deep = writeModel(root + "/sub/deeper", "deep.onnx", bytes);
  // The root config makes GL102 an error; the nearer one in sub/ ignores it.
  writeFile(root + "/.graphlint.yaml", "rules:\n  GL102: {severity: error}\n");
  writeFile(root + "/sub/.graphlint.yaml", "ignore: [GL102]\n");
  EXPECT_EQ(findConfigFile(top), root + "/.graphlint.yaml");
  EXPECT_EQ(findConfigFile(deep), root + "/sub/.graphlint.yaml");

  CliResult r = runCli({"--format", "gcc", top, deep});
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_NE(r.out.find(top + ":1:1: error: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(deep), std::string::npos) << r.out;

  // --config replaces discovery for every file.
  std::string other = root + "/other.yaml";
  writeFile(other, "fail-on: never\n");
  r = runCli({"--format", "gcc", "--config", other, top, deep});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(codesIn(r.out), (std::vector<std::string>{"GL102", "GL102"})) << r.out;
  EXPECT_NE(r.out.find(": warning: "), std::string::npos) << r.out;

  r = runCli({"--config", root + "/missing.yaml", top});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("missing.yaml: cannot read config file"), std::string::npos) << r.err;
}

TEST(Config, BadConfigFileIsExitTwoNamingFileAndKey) {
  std::string root = tempDir();
  std::string m = writeModel(root, "m.onnx", modelBytes(kModel));
  writeFile(root + "/.graphlint.yaml", "select: [GL1]\nrules:\n  GL102: {colour: red}\n");
  CliResult r = runCli({m});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(root + "/.graphlint.yaml:3: unknown option 'colour' for GL102"), std::string::npos) << r.err;
}

TEST(Config, CommandLineOverridesFileOverridesDefaults) {
  std::string root = tempDir();
  std::string m = writeModel(root, "m.onnx", modelBytes(kModel));
  writeFile(root + "/.graphlint.yaml", R"(select: [GL0]
fail-on: warning
setup:
  target: A100-40GB
  dims: {batch: 4, seq: 128}
  optimizer: sgd
  world-size: 8
)");
  // The file alone: GL102 is not selected, so nothing fails.
  CliResult r = runCli({"--format", "gcc", m});
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  // The command line extends the file's selection and its fail-on applies.
  r = runCli({"--format", "gcc", "--extend-select", "redundant-cast", m});
  EXPECT_EQ(r.exitCode, 1) << r.out;
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{"GL102"});
  r = runCli({"--format", "gcc", "--extend-select", "GL102", "--fail-on", "never", m});
  EXPECT_EQ(r.exitCode, 0) << r.out;
  // --select on the command line replaces the file's selection.
  r = runCli({"--format", "gcc", "--select", "GL1", "--ignore", "GL142", m});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{"GL102"});

  r = runCli({"config", "--dump", m, "--target", "h100", "-D", "batch=16", "--optimizer", "adamw", "--fsdp"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("# config file: " + root + "/.graphlint.yaml"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("select: [GL001, GL002, GL003, GL004, GL005]\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fail-on: warning\n"), std::string::npos);
  EXPECT_NE(r.out.find("  target: H100-SXM\n"), std::string::npos) << "the alias h100, resolved";
  EXPECT_NE(r.out.find("    \"batch\": 16\n    \"seq\": 128\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  optimizer: adamw\n"), std::string::npos);
  EXPECT_NE(r.out.find("  zero: 3\n"), std::string::npos);
  EXPECT_NE(r.out.find("  world-size: 8\n"), std::string::npos);

  // The dump is itself a valid config that reproduces the selection.
  std::string dumped = root + "/dumped.yaml";
  writeFile(dumped, r.out);
  auto layer = loadConfigFile(dumped);
  ASSERT_TRUE(static_cast<bool>(layer)) << llvm::toString(layer.takeError());
  Config again = llvm::cantFail(resolveConfig({&*layer}, m));
  EXPECT_EQ(again.policy.enabled, (std::set<std::string>{"GL001", "GL002", "GL003", "GL004", "GL005"}));
  EXPECT_EQ(again.setup.target, "H100-SXM");
  EXPECT_EQ(again.setup.zero, 3u);

  r = runCli({"config", m});
  EXPECT_EQ(r.exitCode, 2);
  r = runCli({m, "--inter", "carrier-pigeon"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--inter: unknown interconnect 'carrier-pigeon' (known: "), std::string::npos) << r.err;
}

// Every key through `config --dump`, with command-line overrides on top.
TEST(Config, DumpGolden) {
  std::string dir = sourcePath("tests/fixtures/config");
  CliResult r = runCli({"config", "--dump", dir + "/legacy/model.onnx", "--world-size", "16", "-D", "batch=4"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string out = r.out;
  for (size_t at; (at = out.find(dir)) != std::string::npos;)
    out.replace(at, dir.size(), "<fixtures/config>");
  expectGolden("config.dump.golden", out);
}

TEST(Config, SeverityAndOptionsReachRules) {
  std::string root = tempDir();
  std::string m = writeModel(root, "m.onnx", modelBytes(kModel));
  writeFile(root + "/.graphlint.yaml", "rules:\n  redundant-cast: {severity: note}\n");
  CliResult r = runCli({"--format", "gcc", m});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.out.find(": note: "), std::string::npos) << r.out;
  r = runCli({"--format", "gcc", "--fail-on", "note", m});
  EXPECT_EQ(r.exitCode, 1);
  writeFile(root + "/.graphlint.yaml", "rules:\n  GL102: {severity: off}\n");
  r = runCli({"--format", "gcc", m});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{}) << r.out;
}

TEST(Config, PerFileAndPerNodeIgnores) {
  std::string root = tempDir();
  std::string bytes = modelBytes(kModel);
  std::string legacy = writeModel(root + "/legacy", "old.onnx", bytes);
  std::string fresh = writeModel(root + "/new", "m.onnx", bytes);
  writeFile(root + "/.graphlint.yaml", "per-file-ignores:\n  \"legacy/*.onnx\": [GL102]\n");
  CliResult r = runCli({"--format", "json", legacy, fresh});
  auto j = llvm::json::parse(r.out);
  ASSERT_TRUE(static_cast<bool>(j)) << r.out;
  const llvm::json::Array &files = *j->getAsObject()->getArray("files");
  EXPECT_EQ(files[0].getAsObject()->getArray("diagnostics")->size(), 0u);
  EXPECT_EQ(files[0].getAsObject()->getInteger("suppressed").getValueOr(-1), 1);
  EXPECT_EQ(files[1].getAsObject()->getArray("diagnostics")->size(), 1u);
  EXPECT_EQ(j->getAsObject()->getObject("summary")->getInteger("suppressed").getValueOr(-1), 1);

  // A glob on the node name (n0 is the Cast).
  writeFile(root + "/.graphlint.yaml", "per-node-ignores:\n  \"n[0-9]\": [GL1]\n");
  r = runCli({"--format", "gcc", legacy, fresh});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{}) << r.out;
  writeFile(root + "/.graphlint.yaml", "per-node-ignores:\n  \"encoder.*\": [GL102]\n");
  r = runCli({"--format", "gcc", "--no-color", fresh});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{"GL102"});
  writeFile(root + "/.graphlint.yaml", "per-file-ignores:\n  \"legacy/*.onnx\": [GL102]\n");
  r = runCli({"--quiet", "--no-color", legacy});
  EXPECT_EQ(r.out, "1 file checked: 0 errors, 0 warnings, 0 notes (1 suppressed)\n");
}

TEST(Suppressions, NodeMetadataTravelsWithTheModel) {
  std::string root = tempDir();
  std::string m = writeModel(root, "m.onnx", modelBytes(kModel, 0, "graphlint.ignore", "GL102"));
  CliResult r = runCli({"--format", "gcc", m});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{}) << r.out;
  // By name, several entries, spaces.
  m = writeModel(root, "m2.onnx", modelBytes(kModel, 0, "graphlint.ignore", " GL101 , redundant-cast"));
  r = runCli({"--format", "gcc", m});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{}) << r.out;
  // On another node it suppresses nothing.
  m = writeModel(root, "m3.onnx", modelBytes(kModel, 2, "graphlint.ignore", "GL102"));
  r = runCli({"--format", "gcc", m});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{"GL102"});
}

TEST(Suppressions, UnknownAndUnusedAreGL005) {
  std::string root = tempDir();
  // A typo (letter O) is always reported.
  std::string m = writeModel(root, "typo.onnx", modelBytes(kModel, 1, "graphlint.ignore", "GL1O1"));
  CliResult r = runCli({"--format", "gcc", m});
  EXPECT_EQ(codesIn(r.out), (std::vector<std::string>{"GL102", "GL005"})) << r.out;
  EXPECT_NE(r.out.find(m + ":2:1: warning: 'GL1O1' in this node's graphlint.ignore metadata names no rule"),
            std::string::npos)
      << r.out;

  // Not even ALL silences it.
  m = writeModel(root, "all.onnx", modelBytes(kModel, 0, "graphlint.ignore", "ALL, GL1O1"));
  r = runCli({"--format", "gcc", m});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{"GL005"}) << r.out;

  // An entry that suppresses nothing: reported only when asked.
  m = writeModel(root, "unused.onnx", modelBytes(kModel, 0, "graphlint.ignore", "GL102, GL141"));
  r = runCli({"--format", "gcc", m});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{}) << r.out;
  r = runCli({"--format", "gcc", "--report-unused-ignores", m});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{"GL005"}) << r.out;
  EXPECT_NE(r.out.find(m + ":1:1: warning: 'GL141' in this node's graphlint.ignore metadata suppresses nothing"),
            std::string::npos)
      << r.out;

  // Config entries that suppress nothing in any file point at their line.
  writeFile(root + "/.graphlint.yaml",
            "report-unused-ignores: true\nper-file-ignores:\n  \"*.onnx\": [GL102]\n  \"none/*\": [GL101]\n"
            "per-node-ignores:\n  \"decoder.*\": [GL131]\n");
  std::string clean = writeModel(root, "plain.onnx", modelBytes(kModel));
  r = runCli({"--format", "gcc", clean});
  EXPECT_NE(r.out.find(root + "/.graphlint.yaml:4:1: warning: per-file-ignores entry 'none/*' (GL101) suppresses "
                              "nothing in the files linted [GL005 unused-suppression]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(root + "/.graphlint.yaml:6:1: warning: per-node-ignores entry 'decoder.*'"), std::string::npos)
      << r.out;
  EXPECT_EQ(codesIn(r.out), (std::vector<std::string>{"GL005", "GL005"})) << r.out;
  // SARIF points at the config file's line, without the config as a
  // "model file" related location.
  r = runCli({"--format", "sarif", clean});
  auto sarif = llvm::json::parse(r.out);
  ASSERT_TRUE(static_cast<bool>(sarif)) << r.out;
  const llvm::json::Array &results =
      *(*sarif->getAsObject()->getArray("runs"))[0].getAsObject()->getArray("results");
  ASSERT_EQ(results.size(), 2u);
  const llvm::json::Object &res = *results[0].getAsObject();
  EXPECT_EQ(res.getString("ruleId").getValueOr(""), "GL005");
  EXPECT_EQ(res.get("relatedLocations"), nullptr);
  const llvm::json::Object &phys =
      *(*res.getArray("locations"))[0].getAsObject()->getObject("physicalLocation");
  EXPECT_TRUE(phys.getObject("artifactLocation")->getString("uri").getValueOr("").endswith(".graphlint.yaml"));
  EXPECT_EQ(phys.getObject("region")->getInteger("startLine").getValueOr(0), 4);
  r = runCli({"--format", "gcc", "--ignore", "GL005", clean});
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{}) << r.out;
}

TEST(Baseline, RoundTripWeightsChangeThenABadNode) {
  std::string root = tempDir();
  std::string m = writeModel(root, "m.onnx", modelBytes(kModel));
  std::string baseline = root + "/graphlint-baseline.json";
  CliResult r = runCli({"--format", "gcc", "--fail-on", "warning", "--write-baseline", baseline, m});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("wrote 1 finding(s) to baseline"), std::string::npos) << r.err;
  auto j = llvm::json::parse(readFile(baseline));
  ASSERT_TRUE(static_cast<bool>(j));
  const llvm::json::Object &root0 = *j->getAsObject();
  EXPECT_EQ(root0.getInteger("graphlint_baseline").getValueOr(-1), 2);
  const llvm::json::Object &entry = *(*root0.getArray("findings"))[0].getAsObject();
  EXPECT_EQ(entry.getString("file").getValueOr(""), "m.onnx");
  EXPECT_EQ(entry.getString("code").getValueOr(""), "GL102");
  EXPECT_EQ(entry.getString("node").getValueOr(""), "n0");

  // Without the baseline the finding fails the run; with it, nothing new.
  EXPECT_EQ(runCli({"--fail-on", "warning", m}).exitCode, 1);
  r = runCli({"--no-color", "--fail-on", "warning", "--baseline", baseline, m});
  EXPECT_EQ(r.exitCode, 0) << r.out;
  EXPECT_NE(r.out.find("0 warnings, 0 notes (1 in the baseline)"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");

  // New weights: same fingerprints, still nothing new.
  ASSERT_NE(modelBytes(kModel), modelBytes(kModelNewWeights));
  writeModel(root, "m.onnx", modelBytes(kModelNewWeights));
  r = runCli({"--format", "gcc", "--fail-on", "warning", "--baseline", baseline, m});
  EXPECT_EQ(r.exitCode, 0) << r.out;
  EXPECT_EQ(r.out, "");

  // A bad node: exactly one new finding, and it fails the run.
  writeModel(root, "m.onnx", modelBytes(kModelExtraBadNode));
  r = runCli({"--format", "gcc", "--fail-on", "warning", "--baseline", baseline, m});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(codesIn(r.out), std::vector<std::string>{"GL102"}) << r.out;
  EXPECT_NE(r.out.find(m + ":4:1: warning: "), std::string::npos) << r.out;

  // The original finding fixed: its entry is listed as stale on stderr.
  writeModel(root, "m.onnx", modelBytes(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) {
  y = Relu (x)
}
)"));
  r = runCli({"--format", "gcc", "--baseline", baseline, m});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_NE(r.err.find("stale entry GL102 redundant-cast at m.onnx main node 'n0' (Cast)"), std::string::npos)
      << r.err;
  // A rule that did not run leaves its entries alone.
  r = runCli({"--format", "gcc", "--ignore", "GL102", "--baseline", baseline, m});
  EXPECT_EQ(r.err, "");
}

TEST(Baseline, BadBaselineFileIsExitTwo) {
  std::string root = tempDir();
  std::string m = writeModel(root, "m.onnx", modelBytes(kModel));
  struct Case { const char *text; const char *expected; };
  const Case cases[] = {
      {"not json", "not a graphlint baseline (invalid JSON"},
      {"{\"findings\": []}", "not a graphlint baseline (no \"graphlint_baseline\" version)"},
      {"{\"graphlint_baseline\": 99, \"findings\": []}", "baseline format version 99 is not supported"},
      {"{\"graphlint_baseline\": 2}", "baseline has no \"findings\" list"},
      {"{\"graphlint_baseline\": 2, \"findings\": [{\"code\": \"GL102\"}]}", "finding 1 lacks"},
      // Version 1 keyed FX findings by node names: refused with the way out.
      {"{\"graphlint_baseline\": 1, \"findings\": []}", "baseline format version 1 keyed findings by FX node names"},
  };
  for (const Case &c : cases) {
    writeFile(root + "/b.json", c.text);
    CliResult r = runCli({"--baseline", root + "/b.json", m});
    EXPECT_EQ(r.exitCode, 2) << c.text;
    EXPECT_NE(r.err.find(root + "/b.json: " + c.expected), std::string::npos) << c.text << "\ngot: " << r.err;
    EXPECT_EQ(r.out, "");
  }
  CliResult r = runCli({"--baseline", root + "/nope.json", m});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("cannot read baseline"), std::string::npos);
}

// Runs the CLI under a pseudo-terminal with util-linux `script`; both
// streams come back together, as a user sees them.
std::string runOnTerminal(const std::vector<std::string> &args) {
  std::string cmd = std::string("script -qec '") + GRAPHLINT_CLI;
  for (const std::string &a : args)
    cmd += " " + a;
  std::string out = tempDir() + "/tty.out";
  cmd += "' /dev/null > " + out + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return readFile(out);
}

TEST(Progress, ProgressLineOnATerminalIsErasedBeforeTheReport) {
  if (std::system("command -v script >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "util-linux 'script' is not installed: cannot run under a pseudo-terminal";
  std::string root = tempDir();
  std::string a = writeModel(root, "a.onnx", modelBytes(kModel));
  std::string b = writeModel(root, "b.onnx", modelBytes(kModel));
  std::string out = runOnTerminal({"--format", "gcc", "--exit-zero", a, b});
  EXPECT_NE(out.find("[1/2] "), std::string::npos) << out;
  EXPECT_NE(out.find("[2/2] "), std::string::npos) << out;
  // Erased (carriage return + erase-line) before the first report line.
  size_t report = out.find(a + ":1:1: warning");
  ASSERT_NE(report, std::string::npos) << out;
  EXPECT_EQ(out.rfind("\r\x1b[K", report), report - 4) << out;
  // One file, or --quiet: no progress line.
  EXPECT_EQ(runOnTerminal({"--format", "gcc", "--exit-zero", a}).find("[1/1]"), std::string::npos);
  EXPECT_EQ(runOnTerminal({"--quiet", "--exit-zero", a, b}).find("[1/2]"), std::string::npos);
}

TEST(Progress, NoProgressLineWhenStderrIsNotATerminal) {
  std::string root = tempDir();
  std::string a = writeModel(root, "a.onnx", modelBytes(kModel));
  std::string b = writeModel(root, "b.onnx", modelBytes(kModel));
  CliResult r = runCli({"--format", "gcc", a, b});
  EXPECT_EQ(r.err, "");
}

}  // namespace
