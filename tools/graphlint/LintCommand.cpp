// graphlint [lint] FILE...: lint models through a LintSession and render the
// reports. Exit codes: 0 clean, 1 a finding at or above --fail-on, 2 a usage
// error or a file that could not be linted.
#include "Command.h"
#include "SetupFlags.h"
#include "Shared.h"

#include "graphlint/engine/ExpectedValues.h"
#include "graphlint/engine/OutputFiles.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/ir/PhaseTimes.h"
#include "graphlint/report/Reporters.h"
#include "graphlint/engine/Session.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/Threading.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace graphlint::cli {

namespace {

/// "[3/120] models/x.onnx" on one stderr line, rewritten in place, while
/// linting several files with stderr on a terminal; erased at the end.
class ProgressLine {
public:
  ProgressLine(size_t files, bool quiet) : on_(files > 1 && !quiet && llvm::errs().is_displayed()) {}
  ~ProgressLine() {
    if (on_ && shown_)
      llvm::errs() << "\r\x1b[K";
    llvm::errs().flush();
  }
  ProgressFn callback() {
    if (!on_)
      return {};
    return [this](size_t done, size_t total, const std::string &path) {
      std::string line = fmt::format("[{}/{}] {}", done, total, path);
      unsigned width = llvm::sys::Process::StandardErrColumns();
      if (width > 10 && line.size() >= width)
        line = line.substr(0, width - 4) + "...";
      llvm::errs() << "\r\x1b[K" << line;
      llvm::errs().flush();
      shown_ = true;
    };
  }

private:
  bool on_;
  bool shown_ = false;
};

// NO_COLOR (no-color.org): set and non-empty disables colour.
bool noColorRequested() {
  const char *v = std::getenv("NO_COLOR");
  return v && *v;
}

std::string explorerPath(const std::string &dir, ExplorerFile f) {
  llvm::SmallString<256> p(dir);
  llvm::sys::path::append(p, explorerFileName(f));
  return std::string(p);
}

/// --emit-model-explorer: each linted model's files into its folder, made
/// if missing; false when one could not be written (the error printed).
bool writeModelExplorer(const std::vector<FileReport> &reports, const std::vector<std::string> &dirs) {
  bool ok = true;
  for (size_t i = 0; i < reports.size(); ++i) {
    const FileReport &r = reports[i];
    if (r.fatal || !r.graph.present)
      continue;
    if (std::error_code ec = llvm::sys::fs::create_directories(dirs[i])) {
      llvm::errs() << "graphlint: cannot write --emit-model-explorer '" << oneLine(dirs[i]) << "': " << ec.message()
                   << "\n";
      ok = false;
      continue;
    }
    if (r.graph.target.empty())
      llvm::errs() << oneLine(r.path) << ": warning: --emit-model-explorer: no predicted times without a known "
                                         "--target (predicted_time.json is empty)\n";
    for (ExplorerFile f : kExplorerFiles)
      ok &= writeOutputFile(explorerPath(dirs[i], f), [&](llvm::raw_ostream &os) { renderModelExplorer(r, f, os); });
  }
  return ok;
}

OptionEntry lintOption(std::string valueHelp, std::string help, bool file = false) {
  return {nullptr, nullptr, "", std::move(valueHelp), std::move(help), file, false};
}

class Lint : public Command {
public:
  Lint()
      : Command("lint", "[OPTIONS] FILE...",
                "lint models: ONNX, FX graphs (*.fx.json), .pt2 archives",
                kLintSection) {
    alias(output_, "o", false);
    alias(quiet_, "q", false);
    alias(jobs_, "j", true);
  }

  int run() override;

private:
  std::optional<std::string> checkFlags(SessionOptions &so, unsigned &jobs) const;

  cl::opt<std::string> &format_ = add<cl::opt<std::string>>(
      lintOption("text|gcc|json|sarif|github",
                 "output format (default text). gcc prints\n"
                 "`path:line:col: severity: message [CODE name]` where\n"
                 "path:line is the user's source when the exporter\n"
                 "recorded it, else the model file and the 1-based node\n"
                 "index; sarif is SARIF 2.1.0 (GitHub code scanning);\n"
                 "github prints Actions workflow commands\n"
                 "(::error file=...,line=...,title=...::message);\n"
                 "all are documented in docs/output-formats.md"),
      "format", cl::init("text"));
  cl::opt<std::string> &output_ = add<cl::opt<std::string>>(
      lintOption("FILE", "write the report to FILE instead of stdout (exit 2\nif FILE cannot be written)", true),
      "output");
  cl::opt<bool> &statistics_ = add<cl::opt<bool>>(
      lintOption("", "text format: after the report, the number of\nfindings per rule, most frequent first"),
      "statistics");
  cl::opt<bool> &timings_ = add<cl::opt<bool>>(
      lintOption("", "after the run, each phase's CPU time (parse, import,\n"
                     "shape completion, each analysis, each rule, the\n"
                     "report) on stderr (docs/performance.md)"),
      "timings");
  cl::opt<bool> &quiet_ = add<cl::opt<bool>>(
      lintOption("", "text format: print only fatal-file lines and the\nsummary line (other formats ignore it)"),
      "quiet");
  cl::opt<bool> &noGroup_ = add<cl::opt<bool>>(
      lintOption("", "one finding per node: do not fold findings of one\n"
                     "rule and cause at one source line (a layer's line run\n"
                     "in 24 layers) into one with the list of modules"),
      "no-group");
  cl::opt<bool> &showLibraryFindings_ = add<cl::opt<bool>>(
      lintOption("", "list each finding whose source line is library code\n"
                     "(site-packages: torch, transformers, timm) instead of\n"
                     "one line per rule and library"),
      "show-library-findings");
  cl::opt<bool> &exitZero_ = add<cl::opt<bool>>(
      lintOption("", "exit 0 even when findings exist (unreadable files still exit 2)"), "exit-zero");
  cl::opt<std::string> &jobs_ = add<cl::opt<std::string>>(
      lintOption("N", "lint N files in parallel (default: number of cores);\n"
                      "with several files and stderr on a terminal, a\n"
                      "progress line shows on stderr (not with --quiet)"),
      "jobs");
  cl::opt<std::string> &color_ = add<cl::opt<std::string>>(
      lintOption("auto|always|never", "colour text output (default auto: on a TTY unless NO_COLOR is set)"), "color",
      cl::init("auto"));
  cl::opt<bool> &noColor_ = add<cl::opt<bool>>(lintOption("", "same as --color never"), "no-color");
  cl::opt<bool> &fusion_ = add<cl::opt<bool>>(
      lintOption("", "text format: after each file's findings, its fusion\n"
                     "groups and a summary line (json always has a `fusion`\n"
                     "section; gcc ignores the flag)"),
      "fusion");
  cl::opt<std::string> &emitDot_ = add<cl::opt<std::string>>(
      lintOption("FILE",
                 "write the fusion plan as Graphviz DOT to FILE; with\n"
                 "several models, one file each: FILE's stem + '.' +\n"
                 "the model's stem, e.g. out.dot -> out.resnet18.dot",
                 true),
      "emit-dot");
  cl::opt<bool> &cost_ = add<cl::opt<bool>>(
      lintOption("", "text format: after each file's findings, its predicted\n"
                     "step: forward, backward, optimizer, communication and\n"
                     "step time, MFU, collectives and gradient buckets (json\n"
                     "always has `compute` and `communication` sections);\n"
                     "docs/cost-model.md"),
      "cost");
  cl::opt<bool> &memory_ = add<cl::opt<bool>>(
      lintOption("", "text format: after the report, each model's predicted\n"
                     "memory per GPU (params, grads, optimizer state,\n"
                     "activations, peak allocated/reserved, capacity,\n"
                     "headroom), the largest tensors at the peak, and\n"
                     "caveats: what the figures cannot include (helper\n"
                     "functions' Python locals a non-strict torch.export\n"
                     "does not record; parameters a dynamo ONNX export's\n"
                     "optimizer folded away; scaled_dot_product_attention\n"
                     "calls, costed as the kernel eager picks: the math\n"
                     "path under dropout in a CPU training step, whose\n"
                     "dropout_p an eval() .pt2 records as 0); json always has a\n"
                     "`memory` section;\n"
                     "docs/memory.md, docs/pt2.md"),
      "memory");
  cl::opt<std::string> &memoryPlot_ = add<cl::opt<std::string>>(
      lintOption("FILE.svg",
                 "draw live memory over the step as an SVG chart\n"
                 "stacked by category (parameters, gradients, optimizer\n"
                 "state, inputs, activations, temporaries; phases\n"
                 "shaded, the peak's largest tensors and the device\n"
                 "capacity marked);\n"
                 "several models: FILE's stem + '.' + the model's stem",
                 true),
      "memory-plot");
  cl::opt<std::string> &emitSnapshot_ = add<cl::opt<std::string>>(
      lintOption("FILE.pickle",
                 "write the predicted memory as a torch memory snapshot\n"
                 "(torch.cuda.memory._snapshot()'s format: segments,\n"
                 "device_traces, categories, source lines) for\n"
                 "pytorch.org/memory_viz; several models: FILE's stem +\n"
                 "'.' + the model's stem; docs/viewers.md",
                 true),
      "emit-memory-snapshot");
  cl::opt<std::string> &emitTrace_ = add<cl::opt<std::string>>(
      lintOption("FILE.json",
                 "write the predicted step as a torch.profiler-style\n"
                 "Chrome trace (compute and NCCL streams, kernels with\n"
                 "fusion group, op and source line, collectives,\n"
                 "ProfilerStep#0, memory counters) for Perfetto and\n"
                 "HolisticTraceAnalysis; several models: FILE's stem +\n"
                 "'.' + the model's stem; docs/viewers.md",
                 true),
      "emit-trace");
  cl::opt<std::string> &emitExplorer_ = add<cl::opt<std::string>>(
      lintOption("DIR",
                 "write each model for Google's Model Explorer into DIR\n"
                 "(made if missing): graph.json, its JSON graph with\n"
                 "module paths as layers, and one node-data overlay per\n"
                 "prediction: fusion_group.json, predicted_time.json\n"
                 "(seconds on --target), peak_bytes.json (bytes live at\n"
                 "the memory peak), findings.json; several models: one\n"
                 "folder each, DIR/<model stem>; docs/viewers.md",
                 true),
      "emit-model-explorer");
  SetupFlags setup_{*this};
  PolicyFlags policy_{*this};
  cl::opt<std::string> &writeBaseline_ = add<cl::opt<std::string>>(
      {nullptr, kConfigSection, "", "FILE", "write every finding to FILE as a baseline and exit 0", true},
      "write-baseline");
  cl::opt<std::string> &expect_ = add<cl::opt<std::string>>(
      {nullptr, kConfigSection, "", "FILE",
       "compare each model's predicted metrics (peak memory,\n"
       "FLOPs, kernels, step time, communication) with FILE's\n"
       "expected values for its setup, within their noise\n"
       "margins: a regression or an unexplained win exits 1\n"
       "and prints the proposed new FILE on stderr (docs/diff.md)",
       true},
      "expect");
  cl::opt<std::string> &writeExpected_ = add<cl::opt<std::string>>(
      {nullptr, kConfigSection, "", "FILE",
       "write each model's predicted metrics for its setup to\n"
       "FILE (margins kept from --expect or the defaults)",
       true},
      "write-expected");
  cl::list<std::string> &files_ = positional("FILE...");

  /// --expect / --write-expected after the lint: the exit code they add (1
  /// on a broken expectation, 2 when a file cannot be written).
  int checkExpectations(LintSession &session, const std::vector<FileReport> &reports,
                        const std::optional<ExpectedValues> &expected) const;
};

int Lint::checkExpectations(LintSession &session, const std::vector<FileReport> &reports,
                            const std::optional<ExpectedValues> &expected) const {
  std::vector<std::string> setups;
  for (size_t i = 0; i < reports.size(); ++i)
    setups.push_back(setupKeyText(session.config(i).setup));
  const std::string &target = writeExpected_.empty() ? expect_.getValue() : writeExpected_.getValue();
  ExpectedCheck c = checkExpected(expected && target == expected->path() ? *expected : ExpectedValues(target),
                                  reports, setups);
  if (!writeExpected_.empty()) {
    if (!writeOutputFile(writeExpected_, [&](llvm::raw_ostream &os) { os << c.proposed.render(); }))
      return 2;
    llvm::errs() << fmt::format("graphlint: wrote the expected values of {} model(s) to '{}'\n", reports.size(),
                                writeExpected_.getValue());
    return 0;
  }
  if (!expected)
    return 0;
  for (const std::string &f : c.failures)
    llvm::errs() << "graphlint: --expect " << oneLine(expected->path()) << ": " << f << "\n";
  if (c.failures.empty())
    return 0;
  llvm::errs() << "graphlint: --expect: the proposed " << oneLine(expected->path())
               << " (write it with --write-expected " << oneLine(expected->path()) << "):\n"
               << c.proposed.render();
  return 1;
}

// Flag values, checked in the order the help lists them.
std::optional<std::string> Lint::checkFlags(SessionOptions &so, unsigned &jobs) const {
  if (jobs_.getNumOccurrences()) {
    long n = 0;
    if (llvm::StringRef(jobs_).getAsInteger(10, n) || n < 1 || n > 1024)
      return fmt::format("--jobs expects an integer from 1 to 1024, got '{}'", jobs_.getValue());
    jobs = static_cast<unsigned>(n);
  }
  if (auto err = readSetup(*this, setup_, so))
    return err;
  if (auto err = policy_.toLayer(so.commandLine))
    return err;
  so.baseline = policy_.baseline();
  so.writeBaseline = writeBaseline_;
  so.group = !noGroup_;
  so.showLibraryFindings = showLibraryFindings_;
  return std::nullopt;
}

int Lint::run() {
  if (timings_)
    PhaseTimes::enable();
  SessionOptions so;
  unsigned jobs = 0;
  if (auto err = checkFlags(so, jobs))
    return usage(*err);
  auto format = outputFormatFromName(format_);
  if (!format)
    return usage("--format must be one of text, gcc, json, sarif, github");
  std::string color = noColor_ ? "never" : color_.getValue();
  if (color != "auto" && color != "always" && color != "never")
    return usage("--color must be auto, always or never");
  std::vector<std::string> files(files_.begin(), files_.end());
  if (files.empty())
    return usage("no input files");
  bool text = *format == OutputFormat::Text;
  const std::string &dot = emitDot_, &plot = memoryPlot_, &output = output_, &snapshot = emitSnapshot_,
                    &trace = emitTrace_, &explorer = emitExplorer_;
  bool expecting = !expect_.empty() || !writeExpected_.empty();
  so.needs = {*format == OutputFormat::Json || expecting, text && fusion_, text && cost_, memory_, !dot.empty(),
              !plot.empty(), text && !quiet_, !snapshot.empty(), !trace.empty(), !explorer.empty()};
  std::optional<ExpectedValues> expected;
  if (!expect_.empty()) {
    auto loaded = ExpectedValues::load(expect_);
    if (!loaded)
      return fail(llvm::toString(loaded.takeError()));
    expected = std::move(*loaded);
  }

  // Every file's configuration and the baseline first: a bad one stops the run.
  LintSession session(std::move(so));
  if (llvm::Error e = session.prepare(files))
    return fail(llvm::toString(std::move(e)));
  // No output may be an input; checked before anything is opened.
  std::vector<std::pair<std::string, const char *>> outputs{{output, "--output"},
                                                             {writeBaseline_, "--write-baseline"},
                                                             {writeExpected_, "--write-expected"}};
  if (!dot.empty())
    for (const std::string &p : perModelPaths(dot, files))
      outputs.push_back({p, "--emit-dot"});
  if (!plot.empty())
    for (const std::string &p : perModelPaths(plot, files))
      outputs.push_back({p, "--memory-plot"});
  if (!snapshot.empty())
    for (const std::string &p : perModelPaths(snapshot, files))
      outputs.push_back({p, "--emit-memory-snapshot"});
  if (!trace.empty())
    for (const std::string &p : perModelPaths(trace, files))
      outputs.push_back({p, "--emit-trace"});
  if (!explorer.empty())
    for (const std::string &d : perModelDirs(explorer, files))
      for (ExplorerFile f : kExplorerFiles)
        outputs.push_back({explorerPath(d, f), "--emit-model-explorer"});
  // Listing the inputs parses each model for its external data files (a
  // second parse of a million-node file): only when there is a file to guard.
  bool writesFiles = std::any_of(outputs.begin(), outputs.end(),
                                 [](const std::pair<std::string, const char *> &o) {
                                   return !o.first.empty() && o.first != "-";
                                 });
  if (writesFiles && !outputsAllowed(session.inputs(files), outputs))
    return 2;
  // Create --output's temporary file before linting so an unwritable path
  // fails fast; it replaces the target only once the report is complete.
  auto opened = openReportFile(output);
  if (!opened)
    return fail(llvm::toString(opened.takeError()));
  std::unique_ptr<AtomicOutput> file = std::move(*opened);
  llvm::raw_ostream &out = file ? file->os() : llvm::outs();
  if (!jobs)
    jobs = llvm::hardware_concurrency().compute_thread_count();
  llvm::Expected<SessionResult> result = [&] {
    ProgressLine progress(files.size(), quiet_);
    PhaseTimes::Scope phase("lint: session (configs, file checks, baseline)");
    return session.run(files, jobs, progress.callback());
  }();
  if (!result)
    return fail(llvm::toString(result.takeError()));
  std::vector<FileReport> &reports = result->reports;
  // Setup problems the lint went on after (-D binding nothing): stderr, so
  // that machine-readable reports on stdout stay clean.
  for (const FileReport &r : reports)
    for (const std::string &w : r.setupWarnings)
      llvm::errs() << oneLine(r.path) << ": warning: " << w << "\n";
  if (!writeBaseline_.empty())
    llvm::errs() << fmt::format("graphlint: wrote {} finding(s) to baseline '{}'\n", result->baselineWritten,
                                writeBaseline_.getValue());
  for (const StaleBaselineEntry &s : result->stale) {
    const BaselineEntry &e = s.entry;
    llvm::errs() << fmt::format("graphlint: baseline '{}': stale entry {} {} at {} {}{} ({}): no longer "
                                "reported; rewrite it with --write-baseline\n",
                                oneLine(s.baseline), oneLine(e.code), oneLine(e.name), oneLine(e.file),
                                oneLine(e.source.empty() ? e.graph : e.source),
                                !e.module.empty() ? " in " + oneLine(e.module)
                                : e.node.empty()  ? std::string()
                                                  : " node '" + oneLine(e.node) + "'",
                                oneLine(e.op));
  }

  bool colored = color == "always" || (color == "auto" && !file && !noColorRequested() && llvm::outs().is_displayed());
  std::optional<PhaseTimes::Scope> rendering(std::in_place, "report: render");
  switch (*format) {
  case OutputFormat::Text:
    renderText(reports, out, colored, fusion_, quiet_, cost_);
    if (statistics_)
      renderStatistics(reports, out);
    if (memory_)
      for (const FileReport &r : reports)
        renderMemoryText(r.memory, oneLine(r.path), out);
    break;
  case OutputFormat::Gcc: renderGcc(reports, out); break;
  case OutputFormat::Json: renderJson(reports, out); break;
  case OutputFormat::Sarif: renderSarif(reports, out); break;
  case OutputFormat::Github: renderGithub(reports, out); break;
  }
  out.flush();
  rendering.reset();
  if (file)
    if (llvm::Error e = file->commit())
      return fail(llvm::toString(std::move(e)));
  if (timings_)
    PhaseTimes::print(llvm::errs());
  bool broken = false;
  if (!dot.empty()) {
    std::vector<std::string> paths = perModelPaths(dot, files);
    for (size_t i = 0; i < reports.size(); ++i)
      if (!reports[i].fatal &&
          !writeOutputFile(paths[i], [&](llvm::raw_ostream &os) { renderDot(reports[i].fusion, reports[i].path, os); }))
        broken = true;
  }
  if (!plot.empty()) {
    std::vector<std::string> paths = perModelPaths(plot, files);
    for (size_t i = 0; i < reports.size(); ++i)
      if (!reports[i].fatal && !writeOutputFile(paths[i], [&](llvm::raw_ostream &os) {
            const CostSummary &cost = reports[i].cost;
            renderMemorySvg(reports[i].memory, cost.present ? &cost.communication : nullptr, reports[i].path, os);
          }))
        broken = true;
  }
  if (!snapshot.empty()) {
    std::vector<std::string> paths = perModelPaths(snapshot, files);
    for (size_t i = 0; i < reports.size(); ++i)
      if (!reports[i].fatal && reports[i].snapshot.present &&
          !writeOutputFile(paths[i], [&](llvm::raw_ostream &os) { renderMemorySnapshot(reports[i].snapshot, os); }))
        broken = true;
  }
  if (!trace.empty()) {
    std::vector<std::string> paths = perModelPaths(trace, files);
    for (size_t i = 0; i < reports.size(); ++i) {
      if (reports[i].fatal)
        continue;
      if (!reports[i].trace.present) {
        llvm::errs() << oneLine(reports[i].path) << ": warning: --emit-trace: no trace without a known --target\n";
        continue;
      }
      if (!writeOutputFile(paths[i], [&](llvm::raw_ostream &os) {
            renderStepTrace(reports[i].trace, reports[i].path, os);
          }))
        broken = true;
    }
  }
  if (!explorer.empty() && !writeModelExplorer(reports, perModelDirs(explorer, files)))
    broken = true;
  if (*format != OutputFormat::Text)
    for (const FileReport &r : reports)
      if (r.fatal)
        llvm::errs() << oneLine(r.path) << ": error: " << r.fatalMessage << "\n";
  if (broken)
    return 2;
  int code = session.exitCode(*result, exitZero_);
  if (expecting)
    code = std::max(code, checkExpectations(session, reports, expected));
  return code;
}

}  // namespace

Command &lintCommand() {
  static Lint c;
  return c;
}

}  // namespace graphlint::cli
