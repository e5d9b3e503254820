// Snapshot tests of the text layout for a PyTorch export (issue 16): the
// user's line first with its snippet and caret, the module path before the
// node, one finding for a line run in every layer, suppression comments
// applied; without colour, with colour, and under a real terminal (a pty
// from util-linux `script`, where --color auto must colour exactly as
// --color always, and NO_COLOR must not). The fixture is
// tests/fixtures/fx/layers.py, exported to layers.fx.json beside it.
//
//   GRAPHLINT_UPDATE_GOLDENS=1 build/tests/graphlint_golden_tests --gtest_filter='GroupedGolden.*'
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string fixture() { return sourcePath("tests/fixtures/fx/layers.fx.json"); }

std::string normalise(std::string s) {
  const std::string root = sourcePath("");
  for (size_t at = s.find(root); at != std::string::npos; at = s.find(root, at))
    s.erase(at, root.size());
  return s;
}

std::string lint(std::vector<std::string> args, int wantExit = 0) {
  args.push_back(fixture());
  CliResult r = runCli(args);
  EXPECT_EQ(r.exitCode, wantExit) << r.out << r.err;
  return normalise(r.out);
}

// The CLI under a pseudo-terminal: stdout is a TTY, as in a user's shell.
std::optional<std::string> underTerminal(const std::string &env) {
  llvm::ErrorOr<std::string> script = llvm::sys::findProgramByName("script");
  if (!script)
    return std::nullopt;
  std::string dir = tempDir();
  std::string cmd = env + " '" + std::string(GRAPHLINT_CLI) + "' '" + fixture() + "' 2>/dev/null";
  std::vector<llvm::StringRef> argv{*script, "-qec", cmd, "/dev/null"};
  std::string outPath = dir + "/tty.out";
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(outPath), llvm::StringRef("")};
  int rc = llvm::sys::ExecuteAndWait(*script, argv, llvm::None, redirects, 120);
  if (rc != 0)
    return std::nullopt;
  std::string out = readFile(outPath);
  std::string clean;  // the terminal's CR LF line ends
  for (char c : out)
    if (c != '\r')
      clean += c;
  return normalise(clean);
}

TEST(GroupedGolden, TextWithSnippetAndGrouping) {
  std::string out = lint({"--no-color"});
  expectGolden("grouped.text.golden", out);
  // What the golden must show, whatever else changes in it.
  EXPECT_NE(out.find("tests/fixtures/fx/layers.py:19:9: warning[GL131]"), std::string::npos) << out;
  EXPECT_NE(out.find(" 19 |         h.relu_()"), std::string::npos) << out;
  EXPECT_NE(out.find("    |         ^\n"), std::string::npos) << out;
  EXPECT_NE(out.find("in 4 layers: blocks.0 ... blocks.3"), std::string::npos) << out;
  EXPECT_NE(out.find("--> blocks.0: node #"), std::string::npos) << out;
  EXPECT_EQ(out.find("GL112"), std::string::npos) << "suppressed by its comment";
}

TEST(GroupedGolden, TextInColour) { expectGolden("grouped.color.golden", lint({"--color", "always"})); }

TEST(GroupedGolden, Gcc) { expectGolden("grouped.gcc.golden", lint({"--format", "gcc"})); }

TEST(GroupedGolden, NoGroupListsEveryLayer) {
  std::string grouped = lint({"--no-color"});
  std::string each = lint({"--no-color", "--no-group"});
  auto count = [](const std::string &s, const std::string &what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count(grouped, "warning[GL131]"), 1u);
  EXPECT_EQ(count(each, "warning[GL131]"), 4u);
}

TEST(GroupedGolden, RealTerminalColoursLikeAlways) {
  std::optional<std::string> tty = underTerminal("");
  if (!tty)
    GTEST_SKIP() << "util-linux script is not available";
  EXPECT_EQ(*tty, lint({"--color", "always"}));
  std::optional<std::string> noColor = underTerminal("NO_COLOR=1");
  ASSERT_TRUE(noColor);
  EXPECT_EQ(*noColor, lint({"--no-color"}));
}

}  // namespace
