#include "graphlint/engine/Driver.h"

#include "graphlint/ir/MessageText.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/engine/Grouping.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/ir/PhaseTimes.h"
#include "graphlint/rules/Rule.h"
#include "graphlint/engine/SourceLines.h"

#include <llvm/Support/ThreadPool.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#if defined(__SANITIZE_ADDRESS__)  // gcc -fsanitize=address
#define GRAPHLINT_SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)  // clang
#define GRAPHLINT_SANITIZER_BUILD 1
#endif
#endif

namespace graphlint {

#ifdef GRAPHLINT_SANITIZER_BUILD
constexpr bool kSanitizerBuild = true;
#else
constexpr bool kSanitizerBuild = false;
#endif

ImportOptions importOptionsFor(const LintOptions &opts) {
  ImportOptions io;
  io.dims = opts.setup.dims;
  return io;
}

FileStats statsOf(const Model &m) {
  FileStats s;
  forEachGraph(*m.graph, [&](const Graph &g) {
    ++s.graphs;
    s.nodes += g.nodes().size();
    s.values += g.values().size();
    for (const auto &p : g.params()) {
      ++(p->buffer ? s.buffers : s.params);
      (p->buffer ? s.bufferBytes : s.paramBytes) += p->tensor.byteSize;
    }
  });
  return s;
}

namespace {

// "rule GL101 name": kept for the run, as PhaseTimes wants (one per rule).
llvm::StringRef ruleTimingName(const RuleInfo &info) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::string>> names;
  std::lock_guard<std::mutex> lock(mu);
  auto &slot = names[std::string(info.code)];
  if (!slot)
    slot = std::make_unique<std::string>(fmt::format("rule {} {}", info.code, info.name));
  return *slot;
}

// Every name and message a report renders, made one line without control
// characters (oneLine, MessageText.h) once, here, so that no reporter, text,
// gcc, github, DOT, SVG or JSON, can pass a node named "mm\r\x1b[2K" or an
// exporter message with a newline to a terminal (docs/robustness.md).
void escapeForDisplay(FileReport &r) {
  // One line, and UTF-8: a command line is bytes too (`-D NAME=N` is echoed
  // in setup warnings), and the JSON and SARIF writers accept only UTF-8.
  auto esc = [](std::string &s) {
    s = oneLine(s);
    makeValidUtf8(s);
  };
  auto loc = [&](Location &l) {
    for (std::string *s : {&l.graphPath, &l.nodeName, &l.opType, &l.modulePath})
      esc(*s);
    esc(l.source.file);
    esc(l.file);
  };
  esc(r.fatalMessage);
  for (std::string &w : r.setupWarnings)
    esc(w);
  for (SymbolInfo &sym : r.symbols)
    esc(sym.name);
  for (Diagnostic &d : r.diagnostics) {
    esc(d.message);
    loc(d.location);
    for (Location &l : d.alsoAt)
      loc(l);
    for (Note &n : d.notes) {
      esc(n.message);
      if (n.location)
        loc(*n.location);
    }
  }
  for (auto &[key, line] : r.sourceLines)
    line = withoutControls(line);
  MemorySummary &m = r.memory;
  esc(m.peakNode);
  for (MemorySummary::Point &p : m.timeline)
    esc(p.node);
  for (MemorySummary::Contributor &c : m.topAtPeak)
    for (std::string *s : {&c.tensor, &c.node})
      esc(*s);
  for (std::string &d : m.assumedDims)
    esc(d);
  for (FusionSummary::Graph &g : r.fusion.graphs)
    esc(g.path);
  for (FusionSummary::Node &n : r.fusion.nodes)
    for (std::string *s : {&n.label, &n.name, &n.op})
      esc(*s);
  for (FusionSummary::Boundary &b : r.fusion.boundaries)
    esc(b.value);
  for (FusionSummary::Edge &e : r.fusion.edges)
    esc(e.value);
  for (CostSummary::Group &g : r.cost.groups)
    esc(g.node);
  esc(r.graph.peakNode);
  for (GraphSummary::Graph &g : r.graph.graphs) {
    esc(g.path);
    for (GraphSummary::Node &n : g.nodes) {
      for (std::string *s : {&n.name, &n.label, &n.op, &n.module, &n.source})
        esc(*s);
      for (auto &[key, value] : n.attrs) {
        esc(key);
        esc(value);
      }
      for (GraphSummary::Output &o : n.outputs)
        for (std::string *s : {&o.name, &o.type, &o.shape})
          esc(*s);
    }
  }
}

}  // namespace

FileReport lintModel(const Model &m, const LintOptions &opts) {
  FileReport r;
  r.path = m.path;
  makeValidUtf8(r.path);  // reports are UTF-8; a file name is bytes
  r.stats = statsOf(m);
  r.symbols = m.symbols;
  r.setupWarnings = m.setupWarnings;
  // The analyses of a million-node model are as many objects as its IR: the
  // CLI leaves them to the OS with the model (disposeModel).
  auto owned = std::make_unique<AnalysisContext>(m, opts.setup);
  AnalysisContext &ctx = *owned;
  DiagnosticSink sink(m.path, r.diagnostics);
  const bool timed = PhaseTimes::enabled();
  std::vector<const Rule *> perNode;
  for (const Rule *rule : allRules()) {
    const RuleInfo &info = rule->info();
    if (!opts.policy.isEnabled(std::string(info.code)))
      continue;
    if (rule->perNode()) {
      perNode.push_back(rule);
      continue;
    }
    PhaseTimes::Scope phase(timed ? ruleTimingName(info) : llvm::StringRef(), r.stats.nodes);
    sink.setRule(std::string(info.code), std::string(info.name), info.severity);
    rule->check(m, ctx, sink);
  }
  // One traversal for every per-node rule; the sort below restores the order
  // (diagnosticLess compares codes, so rule order never decides a tie). Under
  // --timings each rule walks the graph on its own, to be timed on its own.
  auto walk = [&](llvm::ArrayRef<const Rule *> rules) {
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &n : g.nodes())
        for (const Rule *rule : rules) {
          const RuleInfo &info = rule->info();
          sink.setRule(std::string(info.code), std::string(info.name), info.severity);
          rule->checkNode(*n, m, ctx, sink);
        }
    });
  };
  if (timed) {
    for (const Rule *rule : perNode) {
      PhaseTimes::Scope phase(ruleTimingName(rule->info()), r.stats.nodes);
      walk(rule);
    }
  } else if (!perNode.empty()) {
    walk(perNode);
  }
  PhaseTimes::Scope phase("lint: sort, suppress, group, summaries", r.stats.nodes);
  std::stable_sort(r.diagnostics.begin(), r.diagnostics.end(), diagnosticLess);
  r.suppressed = applyRulePolicy(m, opts.policy, r.diagnostics, r.usedIgnores);
  if (opts.group)
    groupDiagnostics(r.diagnostics);
  if (opts.foldLibrary)
    foldLibraryFindings(r.diagnostics);
  if (opts.shortenMessages)
    splitLongMessages(r.diagnostics);
  if (opts.sourceLines)
    attachSourceLines(r);
  r.hints = coverageHints(m, opts.policy);
  // The same cached plan the rules read: computed once per model.
  if (opts.fusionSummary)
    r.fusion = summariseFusion(m, ctx.get<FusionPlan>(), opts.fusionEdges);
  if (opts.costSummary)
    r.cost = summariseCost(m, ctx);
  if (opts.memorySummary)
    r.memory = ctx.get<MemoryPlan>().summary();
  if (opts.memorySnapshot)
    r.snapshot = memorySnapshotOf(ctx);
  if (opts.stepTrace)
    r.trace = stepTraceOf(ctx);
  if (opts.graphSummary)
    r.graph = summariseGraph(m, ctx);
  if (opts.withAnalyses)
    opts.withAnalyses(m, ctx);
  escapeForDisplay(r);
  if (opts.skipModelTeardown && !kSanitizerBuild)
    (void)owned.release();
  return r;
}

FileReport lintFile(const std::string &path, const LintOptions &opts) {
  auto model = importModelFile(path, importOptionsFor(opts));
  if (!model) {
    FileReport r;
    r.path = path;
    makeValidUtf8(r.path);
    r.fatal = true;
    r.fatalMessage = oneLine(llvm::toString(model.takeError()));
    return r;
  }
  FileReport r = lintModel(**model, opts);
  disposeModel(std::move(*model), opts);
  return r;
}

void disposeModel(std::unique_ptr<Model> model, const LintOptions &opts) {
  // Freeing millions of IR objects one by one costs more than the lint; the
  // OS reclaims them at exit. Sanitizer builds free them anyway so that
  // LeakSanitizer keeps reporting real leaks (docs/robustness.md).
  if (opts.skipModelTeardown && !kSanitizerBuild)
    (void)model.release();
}

std::vector<FileReport> lintFiles(const std::vector<std::string> &paths, const LintOptions &opts, unsigned jobs) {
  return lintFiles(paths, std::vector<LintOptions>(paths.size(), opts), jobs);
}

std::vector<FileReport> lintFiles(const std::vector<std::string> &paths, const std::vector<LintOptions> &opts,
                                  unsigned jobs, const ProgressFn &progress) {
  std::vector<FileReport> out(paths.size());
  std::mutex mu;
  size_t done = 0;
  auto one = [&](size_t i) {
    out[i] = lintFile(paths[i], opts[i]);
    if (progress) {
      std::lock_guard<std::mutex> lock(mu);
      progress(++done, paths.size(), paths[i]);
    }
  };
  if (paths.size() <= 1 || jobs <= 1) {
    for (size_t i = 0; i < paths.size(); ++i)
      one(i);
    return out;
  }
  llvm::ThreadPool pool(llvm::hardware_concurrency(jobs));
  for (size_t i = 0; i < paths.size(); ++i)
    pool.async([&, i] { one(i); });
  pool.wait();
  return out;
}

}  // namespace graphlint
