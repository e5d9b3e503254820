// graphlint config --dump FILE: the effective configuration for FILE.
#include "Command.h"
#include "SetupFlags.h"
#include "Shared.h"

#include "graphlint/engine/Session.h"

namespace graphlint::cli {

namespace {

class ConfigDump : public Command {
public:
  ConfigDump() : Command("config", "--dump FILE [OPTIONS]", "print the effective configuration for FILE", "CONFIG OPTIONS") {}

  int run() override {
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
