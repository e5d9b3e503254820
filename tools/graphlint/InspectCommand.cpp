// graphlint inspect FILE: a model's structure, types and parameters, and
// optionally its fusion plan.
#include "Command.h"
#include "SetupFlags.h"
#include "Shared.h"

#include "graphlint/ir/Printer.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/report/Reporters.h"

#include <llvm/Support/FormatVariadic.h>

namespace graphlint::cli {

namespace {

class Inspect : public Command {
public:
  Inspect() : Command("inspect", "[OPTIONS] FILE", "print a model's structure, types and parameters", "INSPECT OPTIONS") {}

  int run() override {
    SessionOptions so;
    if (auto err = readOneFileSetup(*this, setup_, so, files_.size(), format_))
      return usage(*err);
    LintSession session(std::move(so));
    const std::string &file = files_[0];
    std::optional<Config> config;
    std::unique_ptr<Model> model = importConfigured(session, file, config);
    if (!model)
      return 2;
    const std::string &dot = emitDot_;
    if (!dot.empty() && !outputsAllowed(session.inputs({file}), {{dot, "--emit-dot"}}))
      return 2;
    FusionSummary fusion;
    if (fusion_ || !dot.empty())
      fusion = summariseFusion(*model, FusionPlan(*model, config->setup.backend), !dot.empty());
    if (format_ == "json") {
      llvm::json::Value v = inspectJson(*model);
      if (fusion_)
        v.getAsObject()->insert({"fusion", fusionToJson(fusion)});
      llvm::outs() << llvm::formatv("{0:2}", v) << "\n";
    } else if (printIr_) {
      printModel(*model, llvm::outs());
    } else {
      renderInspectText(*model, llvm::outs());
    }
    if (fusion_ && format_ != "json")
      renderFusionText(fusion, file, llvm::outs());
    llvm::outs().flush();
    if (!dot.empty() &&
        !writeOutputFile(dot, [&](llvm::raw_ostream &os) { renderDot(fusion, file, os); }))
      return 2;
    return 0;
  }

private:
  cl::opt<std::string> &format_ = add<cl::opt<std::string>>(
      {nullptr, nullptr, "", "text|json", "text summary (default) or the JSON contract"}, "format", cl::init("text"));
  cl::opt<bool> &printIr_ =
      add<cl::opt<bool>>({nullptr, nullptr, "", "", "print every node with its inferred types"}, "print-ir");
  cl::opt<bool> &fusion_ = add<cl::opt<bool>>(
      {nullptr, nullptr, "", "", "the fusion plan (text: appended to the summary;\njson: a `fusion` field)"}, "fusion");
  cl::opt<std::string> &emitDot_ = add<cl::opt<std::string>>(
      {nullptr, nullptr, "", "FILE", "write the fusion plan as Graphviz DOT to FILE", true}, "emit-dot");
  cl::list<std::string> &files_ = positional("FILE");
  SetupFlags setup_{*this};
};

}  // namespace

Command &inspectCommand() {
  static Inspect c;
  return c;
}

}  // namespace graphlint::cli
