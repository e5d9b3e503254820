#include "graphlint/engine/Session.h"

#include "graphlint/base/HardwareProfile.h"
#include "graphlint/engine/LaunchConfig.h"
#include "graphlint/onnx/ExternalData.h"

#include <set>

namespace graphlint {

LintOptions lintOptionsFor(const Config &c, const ReportNeeds &needs, bool group, bool foldLibrary) {
  LintOptions opts;
  opts.setup = c.setup;
  opts.policy = c.policy;
  opts.skipModelTeardown = true;  // the process exits right after reporting
  opts.group = group;
  opts.foldLibrary = foldLibrary;
  opts.shortenMessages = true;
  opts.sourceLines = needs.sourceSnippets;
  opts.fusionSummary = needs.allSections || needs.fusionText || needs.dot;
  opts.fusionEdges = needs.dot;
  opts.costSummary = needs.allSections || needs.costText || (needs.memoryPlot && c.setup.train);
  opts.memorySummary = needs.allSections || needs.memoryText || needs.memoryPlot;
  opts.memorySnapshot = needs.memorySnapshot;
  opts.stepTrace = needs.stepTrace;
  opts.graphSummary = needs.modelExplorer;
  return opts;
}

LintSession::LintSession(SessionOptions options) : o_(std::move(options)) { o_.commandLine.origin = "command line"; }

llvm::Expected<Config> LintSession::configFor(const std::string &model) {
  std::string path = o_.configFile;
  if (path.empty() && o_.discoverConfigs) {
    ConfigDiscovery found = discoverConfigFile(model);
    for (std::string &w : found.ignored)
      if (warned_.insert(w).second && o_.onWarning)
        o_.onWarning(w);
    path = std::move(found.path);
  }
  std::vector<const ConfigLayer *> layers;
  if (!path.empty()) {
    auto it = loaded_.find(path);
    if (it == loaded_.end()) {
      auto layer = loadConfigFile(path);
      if (!layer)
        return layer.takeError();
      it = loaded_.emplace(path, std::make_unique<ConfigLayer>(std::move(*layer))).first;
      order_.push_back(it->second.get());
    }
    layers.push_back(it->second.get());
  }
  if (!o_.launchConfig.empty()) {
    if (!launch_) {
      auto launch = loadLaunchConfig(o_.launchConfig);
      if (!launch)
        return launch.takeError();
      for (const std::string &w : launch->warnings)
        if (warned_.insert(w).second && o_.onWarning)
          o_.onWarning(w);
      launch_ = std::make_unique<ConfigLayer>(std::move(launch->layer));
    }
    layers.push_back(launch_.get());
  }
  layers.push_back(&o_.commandLine);
  return resolveConfig(layers, model);
}

llvm::Error LintSession::prepare(const std::vector<std::string> &models) {
  configs_.clear();
  opts_.clear();
  for (const std::string &m : models) {
    auto c = configFor(m);
    if (!c)
      return c.takeError();
    opts_.push_back(lintOptionsFor(*c, o_.needs, o_.group, !o_.showLibraryFindings));
    configs_.push_back(std::move(*c));
  }
  if (!o_.baseline.empty()) {
    auto b = Baseline::load(o_.baseline);
    if (!b)
      return b.takeError();
    baseline_ = std::move(*b);
  }
  return llvm::Error::success();
}

std::vector<std::pair<std::string, std::string>> LintSession::inputs(const std::vector<std::string> &models) const {
  std::vector<std::pair<std::string, std::string>> in;
  for (const std::string &m : models) {
    in.push_back({m, "model"});
    for (std::string &data : externalDataFilesOf(m))
      in.push_back({std::move(data), "external data file"});
  }
  for (const ConfigLayer *c : order_)
    in.push_back({c->origin, "config file"});
  if (!o_.launchConfig.empty())
    in.push_back({o_.launchConfig, "launch config"});
  in.push_back({o_.configFile, "config file"});
  in.push_back({o_.baseline, "baseline"});
  in.push_back({HardwareCatalog::instance().dataFile(), "hardware file"});
  return in;
}

llvm::Expected<SessionResult> LintSession::run(const std::vector<std::string> &models, unsigned jobs,
                                               const ProgressFn &progress) {
  SessionResult r;
  r.reports = lintFiles(models, opts_, jobs, progress);

  // Config ignore entries that suppressed nothing in any file (GL005), listed
  // with the first file linted under that config.
  std::set<std::string> used;
  for (const FileReport &f : r.reports)
    used.insert(f.usedIgnores.begin(), f.usedIgnores.end());
  for (const ConfigLayer *layer : order_) {
    for (size_t i = 0; i < r.reports.size(); ++i) {
      const RulePolicy &p = configs_[i].policy;
      if (configs_[i].file != layer->origin)
        continue;
      if (p.reportUnusedIgnores && p.isEnabled("GL005")) {
        std::vector<Diagnostic> unused = unusedConfigIgnores({layer}, used, p);
        r.reports[i].diagnostics.insert(r.reports[i].diagnostics.end(), unused.begin(), unused.end());
      }
      break;
    }
  }
  if (!o_.writeBaseline.empty()) {
    if (llvm::Error e = Baseline::write(o_.writeBaseline, r.reports))
      return e;
    for (const FileReport &f : r.reports)
      r.baselineWritten += f.diagnostics.size();
  }
  if (baseline_) {
    auto checked = [&](size_t i, const std::string &code) { return configs_[i].policy.isEnabled(code); };
    for (BaselineEntry &e : baseline_->apply(r.reports, checked))
      r.stale.push_back({baseline_->path(), std::move(e)});
  }
  return r;
}

int LintSession::exitCode(const SessionResult &r, bool exitZero) const {
  bool failing = false;
  for (size_t i = 0; i < r.reports.size(); ++i) {
    if (r.reports[i].fatal)
      return 2;
    const std::optional<Severity> &failOn = configs_[i].failOn;
    for (const Diagnostic &d : r.reports[i].diagnostics)
      failing |= failOn && d.severity >= *failOn;
  }
  // Writing a baseline accepts every finding: the run passes.
  return failing && !exitZero && o_.writeBaseline.empty() ? 1 : 0;
}

}  // namespace graphlint
