// --launch-config FILE: the user's own launch configuration read as a config
// layer, so a setup is not retyped. Three formats, told apart by their keys:
// a DeepSpeed ds_config.json, an accelerate config (YAML or JSON) and a
// torchtitan job config TOML of the releases before Trainer.Config. Each
// recognised key becomes a setup value (SetupKeys.h) checked by its key's
// row; keys graphlint does not model, and keys it does not know, are one
// warning line each. docs/configuration.md ("Launch configs") has the tables.
#pragma once

#include "graphlint/engine/Config.h"

#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace graphlint {

struct LaunchConfig {
  /// "DeepSpeed config", "accelerate config", "torchtitan job config".
  std::string format;
  /// origin: the file; showOrigin set, so `config --dump` names it.
  ConfigLayer layer;
  /// One line each, "FILE: 'KEY' ...", without a "graphlint: warning:" prefix.
  std::vector<std::string> warnings;
};

/// Parses a launch config's text; errors are one line naming `path`.
llvm::Expected<LaunchConfig> parseLaunchConfig(llvm::StringRef text, const std::string &path);
/// Reads and parses a launch config (at most 1 MiB, as a config file).
llvm::Expected<LaunchConfig> loadLaunchConfig(const std::string &path);

/// The subset of TOML that job configs use: [table] and [a.b] headers,
/// `key = value` with bare or dotted keys, basic and literal strings,
/// integers, floats, booleans and arrays of them (nested at most 8 deep).
/// Inline tables, arrays of tables, multi-line strings and dates are refused.
struct TomlEntry {
  std::string key;    // "parallelism.tensor_parallel_degree"
  std::string value;  // a string's characters, a number or bool as written, an array as "[a, b]"
  enum Kind : uint8_t { String, Integer, Float, Boolean, Array } kind;
  unsigned line;
  std::vector<std::string> items;  // an array's elements (strings unquoted)
};
llvm::Expected<std::vector<TomlEntry>> parseToml(llvm::StringRef text, const std::string &path);

}  // namespace graphlint
