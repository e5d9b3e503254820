// The graphlint command line: dispatch only. Each subcommand (lint, inspect,
// plan, diff, rules, rule, config, verify) is one file in this folder with its own
// llvm::cl options (Command.h); linting goes through the engine's LintSession (src/engine/Session.cpp).
#include "Command.h"

#include "graphlint/import/Importer.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/MessageText.h"

#include <llvm/Support/Allocator.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/StringSaver.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

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
from FILE, a regular text file of at most 1 MiB whose arguments are split
as a shell would (quotes, backslashes); an @ argument inside a response file
is refused, and @X where X does not exist is an ordinary argument (a model
named '@model.onnx'); --isolated and --no-config are described in
docs/configuration.md. `graphlint COMMAND --help` shows one command's options.

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

// @FILE response files, expanded here and nowhere else (llvm::cl's own
// expansion then finds nothing left to expand): the file goes through the
// checked input reader (a regular file of at most 1 MiB: no /dev/zero, no
// FIFO), must be text, and may not name another response file. Errors name
// the file and line, never its content (docs/cli.md).
llvm::Expected<std::vector<std::string>> expandResponseFiles(const std::vector<std::string> &args) {
  std::vector<std::string> out;
  for (const std::string &a : args) {
    std::string path = a.substr(a.empty() ? 0 : 1);
    if (a.size() < 2 || a[0] != '@' || !llvm::sys::fs::exists(path)) {
      out.push_back(a);  // not a response file: an ordinary argument, as llvm::cl leaves it
      continue;
    }
    auto text = readInputFile(path, InputKind::ResponseFile);
    if (!text)
      return text.takeError();
    std::string shown = oneLine(path);
    std::string copy = *text;
    bool binary = makeValidUtf8(copy) || llvm::any_of(*text, [](char c) {
                    unsigned char u = static_cast<unsigned char>(c);
                    return (u < 0x20 && !llvm::StringRef(" \t\n\r\f\v").contains(c)) || u == 0x7f;
                  });
    if (binary)
      return stringError(fmt::format("response file '{}': is not a text file of arguments", shown));
    llvm::BumpPtrAllocator alloc;
    llvm::StringSaver saver(alloc);
    llvm::SmallVector<const char *, 0> tokens;
    cl::TokenizeGNUCommandLine(*text, saver, tokens, /*MarkEOLs=*/true);
    unsigned line = 1;
    for (const char *t : tokens) {
      if (!t) {  // the end of a line
        ++line;
        continue;
      }
      if (*t == '@')
        return stringError(fmt::format("response file '{}' line {}: names another response file (@FILE inside "
                                       "a response file is not expanded)",
                                       shown, line));
      out.push_back(t);
    }
  }
  return out;
}

// A stdout that cannot be written (a full disk, closed, a reader gone with
// SIGPIPE ignored): one line and exit 2. llvm::outs() would otherwise abort
// the process at exit ("LLVM ERROR: IO failure on output stream").
int finishOutput(int code) {
  llvm::raw_fd_ostream &out = llvm::outs();
  out.flush();
  if (std::error_code ec = out.error()) {
    out.clear_error();
    llvm::errs() << "graphlint: cannot write to standard output: " << ec.message() << "\n";
    code = 2;
  }
  llvm::errs().flush();
  if (llvm::errs().has_error())
    llvm::errs().clear_error();  // nowhere left to say it
  return code;
}

// A closed stdin, stdout or stderr would be reused by the next open(): a
// report could land in a file opened for something else. Each closed one
// is held by /dev/null opened read-only, so writing to it fails cleanly.
void holdClosedStandardStreams() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      int held = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (held >= 0 && held != fd) {
        ::dup2(held, fd);
        ::close(held);
      }
    }
}

int runCommand(std::vector<std::string> args);

}  // namespace

int main(int argc, char **argv) {
  holdClosedStandardStreams();
  return finishOutput(runCommand(std::vector<std::string>(argv + 1, argv + argc)));
}

namespace {

int runCommand(std::vector<std::string> args) {
  // Registration order is the order of --help.
  for (Command &(*make)() : {lintCommand, inspectCommand, planCommand, diffCommand, compareCommand, rulesCommand, ruleCommand, configCommand, verifyCommand})
    make();
  auto expanded = expandResponseFiles(args);
  if (!expanded)
    return fail(llvm::toString(expanded.takeError()));
  args = std::move(*expanded);
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
  // --isolated: the environment configures nothing (docs/configuration.md).
  for (const std::string &s : args) {
    if (s == "--")
      break;
    if (s == "--isolated")
      HardwareCatalog::ignoreEnvironment();
  }
  // An explicit GRAPHLINT_HARDWARE_FILE that cannot be read stops the run
  // before any flag is read (--target names a profile it may define).
  if (const char *hw = std::getenv("GRAPHLINT_HARDWARE_FILE"); hw && *hw) {
    const std::string &why = HardwareCatalog::instance().loadError();
    if (!why.empty())
      return fail("GRAPHLINT_HARDWARE_FILE: " + why);
  }
  commandArguments() = args;
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

}  // namespace
