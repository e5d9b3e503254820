// graphlint config --dump FILE: the effective configuration for FILE.
// graphlint config --keys [--format text|json]: the setup-key table itself,
// which scripts/gen_setup_keys.py turns into the Python API's keyword table
// (python/graphlint/_setup_keys.py) and docs/configuration.md's key list.
#include "Command.h"
#include "SetupFlags.h"
#include "Shared.h"

#include "graphlint/base/SetupKeys.h"
#include "graphlint/engine/Session.h"

#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>

#include <fmt/format.h>

#include <algorithm>

namespace graphlint::cli {

namespace {

// The Python keyword of a setup key: `world-size` -> world_size.
std::string pythonName(const SetupKey &k) {
  std::string s = k.key;
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

void printKeysJson(llvm::raw_ostream &os) {
  llvm::json::Array keys;
  for (const SetupKey &k : setupKeys()) {
    llvm::json::Object o{{"key", k.key},
                         {"flag", std::string("--") + k.flagName()},
                         {"python", pythonName(k)},
                         {"value", k.valueHelp},
                         {"switch", k.isSwitch()},
                         {"mapping", k.isMapping()},
                         {"section", k.lintSection ? "lint" : "training"},
                         {"help", k.help}};
    if (k.shortFlag)
      o["short"] = std::string("-") + k.shortFlag;
    if (k.presetFlag)
      o["preset"] = llvm::json::Object{{"flag", std::string("--") + k.presetFlag}, {"value", k.presetValue}};
    keys.push_back(std::move(o));
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(keys))) << "\n";
}

void printKeysText(llvm::raw_ostream &os) {
  for (const SetupKey &k : setupKeys()) {
    std::string flags = std::string("--") + k.flagName();
    if (k.shortFlag)
      flags = std::string("-") + k.shortFlag + ", " + flags;
    if (k.presetFlag)
      flags += std::string(" (--") + k.presetFlag + " = " + k.presetValue + ")";
    std::string help = k.help;
    std::replace(help.begin(), help.end(), '\n', ' ');
    os << fmt::format("{:<24} {:<34} {}\n", k.key, flags, help);
  }
}

class ConfigDump : public Command {
public:
  ConfigDump()
      : Command("config", "--dump FILE [OPTIONS] | --keys [--format text|json]",
                "print the effective configuration for FILE, or the setup keys", "CONFIG OPTIONS") {}

  int run() override {
    if (keys_) {
      if (dump_ || !files_.empty())
        return usage("config --keys takes no FILE and no --dump");
      if (format_ == "json")
        printKeysJson(llvm::outs());
      else if (format_ == "text")
        printKeysText(llvm::outs());
      else
        return usage("config: --format must be text or json");
      return 0;
    }
    SessionOptions so;
    if (auto err = readSetup(*this, setup_, so))
      return usage(*err);
    if (auto err = policy_.toLayer(so.commandLine))
      return usage(*err);
    if (!dump_ || files_.size() != 1)
      return usage("config expects --dump FILE, e.g. 'graphlint config --dump models/resnet18.onnx'");
    LintSession session(std::move(so));
    auto config = session.configFor(files_[0]);
    if (!config)
      return fail(llvm::toString(config.takeError()));
    dumpConfig(*config, files_[0], llvm::outs());
    return 0;
  }

private:
  cl::opt<bool> &dump_ = add<cl::opt<bool>>(
      {nullptr, nullptr, "", "", "print every key of FILE's configuration as .graphlint.yaml text"}, "dump");
  cl::opt<bool> &keys_ = add<cl::opt<bool>>(
      {nullptr, nullptr, "", "",
       "print the setup keys instead: each key of `setup:`, its flag,\n"
       "its Python keyword (graphlint.check) and its help"},
      "keys");
  cl::opt<std::string> &format_ = add<cl::opt<std::string>>(
      {nullptr, nullptr, "", "text|json", "with --keys: a table (default) or a JSON array"}, "format",
      cl::init("text"));
  cl::list<std::string> &files_ = positional("FILE");
  SetupFlags setup_{*this};
  PolicyFlags policy_{*this};
};

}  // namespace

Command &configCommand() {
  static ConfigDump c;
  return c;
}

}  // namespace graphlint::cli
