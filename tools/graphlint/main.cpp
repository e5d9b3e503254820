// The graphlint command line: dispatch only. Each subcommand (lint, inspect,
// rules, rule, config, verify) is one file in this folder with its own
// llvm::cl options (Command.h); linting goes through the engine's LintSession (src/engine/Session.cpp).
#include "Command.h"

#include "graphlint/import/Importer.h"
#include "graphlint/base/HardwareProfile.h"

#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace graphlint;
using namespace graphlint::cli;

namespace {

constexpr const char *kHeader = "graphlint - static pre-launch linter for deep-learning graphs\n";

constexpr const char *kFooter = R"(
EXIT CODES
  0  no finding at or above --fail-on
  1  at least one finding at or above --fail-on
  2  usage error, an invalid config or baseline file, or a file could not
     be read or is not a model

Arguments: values follow the flag or are inlined (--format json, --format=json,
-D batch=8, -Dbatch=8, -j4); `--` ends the options; @FILE reads more arguments
from FILE (llvm::cl response files). `graphlint COMMAND --help` shows one
command's options.

Docs: docs/ (one page per rule in docs/rules/, output formats in docs/output-formats.md,
configuration, suppressions and baselines in docs/configuration.md,
the FX graph format and graphlint-export in docs/fx-format.md).
)";

// graphlint --help: every command's usage line, then lint's options in full
// and the other commands' own ones, all generated from their llvm::cl options.
void printTopLevelHelp(llvm::raw_ostream &os) {
  os << kHeader << "\nUSAGE\n";
  for (Command *c : commands()) {
    std::string line = std::string("graphlint ") + (c == &lintCommand() ? "[lint] " : std::string(c->name()) + " ") +
                       c->usageLine();
    os << "  " << line << std::string(line.size() < 39 ? 39 - line.size() : 1, ' ') << c->summary() << "\n";
  }
  os << "  graphlint --help | --version           (--version: the version, and the FX format versions read)\n";
  for (Command *c : commands())
    c->printHelp(os, /*topLevel=*/true);
  os << kFooter;
}

}  // namespace

int main(int argc, char **argv) {
  // Registration order is the order of --help.
  for (Command &(*make)() : {lintCommand, inspectCommand, rulesCommand, ruleCommand, configCommand, verifyCommand})
    make();
  std::vector<std::string> args(argv + 1, argv + argc);
  Command *command = !args.empty() ? findCommand(args[0]) : nullptr;
  if (command)
    args.erase(args.begin());
  else
    command = &lintCommand();  // no command: lint
  // --help and --version win wherever they appear before `--`.
  for (const std::string &s : args) {
    if (s == "--")
      break;
    if (s == "-h" || s == "--help") {
      if (command == &lintCommand())
        printTopLevelHelp(llvm::outs());
      else
        command->printHelp(llvm::outs(), /*topLevel=*/false);
      return 0;
    }
    if (s == "--version") {
      llvm::outs() << "graphlint " << GRAPHLINT_VERSION << "\n"
                   << "graphlint-fx " << kFxFormatOldest << "-" << kFxFormatNewest << "\n";
      return 0;
    }
  }
  // An explicit GRAPHLINT_HARDWARE_FILE that cannot be read stops the run
  // before any flag is read (--target names a profile it may define).
  if (const char *hw = std::getenv("GRAPHLINT_HARDWARE_FILE"); hw && *hw) {
    const std::string &why = HardwareCatalog::instance().loadError();
    if (!why.empty())
      return fail("GRAPHLINT_HARDWARE_FILE: " + why);
  }
  if (std::string err = checkArguments(*command, args); !err.empty())
    return usage(err);
  std::vector<const char *> clArgs{"graphlint", command->name()};
  for (const std::string &s : args)
    clArgs.push_back(s.c_str());
  std::string clError;
  llvm::raw_string_ostream errs(clError);
  if (!cl::ParseCommandLineOptions(static_cast<int>(clArgs.size()), clArgs.data(), "", &errs, nullptr,
                                   /*LongOptionsUseDoubleDash=*/true)) {
    llvm::StringRef first = llvm::StringRef(errs.str()).split('\n').first;
    first.consume_front("graphlint: ");
    return usage(first.str());
  }
  return command->run();
}
