// graphlint compare MODEL --trace FILE.json: the lint's predictions for MODEL
// under the setup flags held against a measured torch.profiler trace of the
// user's own run (src/engine/RunComparison.cpp, src/report/CompareReport.cpp;
// docs/viewers.md#compare).
#include "Command.h"
#include "SetupFlags.h"
#include "Shared.h"

#include "graphlint/engine/RunComparison.h"
#include "graphlint/engine/Session.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/report/Reporters.h"

#include <llvm/Support/FormatVariadic.h>

#include <fmt/format.h>

namespace graphlint::cli {

namespace {

constexpr const char *kCompareSection = "COMPARE OPTIONS (docs/viewers.md#compare)";

OptionEntry compareOption(std::string valueHelp, std::string help, bool file = false) {
  return {nullptr, nullptr, "", std::move(valueHelp), std::move(help), file, false};
}

class Compare : public Command {
public:
  Compare()
      : Command("compare", "[OPTIONS] MODEL",
                "predicted vs measured: your run's torch.profiler trace and memory snapshot", kCompareSection) {}
  int run() override;

private:
  cl::opt<std::string> &trace_ = add<cl::opt<std::string>>(
      compareOption("FILE.json|DIR",
                    "the measured run: torch.profiler's Chrome trace\n"
                    "(prof.export_chrome_trace, or the .json.gz of\n"
                    "tensorboard_trace_handler; profile_memory=True adds\n"
                    "the memory comparison); a folder holds one trace per\n"
                    "rank (HTA's layout), compared as the ranks' mean",
                    true),
      "trace");
  cl::opt<std::string> &step_ = add<cl::opt<std::string>>(
      compareOption("NAME",
                    "the step: the last annotation (record_function)\n"
                    "whose name contains NAME (default the last\n"
                    "ProfilerStep#N)"),
      "step");
  cl::opt<std::string> &snapshot_ = add<cl::opt<std::string>>(
      compareOption("FILE.pickle",
                    "the measured memory: a torch memory snapshot\n"
                    "(torch.cuda.memory._dump_snapshot); its peaks and\n"
                    "allocations replace the trace's",
                    true),
      "snapshot");
  cl::opt<std::string> &format_ = add<cl::opt<std::string>>(
      compareOption("text|json", "output format (default text)"), "format", cl::init("text"));
  cl::opt<unsigned> &top_ = add<cl::opt<unsigned>>(
      compareOption("N", "text: the N ops with the largest time error (default 15)"), "top", cl::init(15));
  SetupFlags setup_{*this};
  cl::list<std::string> &files_ = positional("MODEL");
};

int Compare::run() {
  SessionOptions so;
  if (auto err = readOneFileSetup(*this, setup_, so, files_.size(), format_))
    return usage(*err);
  if (trace_.empty() && snapshot_.empty())
    return usage("compare needs --trace FILE.json (a torch.profiler trace) and/or --snapshot FILE.pickle (a torch "
                 "memory snapshot) of the run to compare with");
  llvm::Expected<MeasuredRun> measured = MeasuredRun();
  if (!trace_.empty()) {
    auto runs = readMeasuredTraces(trace_, TraceOptions{step_});
    if (!runs)
      return fail(llvm::toString(runs.takeError()));
    measured = combineRanks(std::move(*runs));
  }
  if (!snapshot_.empty()) {
    if (llvm::Error e = readMeasuredSnapshot(snapshot_, *measured))
      return fail(llvm::toString(std::move(e)));
    if (measured->path.empty())
      measured->path = snapshot_;
    else
      measured->path += ", " + snapshot_.getValue();
  }
  so.needs.allSections = true;
  LintSession session(std::move(so));
  const std::string &file = files_[0];
  if (llvm::Error e = session.prepare({file}))
    return fail(llvm::toString(std::move(e)));
  LintOptions opts = session.lintOptions(0);
  PredictedOps predicted;
  opts.withAnalyses = [&](const Model &m, AnalysisContext &ctx) { collectPredictedOps(m, ctx, predicted); };
  FileReport r = lintFile(file, opts);
  if (r.fatal)
    return fail(oneLine(file) + ": " + r.fatalMessage);
  for (const std::string &w : r.setupWarnings)
    llvm::errs() << oneLine(file) << ": warning: " << w << "\n";
  const MemorySummary &mem = r.memory;
  predicted.startBytes = mem.paramsBytes + mem.buffersBytes + mem.inputsBytes + (mem.mode == "training" ? mem.optimizerBytes : 0);
  RunComparison c = compareRun(r, predicted, *measured);
  if (format_ == "json")
    llvm::outs() << llvm::formatv("{0:2}", compareToJson(c)) << "\n";
  else
    renderCompareText(c, top_, llvm::outs());
  return 0;
}

}  // namespace

Command &compareCommand() {
  static Compare c;
  return c;
}

}  // namespace graphlint::cli
