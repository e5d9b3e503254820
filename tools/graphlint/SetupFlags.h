// The options a command shares with the config file: the training setup and
// `--config` (generated from the setup-key table, SetupKeys.h) and the rule
// selection (--select ... --baseline). Each command that resolves a
// configuration adds them to itself; toLayer() turns what was given into the
// session's command-line ConfigLayer, with graphlint's messages.
#pragma once

#include "Command.h"

#include "graphlint/engine/Config.h"

#include <optional>
#include <string>
#include <vector>

namespace graphlint::cli {

class SetupFlags {
public:
  /// `owned`: setup keys the command has options of its own for (plan's
  /// --target list and the keys it searches), which get no flag here;
  /// owning world-size also drops --nnodes and --nproc-per-node.
  explicit SetupFlags(Command &c, const std::vector<std::string> &owned = {});
  /// Adds the values given, checked, in command-line order (a later --zero
  /// beats an earlier --fsdp); the message of the first bad value.
  std::optional<std::string> toLayer(ConfigLayer &layer) const;
  const std::string &configFile() const { return configOpt_.getValue(); }
  /// --launch-config FILE (LaunchConfig.h), or "".
  const std::string &launchConfig() const { return launchOpt_.getValue(); }
  /// --no-config or --isolated: no config discovery.
  bool noConfig() const { return noConfig_ || isolated_; }
  bool isolated() const { return isolated_; }

private:
  struct Flag {
    const SetupKey *key;
    cl::Option *option;
    bool preset;  // --fsdp
  };
  std::vector<Flag> flags_;
  cl::opt<std::string> &configOpt_, &launchOpt_;
  cl::opt<bool> &noConfig_, &isolated_;
  // torchrun's --nnodes and --nproc-per-node: world-size and gpus-per-node
  // (null where the command owns the world size).
  cl::opt<std::string> *nnodes_ = nullptr, *nprocPerNode_ = nullptr;
};

class PolicyFlags {
public:
  /// `withGate`: also --fail-on (a severity) and --baseline; a command with
  /// a gate of its own (diff) goes without them.
  explicit PolicyFlags(Command &c, bool withGate = true);
  std::optional<std::string> toLayer(ConfigLayer &layer) const;
  const std::string &baseline() const;

private:
  cl::opt<std::string> &select_, &extendSelect_, &ignore_;
  cl::opt<std::string> *failOn_ = nullptr, *baseline_ = nullptr;
  cl::opt<bool> &reportUnused_;
};

/// An empty file name given to a file option: "--X needs a file name".
std::optional<std::string> emptyFileName(const Command &c);

}  // namespace graphlint::cli
