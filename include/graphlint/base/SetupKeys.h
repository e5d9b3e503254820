// The setup keys: one declarative table that drives every place a setup value
// passes through. `.graphlint.yaml`'s `setup:` mapping (Config.cpp), the
// command-line flags of the commands that take a setup (tools/graphlint/
// SetupFlags.cpp), the merge of defaults, file and command line
// (resolveConfig), `graphlint config --dump` and the help text are all loops
// over setupKeys(); adding a key is one row here and one field in Setup.
// docs/configuration.md describes the keys, docs/ARCHITECTURE.md the route one
// value takes from the command line to a rule.
#pragma once

#include "graphlint/base/Setup.h"

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>
#include <vector>

namespace graphlint {

/// Where a setup value was written: the message prefix differs (`--zero` on
/// the command line, `'zero'` in a config file), the check does not.
enum class SetupSyntax : uint8_t { CommandLine, ConfigFile };

struct SetupKey {
  /// The key under `setup:` and the long flag (`world-size`, `--world-size`).
  const char *key;
  /// The long flag when it differs from the key (`dim` for `dims`), or nullptr.
  const char *flag;
  /// How a value is written in help ("N", "sgd|momentum|adam|adamw"); empty
  /// for a switch (`--train`: no value on the command line, a boolean in YAML).
  const char *valueHelp;
  /// Help text, lines separated by '\n' (the help printer indents them).
  const char *help;
  /// A one-letter flag (`-D`), or nullptr.
  const char *shortFlag = nullptr;
  /// A second flag that sets a fixed value (`--fsdp` is `--zero 3`), or nullptr.
  const char *presetFlag = nullptr;
  const char *presetValue = nullptr;
  /// True in the "lint options" section of --help (backend, target, -D);
  /// false: the training setup.
  bool lintSection = false;
  /// A value the round-trip test writes (not the default): checked, then
  /// printed by --dump as `expectedDump`.
  const char *example;
  const char *exampleDump;

  /// Checks a value as written and returns it in canonical form (the stored
  /// text), or the one-line message refusing it, worded for `syntax`
  /// (`--zero expects an integer from 0 to 3, got '4'` on the command line,
  /// `'zero' expects ...` in a file). `dims` values are `NAME=SIZE`.
  struct Checked {
    std::optional<std::string> value;
    std::string error;
  };
  Checked (*check)(llvm::StringRef text, SetupSyntax syntax);
  /// Sets the field from a canonical value (what check returned).
  void (*apply)(Setup &s, const std::string &canonical);
  /// The field as `config --dump` prints it, after "  key:" (" adam",
  /// " {}", or the indented lines of a mapping).
  std::string (*dump)(const Setup &s);

  bool isSwitch() const { return !*valueHelp; }
  bool isDims() const { return llvm::StringRef(key) == "dims"; }
  /// A mapping in YAML (NAME: VALUE entries), a repeatable NAME=VALUE flag.
  bool isMapping() const { return isDims() || llvm::StringRef(key) == "tp-plan"; }
  const char *flagName() const { return flag ? flag : key; }
};

/// Every setup key, in the order --dump prints them.
const std::vector<SetupKey> &setupKeys();
/// The key named `key` (YAML key or long flag name), or nullptr.
const SetupKey *findSetupKey(llvm::StringRef key);
/// "target, backend, dims, ...", for the unknown-key message.
std::string setupKeyNames();
/// `s` as a double-quoted YAML scalar (config --dump).
std::string yamlQuoted(const std::string &s);

/// One value a configuration layer sets, already checked (canonical form).
struct SetupSetting {
  const SetupKey *key;
  std::string value;
};

/// Applies the settings, in order, over `s` (later ones win; dims merge name
/// by name), then resolves the hardware they name (Setup::resolveHardware)
/// and the device mesh (Setup::resolveMesh); returns the one-line reason
/// when the mesh degrees and --world-size disagree.
std::optional<std::string> applySetup(Setup &s, const std::vector<SetupSetting> &settings);

}  // namespace graphlint
