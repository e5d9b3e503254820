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

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

#include <fmt/format.h>

#include <cstdlib>

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
  cl::opt<std::string> &git_ = add<cl::opt<std::string>>(
      diffOption("BASE..HEAD",
                 "diff the models pyproject.toml names ([tool.graphlint]\n"
                 "models) between two git revisions: each is checked\n"
                 "out into a temporary worktree and captured by the\n"
                 "exporter (Python with torch and the graphlint package:\n"
                 "GRAPHLINT_PYTHON, default python3); the other options\n"
                 "apply to each model's diff"),
      "git");
  SetupFlags setup_{*this};
  PolicyFlags policy_{*this, /*withGate=*/false};
  cl::list<std::string> &files_ = positional("BASE HEAD");
};

// --git: the Python side checks out, captures and runs `graphlint diff
// BASE HEAD` per model with the other arguments (python/graphlint/gitdiff.py).
int runGitDiff(const std::string &revisions) {
  std::vector<std::string> rest;
  const std::vector<std::string> &args = commandArguments();
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a(args[i]);
    if (a == "--git") {
      ++i;  // and its value
      continue;
    }
    if (a.startswith("--git="))
      continue;
    rest.push_back(args[i]);
  }
  const char *py = std::getenv("GRAPHLINT_PYTHON");
  std::string python = py && *py ? py : "python3";
  auto found = llvm::sys::findProgramByName(python);
  if (!found)
    return fail(fmt::format("diff --git: cannot find '{}' (set GRAPHLINT_PYTHON to a Python with torch and "
                            "the graphlint package)",
                            escapedForMessage(python)));
  // The diffs run this very binary.
  llvm::SmallString<256> self;
  if (llvm::sys::fs::real_path("/proc/self/exe", self))
    self = llvm::sys::fs::getMainExecutable("graphlint", reinterpret_cast<void *>(&runGitDiff));
  std::vector<std::string> argv{*found, "-m", "graphlint.gitdiff", "--binary", std::string(self), revisions, "--"};
  argv.insert(argv.end(), rest.begin(), rest.end());
  std::vector<llvm::StringRef> refs(argv.begin(), argv.end());
  llvm::outs().flush();
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*found, refs, llvm::None, {}, 0, 0, &error);
  if (rc < 0)
    return fail("diff --git: " + (error.empty() ? std::string("the Python side did not run") : error));
  return rc;
}

int Diff::run() {
  if (git_.getNumOccurrences()) {
    if (!files_.empty())
      return usage("diff --git takes no model files: it captures the models pyproject.toml names");
    if (git_.empty())
      return usage("--git needs revisions, e.g. origin/main..HEAD");
    return runGitDiff(git_);
  }
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
