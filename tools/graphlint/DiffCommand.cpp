// graphlint diff BASE HEAD: what a change does to a model's findings,
// nodes, fusion groups, memory, compute and communication, at the user's
// source lines (src/engine/ModelDiff.cpp), rendered by src/report/DiffReport.cpp;
// --fail-on makes it a gate. docs/diff.md.
#include "Command.h"
#include "SetupFlags.h"
#include "Shared.h"

#include "graphlint/engine/DiffGate.h"
#include "graphlint/engine/ModelDiff.h"
#include "graphlint/engine/Session.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/report/DiffReport.h"

#include <fmt/format.h>

namespace graphlint::cli {

namespace {

constexpr const char *kDiffSection = "DIFF OPTIONS (docs/diff.md)";

OptionEntry diffOption(std::string valueHelp, std::string help, bool file = false) {
  return {nullptr, nullptr, "", std::move(valueHelp), std::move(help), file, false};
}

class Diff : public Command {
public:
  Diff()
      : Command("diff", "[OPTIONS] BASE HEAD",
                "what a model change does: findings, fusion, memory, step time, communication", kDiffSection) {
    alias(output_, "o", false);
  }
  int run() override;

private:
  cl::opt<std::string> &format_ = add<cl::opt<std::string>>(
      diffOption("text|json|markdown|sarif|github",
                 "output format (default text): json is the contract\n"
                 "other tools read (findings.new[], findings.fixed[],\n"
                 "metrics, attribution[]); markdown a pull-request\n"
                 "comment; sarif the new findings; github the new\n"
                 "findings and a notice at each changed line"),
      "format", cl::init("text"));
  cl::opt<std::string> &output_ = add<cl::opt<std::string>>(
      diffOption("FILE", "write the report to FILE instead of stdout", true), "output");
  cl::opt<std::string> &failOn_ = add<cl::opt<std::string>>(
      diffOption("LIMITS",
                 "exit 1 when a limit is broken, one line each on\n"
                 "stderr: new-errors, new-warnings, new-findings, and\n"
                 "METRIC+N% / METRIC-N% / METRIC+N, e.g.\n"
                 "new-errors,peak+5%,step+5%,comm+10%,mfu-5%\n"
                 "(peak, reserved, step, comm, activations, exposed,\n"
                 "or any metric name of the json report)"),
      "fail-on");
  cl::opt<std::string> &linkBase_ = add<cl::opt<std::string>>(
      diffOption("URL",
                 "markdown: link each file:line to URL/file#Lline,\n"
                 "e.g. https://github.com/OWNER/REPO/blob/HEAD_SHA"),
      "link-base");
  SetupFlags setup_{*this};
  PolicyFlags policy_{*this, /*withGate=*/false};
  cl::list<std::string> &files_ = positional("BASE HEAD");
};

int Diff::run() {
  SessionOptions so;
  if (auto err = readSetup(*this, setup_, so))
    return usage(*err);
  if (auto err = policy_.toLayer(so.commandLine))
    return usage(*err);
  const std::string &format = format_;
  if (format != "text" && format != "json" && format != "markdown" && format != "sarif" && format != "github")
    return usage("diff: --format must be one of text, json, markdown, sarif, github");
  std::vector<DiffLimit> limits;
  if (failOn_.getNumOccurrences()) {
    auto parsed = parseDiffLimits(failOn_.getValue());
    if (!parsed)
      return usage(llvm::toString(parsed.takeError()));
    limits = std::move(*parsed);
  }
  std::vector<std::string> files(files_.begin(), files_.end());
  if (files.size() != 2)
    return usage(fmt::format("diff expects two model files, BASE and HEAD (got {})", files.size()));
  // Every finding counts, each at its own node: grouping and library folding
  // come after the comparison (ModelDiff), not before.
  so.needs.allSections = true;
  so.group = false;
  so.showLibraryFindings = true;
  LintSession session(std::move(so));
  if (llvm::Error e = session.prepare(files))
    return fail(llvm::toString(std::move(e)));
  if (!outputsAllowed(session.inputs(files), {{output_, "--output"}}))
    return 2;
  auto opened = openReportFile(output_);
  if (!opened)
    return fail(llvm::toString(opened.takeError()));
  std::unique_ptr<AtomicOutput> file = std::move(*opened);
  llvm::raw_ostream &out = file ? file->os() : llvm::outs();

  auto diff = diffModelFiles(files[0], files[1], session.lintOptions(0), session.lintOptions(1));
  if (!diff) {
    llvm::errs() << llvm::toString(diff.takeError()) << "\n";
    return 2;
  }
  for (const FileReport *r : {&diff->base, &diff->head})
    for (const std::string &w : r->setupWarnings)
      llvm::errs() << oneLine(r->path) << ": warning: " << w << "\n";
  if (format == "json")
    renderDiffJson(*diff, out);
  else if (format == "markdown")
    renderDiffMarkdown(*diff, linkBase_, out);
  else if (format == "sarif")
    renderDiffSarif(*diff, out);
  else if (format == "github")
    renderDiffGithub(*diff, out);
  else
    renderDiffText(*diff, out);
  out.flush();
  if (file)
    if (llvm::Error e = file->commit())
      return fail(llvm::toString(std::move(e)));
  std::vector<std::string> broken = brokenLimits(*diff, limits);
  for (const std::string &b : broken)
    llvm::errs() << "graphlint: diff: " << b << "\n";
  return broken.empty() ? 0 : 1;
}

}  // namespace

Command &diffCommand() {
  static Diff c;
  return c;
}

}  // namespace graphlint::cli
