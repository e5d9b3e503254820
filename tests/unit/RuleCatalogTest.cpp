// The rule catalog's contract, checked for every registered rule: its page in
// docs/rules/ exists under CODE-name.md, its heading and default severity
// match the RuleInfo, every option the rule declares is documented, the
// embedded copy (`graphlint rule CODE`) is the same page, and no page is left
// without a rule. Every option (derived from the rule's typed RuleOption
// table) has a default its own range accepts, a unique kebab-case name, its
// default on the rule's page and its row in docs/configuration.md. Then the ONNX-text fixtures of tests/fixtures/rules, whose
// expectations sit next to the triggering node (`# expect: GL102`), as the FX
// fixtures' do.
#include "TestSupport.h"

#include "graphlint/rules/Rule.h"

#include <fmt/format.h>
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

// The page names the option in backticks with its default in bold next to
// it (before or after, as prose or in an Options table), so a changed
// default in the options struct fails here until the page follows.
bool documentsDefault(const std::string &page, const RuleOptionInfo &o) {
  const std::string name = "`" + std::string(o.name) + "`";
  const std::string value = fmt::format("**{}**", o.defaultValue);
  for (size_t at = page.find(name); at != std::string::npos; at = page.find(name, at + 1)) {
    size_t from = at < 80 ? 0 : at - 80;
    if (page.substr(from, at - from + name.size() + 80).find(value) != std::string::npos)
      return true;
  }
  return false;
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
      EXPECT_TRUE(documentsDefault(text, o)) << "option " << o.name << ": no `" << o.name << "` with its default **"
                                             << fmt::format("{}", o.defaultValue) << "** beside it";
    EXPECT_EQ(ruleDoc(i.code), text) << "the embedded page is stale";
  }
  EXPECT_TRUE(pages.empty()) << "a page without a rule: " << *pages.begin();
}

TEST(RuleCatalog, EveryOptionHasAValidDefaultAndAUniqueName) {
  size_t options = 0;
  for (const Rule *r : allRules()) {
    const RuleInfo &i = r->info();
    std::set<std::string_view> names;
    for (const RuleOptionInfo &o : i.options) {
      SCOPED_TRACE(std::string(i.code) + " " + std::string(o.name));
      ++options;
      EXPECT_TRUE(names.insert(o.name).second) << "declared twice";
      EXPECT_NE(o.name, "severity") << "the key 'severity' is every rule's";
      EXPECT_TRUE(llvm::StringRef(o.name).find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") ==
                  llvm::StringRef::npos) << "not kebab-case";
      EXPECT_LE(o.min, o.defaultValue);
      EXPECT_LE(o.defaultValue, o.max);
      EXPECT_FALSE(o.help.empty());
    }
  }
  EXPECT_GT(options, 0u);
}

// docs/configuration.md's table of rule options, one row per option in code
// order, as `config --dump` and the range error print the numbers.
TEST(RuleCatalog, ConfigurationPageListsEveryOption) {
  std::vector<std::string> want, got;
  for (const Rule *r : allRules())
    for (const RuleOptionInfo &o : r->info().options)
      want.push_back(fmt::format("| {} {} | `{}` | {} | {} - {} | {} |", r->info().code, r->info().name, o.name,
                                 o.defaultValue, o.min, o.max, o.help));
  std::istringstream in(readFile(sourcePath("docs/configuration.md")));
  for (std::string line; std::getline(in, line);)
    if (llvm::StringRef(line).startswith("| GL"))
      got.push_back(line);
  EXPECT_EQ(got, want);
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
