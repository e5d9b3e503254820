// One graphlint subcommand on llvm::cl: its llvm::cl::SubCommand, the options
// it owns (in the order --help lists them, each in a help section), its
// positional arguments, and run(). Each subcommand is one file in this folder
// that defines a Command and registers it (registerCommand); main.cpp only
// dispatches. The help text, the "is not an option of" message and the
// argument check before llvm::cl parses are generated from these lists.
#pragma once

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace graphlint::cli {

namespace cl = llvm::cl;

/// Help sections, in the order the top-level --help prints them.
inline constexpr const char *kLintSection = "LINT OPTIONS";
inline constexpr const char *kConfigSection = "CONFIGURATION (docs/configuration.md)";
inline constexpr const char *kSetupSection = "TRAINING SETUP (for the cost analyses; config key setup:)";

/// One option as --help shows it and the argument check looks it up.
struct OptionEntry {
  cl::Option *option;
  const char *section;
  std::string shortName;  // "D", "o", or empty
  std::string valueHelp;  // "FILE", "text|json"; empty for a switch
  std::string help;       // lines separated by '\n'
  bool fileValue = false; // an empty value is "needs a file name"
  bool shared = false;    // a configuration/training-setup option (listed once in the top-level help)
};

class Command {
public:
  /// `usage`: what follows `graphlint NAME` in the usage line; `summary`: one
  /// line. `positional`: what the positional arguments are ("FILE...").
  Command(const char *name, const char *usage, const char *summary, const char *section);
  virtual ~Command() = default;

  const char *name() const { return name_; }
  const char *usageLine() const { return usage_; }
  const char *summary() const { return summary_; }
  cl::SubCommand &sub() { return sub_; }
  const std::vector<OptionEntry> &options() const { return options_; }

  /// Runs the command after llvm::cl parsed its arguments; the exit code.
  virtual int run() = 0;
  /// Text after "it takes" when a foreign option is given.
  virtual std::string takes() const;

  /// Creates an option of this subcommand and lists it. `mods` are
  /// llvm::cl modifiers (the name first); cl::sub is added here.
  template <typename Opt, typename... Mods>
  Opt &add(OptionEntry entry, const Mods &...mods) {
    auto o = std::make_unique<Opt>(mods..., cl::sub(sub_));
    Opt &ref = *o;
    entry.option = o.get();
    options_.push_back(std::move(entry));
    owned_.push_back(std::move(o));
    return ref;
  }
  /// A one-letter alias (`-o` for `--output`); `prefix`: the value may be
  /// glued on (`-Dbatch=8`, `-j4`).
  void alias(cl::Option &of, const char *letter, bool prefix);
  /// The positional arguments.
  cl::list<std::string> &positional(const char *what);

  /// The entry of a long option or one-letter alias, or nullptr.
  const OptionEntry *find(llvm::StringRef name, bool letter) const;
  /// Writes this command's --help.
  void printHelp(llvm::raw_ostream &os, bool topLevel) const;

protected:
  const char *name_, *usage_, *summary_, *section_;
  cl::SubCommand sub_;
  std::vector<OptionEntry> options_;
  std::vector<std::unique_ptr<cl::Option>> owned_;
  std::vector<std::pair<std::string, const cl::Option *>> letters_;
};

/// The commands, one file each; the first call creates and registers one.
Command &lintCommand();
Command &inspectCommand();
Command &planCommand();
Command &diffCommand();
Command &compareCommand();
Command &rulesCommand();
Command &ruleCommand();
Command &configCommand();
Command &verifyCommand();

/// Every command, in registration (help) order.
std::vector<Command *> &commands();
Command *findCommand(llvm::StringRef name);

/// The arguments after the command name, as given (after @FILE expansion):
/// what `diff --git` hands on to the diffs it runs.
std::vector<std::string> &commandArguments();

/// "graphlint: MSG" and "Try 'graphlint --help'." on stderr; returns 2.
int usage(const std::string &msg);
/// "graphlint: MSG" on stderr; returns 2.
int fail(const std::string &msg);

/// Checks the arguments after the command name against its options before
/// llvm::cl parses them, so that every mistake is one line in graphlint's
/// words: an unknown option, an option of another command, a missing value.
/// Returns the message, or empty.
std::string checkArguments(const Command &c, const std::vector<std::string> &args);

/// Help text layout: "  FLAGS" padded to column 27, then the help lines.
void printOption(llvm::raw_ostream &os, const std::string &flags, const std::string &help);
std::string flagsOf(const OptionEntry &e);

}  // namespace graphlint::cli
