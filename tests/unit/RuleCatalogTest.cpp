// The rule catalog's contract, checked for every registered rule: its page in
// docs/rules/ exists under CODE-name.md, its heading and default severity
// match the RuleInfo, every option the rule declares is documented, the
// embedded copy (`graphlint rule CODE`) is the same page, and no page is left
// without a rule. Then the ONNX-text fixtures of tests/fixtures/rules, whose
// expectations sit next to the triggering node (`# expect: GL102`), as the FX
// fixtures' do.
#include "TestSupport.h"

#include "graphlint/lint/Rule.h"

#include <gtest/gtest.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <map>
#include <set>
#include <sstream>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::vector<std::string> filesIn(const std::string &dir, llvm::StringRef ext) {
  std::vector<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).endswith(ext))
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(RuleCatalog, EveryRuleHasAPageMatchingItsInfo) {
  std::set<std::string> pages;
  for (const std::string &p : filesIn(sourcePath("docs/rules"), ".md"))
    pages.insert(llvm::sys::path::filename(p).str());
  for (const Rule *r : allRules()) {
    const RuleInfo &i = r->info();
    std::string file = std::string(i.code) + "-" + std::string(i.name) + ".md";
    SCOPED_TRACE(file);
    ASSERT_TRUE(pages.erase(file)) << "no page docs/rules/" << file;
    std::string text = readFile(sourcePath("docs/rules/" + file));
    std::istringstream in(text);
    std::string heading, blank, severity;
    std::getline(in, heading);
    std::getline(in, blank);
    std::getline(in, severity);
    EXPECT_EQ(heading, "# " + std::string(i.code) + " " + std::string(i.name));
    // "Default severity: warning", optionally followed by " (when it differs)".
    std::string want = "Default severity: " + std::string(severityName(i.severity));
    EXPECT_TRUE(severity == want || llvm::StringRef(severity).startswith(want + " (")) << severity;
    for (const RuleOptionInfo &o : i.options)
      EXPECT_NE(text.find("`" + std::string(o.name) + "`"), std::string::npos) << "option " << o.name << " undocumented";
    EXPECT_EQ(ruleDoc(i.code), text) << "the embedded page is stale";
  }
  EXPECT_TRUE(pages.empty()) << "a page without a rule: " << *pages.begin();
}

// Each fixture is named CODE-name.onnxtxt: the findings of that rule, and of
// every code its markers name, must be exactly the marked nodes (by line).
TEST(RuleCatalog, OnnxTextFixturesRaiseExactlyTheirMarkedFindings) {
  std::vector<std::string> fixtures = filesIn(sourcePath("tests/fixtures/rules"), ".onnxtxt");
  ASSERT_FALSE(fixtures.empty());
  for (const std::string &path : fixtures) {
    std::string name = llvm::sys::path::filename(path).str();
    SCOPED_TRACE(name);
    std::set<std::string> codes = {name.substr(0, 5)};
    std::set<Finding> want;
    std::vector<unsigned> nodeLines;  // the text line of each main-graph node, in order
    std::istringstream in(readFile(path));
    bool inBody = false;
    std::string line;
    for (unsigned no = 1; std::getline(in, line); ++no) {
      llvm::StringRef l = llvm::StringRef(line).split('#').first.trim();
      if (l.endswith("{"))
        inBody = true;
      else if (l == "}")
        inBody = false;
      else if (inBody && l.contains(" = "))
        nodeLines.push_back(no);
      size_t at = line.find("# expect: ");
      if (at == std::string::npos)
        continue;
      for (llvm::StringRef rest = llvm::StringRef(line).drop_front(at + 10); !rest.empty();) {
        auto [code, tail] = rest.split(',');
        if (code.trim().startswith("GL")) {
          want.insert({code.trim().str(), no});
          codes.insert(code.trim().str());
        }
        rest = tail;
      }
    }
    FileReport r = lintText(readFile(path));
    ASSERT_FALSE(r.fatal) << r.fatalMessage;
    std::set<Finding> got;
    for (const Diagnostic &d : r.diagnostics) {
      if (!codes.count(d.code))
        continue;
      unsigned at = 0;  // whole-file findings have no line of their own
      if (d.location.nodeIndex && d.location.graphPath == "main" && *d.location.nodeIndex < nodeLines.size())
        at = nodeLines[*d.location.nodeIndex];
      got.insert({d.code, at});
    }
    EXPECT_EQ(got, want) << "expected: " << describeFindings(want) << "\nactual:   " << describeFindings(got);
  }
}
