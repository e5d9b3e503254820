// The reporting flags and CI formats: --output, --statistics, --quiet,
// --format github escaping, and --format sarif validated against the official
// SARIF 2.1.0 schema (../shared/schemas) with Debian's python3-jsonschema.
#include "TestSupport.h"

#include "graphlint/report/Reporters.h"
#include "graphlint/rules/Rule.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>

#include <cstdlib>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string model(const std::string &name) { return sourcePath("models/" + name); }

std::string fixture(const std::string &name) {
  std::string path = tempDir() + "/" + name + ".onnx";
  writeFile(path, onnxFromText(readFile(sourcePath("tests/fixtures/" + name + ".onnxtxt"))));
  return path;
}

std::vector<std::string> allModels() {
  std::vector<std::string> out;
  for (const char *m : {"control_flow.onnx", "gpt_tiny.onnx", "mobilenet_v3_small.onnx", "resnet18.onnx"})
    out.push_back(model(m));
  for (const char *f : {"invalid_graph", "custom_op", "clean"})
    out.push_back(fixture(f));
  return out;
}

TEST(ReportingFlags, OutputWritesFileNotStdout) {
  std::string out = tempDir() + "/report.txt";
  CliResult r = runCli({"--no-color", "--output", out, model("resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::string written = readFile(out);
  EXPECT_NE(written.find("1 file checked"), std::string::npos) << written;
  CliResult direct = runCli({"--no-color", model("resnet18.onnx")});
  EXPECT_EQ(written, direct.out);
}

TEST(ReportingFlags, OutputUnwritableIsExit2) {
  CliResult r = runCli({"--output", tempDir() + "/no/such/dir/report.txt", model("resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(ReportingFlags, OutputNeedsValue) {
  CliResult r = runCli({model("resnet18.onnx"), "--output"});
  EXPECT_EQ(r.exitCode, 2);
}

TEST(ReportingFlags, QuietPrintsOnlySummaryAndFatal) {
  std::string empty = tempDir() + "/empty.onnx";
  writeFile(empty, "");
  CliResult r = runCli({"--no-color", "--quiet", fixture("invalid_graph"), empty});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_EQ(r.out.find("error[GL"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": fatal: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 files checked"), std::string::npos) << r.out;
  // Exit status is unchanged by --quiet.
  CliResult q = runCli({"-q", "--no-color", fixture("invalid_graph")});
  EXPECT_EQ(q.exitCode, 1);
  EXPECT_EQ(std::count(q.out.begin(), q.out.end(), '\n'), 1) << q.out;
}

TEST(ReportingFlags, StatisticsSortedByCountThenCode) {
  CliResult r = runCli({"--no-color", "--statistics", fixture("invalid_graph"), fixture("custom_op"),
                        model("resnet18.onnx")});
  std::string out = r.out;
  size_t summary = out.find(" checked: ");
  ASSERT_NE(summary, std::string::npos) << out;
  std::string stats = out.substr(out.find('\n', summary) + 1);
  ASSERT_FALSE(stats.empty()) << out;
  // Recount from the JSON report and compare.
  CliResult j = runCli({"--format", "json", fixture("invalid_graph"), fixture("custom_op"), model("resnet18.onnx")});
  auto v = llvm::json::parse(j.out);
  ASSERT_TRUE(static_cast<bool>(v));
  std::map<std::string, unsigned> counts;
  std::map<std::string, std::string> names;
  for (const llvm::json::Value &f : *v->getAsObject()->getArray("files"))
    for (const llvm::json::Value &d : *f.getAsObject()->getArray("diagnostics")) {
      std::string code = d.getAsObject()->getString("code")->str();
      ++counts[code];
      names[code] = d.getAsObject()->getString("name")->str();
    }
  std::vector<std::pair<std::string, unsigned>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  std::string want;
  for (const auto &[code, n] : rows) {
    std::string num = std::to_string(n);
    want += std::string(6 - std::min<size_t>(6, num.size()), ' ') + num + "  " + code + " " + names[code] + "\n";
  }
  EXPECT_EQ(stats, want);
}

TEST(ReportingFlags, GithubEscaping) {
  EXPECT_EQ(githubEscapeData("100% done\r\nnext"), "100%25 done%0D%0Anext");
  EXPECT_EQ(githubEscapeProperty("a:b,c%"), "a%3Ab%2Cc%25");
  CliResult r = runCli({"--format", "github", fixture("invalid_graph")});
  EXPECT_EQ(r.exitCode, 1);
  ASSERT_FALSE(r.out.empty());
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    EXPECT_TRUE(l.rfind("::error file=", 0) == 0 || l.rfind("::warning file=", 0) == 0 ||
                l.rfind("::notice file=", 0) == 0)
        << l;
    EXPECT_NE(l.find(",line="), std::string::npos) << l;
    EXPECT_NE(l.find(",title=GL"), std::string::npos) << l;
  }
}

TEST(ReportingFlags, SarifUriAndFingerprint) {
  EXPECT_EQ(sarifUri("models/a b.onnx"), "models/a%20b.onnx");
  EXPECT_EQ(sarifUri("./x.onnx"), "x.onnx");
  EXPECT_EQ(sarifUri("/abs/p.onnx"), "file:///abs/p.onnx");
  Diagnostic a;
  a.code = "GL002";
  a.location.graphPath = "main";
  a.location.nodeName = "n";
  a.location.opType = "Foo";
  Diagnostic b = a;
  b.message = "different message";
  b.location.nodeIndex = 7;
  EXPECT_EQ(fingerprintOf(a), fingerprintOf(b));
  EXPECT_EQ(fingerprintOf(a).size(), 16u);
  b.location.nodeName = "m";
  EXPECT_NE(fingerprintOf(a), fingerprintOf(b));
  EXPECT_EQ(firstParagraph("# T\n\nDefault severity: error\n\n## What\n\nOne\ntwo.\n\nThree."), "One two.");
}

TEST(ReportingFlags, SarifValidatesAgainstOfficialSchema) {
  if (!sharedAvailable())
    GTEST_SKIP() << "../shared is absent: no SARIF schema to validate against";
  std::string schema = sharedPath("schemas/sarif-schema-2.1.0.json");
  ASSERT_TRUE(llvm::sys::fs::exists(schema)) << schema;
  if (std::system("/usr/bin/python3 -c 'import jsonschema' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3-jsonschema is not installed (scripts/setup.sh installs it)";
  std::string dir = tempDir();
  std::string empty = dir + "/empty model.onnx";
  writeFile(empty, "");
  std::vector<std::string> files = allModels();
  files.push_back(empty);
  std::string sarif = dir + "/out.sarif";
  std::vector<std::string> args{"--format", "sarif", "--output", sarif};
  args.insert(args.end(), files.begin(), files.end());
  CliResult r = runCli(args);
  EXPECT_EQ(r.exitCode, 2) << r.err;

  std::string py = dir + "/validate.py";
  writeFile(py, "import json, sys, jsonschema\n"
                "schema = json.load(open(sys.argv[1]))\n"
                "log = json.load(open(sys.argv[2]))\n"
                "errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=str)\n"
                "for e in errors[:5]: print(list(e.absolute_path), e.message)\n"
                "sys.exit(1 if errors else 0)\n");
  std::string cmd = "/usr/bin/python3 '" + py + "' '" + schema + "' '" + sarif + "' > '" + dir + "/py.out' 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << readFile(dir + "/py.out");

  auto v = llvm::json::parse(readFile(sarif));
  ASSERT_TRUE(static_cast<bool>(v)) << llvm::toString(v.takeError());
  const llvm::json::Object &root = *v->getAsObject();
  EXPECT_EQ(root.getString("version"), llvm::StringRef("2.1.0"));
  const llvm::json::Array &runs = *root.getArray("runs");
  ASSERT_EQ(runs.size(), 1u);
  const llvm::json::Object &run = *runs[0].getAsObject();
  const llvm::json::Object &driver = *run.getObject("tool")->getObject("driver");
  EXPECT_EQ(driver.getString("name"), llvm::StringRef("graphlint"));
  const llvm::json::Array &rules = *driver.getArray("rules");
  ASSERT_EQ(rules.size(), allRules().size());
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(rules[i].getAsObject()->getString("id")->str(), std::string(allRules()[i]->info().code));
    EXPECT_TRUE(rules[i].getAsObject()->getObject("help")) << i;
  }
  std::set<std::string> ruleIds;
  for (const llvm::json::Value &res : *run.getArray("results")) {
    const llvm::json::Object &o = *res.getAsObject();
    std::string id = o.getString("ruleId")->str();
    ruleIds.insert(id);
    int64_t idx = *o.getInteger("ruleIndex");
    EXPECT_EQ(rules[idx].getAsObject()->getString("id")->str(), id);
    EXPECT_TRUE(o.getObject("partialFingerprints")->getString("graphlint/v2"));
    const llvm::json::Object &phys = *(*o.getArray("locations"))[0].getAsObject()->getObject("physicalLocation");
    std::string uri = phys.getObject("artifactLocation")->getString("uri")->str();
    EXPECT_EQ(uri.find('\\'), std::string::npos) << uri;
    EXPECT_GE(*phys.getObject("region")->getInteger("startLine"), 1);
  }
  for (const char *code : {"GL001", "GL002", "GL004"})
    EXPECT_TRUE(ruleIds.count(code)) << code;
  const llvm::json::Object &inv = *(*run.getArray("invocations"))[0].getAsObject();
  EXPECT_EQ(inv.getBoolean("executionSuccessful"), false);
  const llvm::json::Array &notes = *inv.getArray("toolExecutionNotifications");
  ASSERT_EQ(notes.size(), 1u);
  std::string uri = (*notes[0].getAsObject()->getArray("locations"))[0]
                        .getAsObject()
                        ->getObject("physicalLocation")
                        ->getObject("artifactLocation")
                        ->getString("uri")
                        ->str();
  EXPECT_NE(uri.find("empty%20model.onnx"), std::string::npos) << uri;
}

}  // namespace

// --timings adds the per-phase table on stderr and changes nothing else
// (docs/commands/lint.md, docs/performance.md).
TEST(Cli, TimingsGoToStderrAndLeaveTheReportAlone) {
  std::string m = model("resnet18.onnx");
  CliResult plain = runCli({"--format", "json", m});
  CliResult timed = runCli({"--format", "json", "--timings", m});
  EXPECT_EQ(timed.exitCode, plain.exitCode);
  EXPECT_EQ(timed.out, plain.out);
  for (const char *phase : {"import: parse protobuf", "import: build IR", "import: shape completion: per-node inference",
                            "analysis FusionPlan", "rule GL001 invalid-model", "report: render", "process CPU so far"})
    EXPECT_NE(timed.err.find(phase), std::string::npos) << phase << " missing from:\n" << timed.err;
  EXPECT_EQ(plain.err.find("CPU ms"), std::string::npos);
}
