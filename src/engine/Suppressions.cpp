// The suppression pass: after the rules ran, the driver applies the file's
// RulePolicy (docs/configuration.md#suppressions). Rules never see it.
#include "graphlint/engine/Config.h"
#include "graphlint/engine/Glob.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>

#include <map>

namespace graphlint {

namespace {

const RuleInfo &unusedSuppressionInfo() { return findRule("GL005")->info(); }

Diagnostic unusedSuppression(Location loc, std::string message, const RulePolicy &p) {
  const RuleInfo &i = unusedSuppressionInfo();
  Diagnostic d;
  d.code = std::string(i.code);
  d.name = std::string(i.name);
  auto sev = p.severity.find(d.code);
  d.severity = sev == p.severity.end() ? i.severity : sev->second;
  d.location = std::move(loc);
  d.message = std::move(message);
  return d;
}

bool globMatches(const std::string &pattern, llvm::StringRef text) {
  if (text.empty())
    return false;
  auto g = Glob::compile(pattern);
  if (!g) {
    llvm::consumeError(g.takeError());  // refused when the config was read
    return false;
  }
  return g->matches(text);
}

bool contains(const std::vector<std::string> &codes, const std::string &code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

}  // namespace

unsigned applyRulePolicy(const Model &m, const RulePolicy &p, std::vector<Diagnostic> &diags,
                         std::set<std::string> &usedEntries) {
  // Nodes by (graph path, index), for their metadata.
  std::map<std::string, const Graph *> graphs;
  forEachGraph(*m.graph, [&](const Graph &g) { graphs.emplace(g.path(), &g); });
  auto nodeOf = [&](const Location &l) -> const Node * {
    if (!l.nodeIndex)
      return nullptr;
    auto g = graphs.find(l.graphPath.empty() ? "main" : l.graphPath);
    if (g == graphs.end() || *l.nodeIndex >= g->second->nodes().size())
      return nullptr;
    return g->second->nodes()[*l.nodeIndex].get();
  };
  // Node suppressions: which of their tokens suppressed something.
  std::map<const Node *, std::pair<NodeSuppression, std::set<std::string>>> nodeSupp;
  // Source comments by (file, line), and which of their tokens were used.
  std::map<std::pair<std::string, unsigned>, const SourceSuppression *> sourceSupp;
  for (const SourceSuppression &s : m.sourceSuppressions)
    sourceSupp.emplace(std::make_pair(s.file, s.line), &s);
  std::set<std::pair<const SourceSuppression *, std::string>> usedSource;

  unsigned suppressed = 0;
  std::vector<Diagnostic> kept;
  kept.reserve(diags.size());
  for (Diagnostic &d : diags) {
    auto sev = p.severity.find(d.code);
    if (sev != p.severity.end())
      d.severity = sev->second;
    // GL005 reports suppressions; it is never suppressed by one.
    if (d.code == unusedSuppressionInfo().code) {
      kept.push_back(std::move(d));
      continue;
    }
    bool drop = false;
    for (const IgnoreEntry &e : p.fileIgnores)
      if (contains(e.codes, d.code)) {
        usedEntries.insert(e.origin);
        drop = true;
      }
    if (d.location.source.valid())
      for (const IgnoreEntry &e : p.sourceIgnores)
        if (contains(e.codes, d.code) && sourceGlobMatches(e, d.location.source.file)) {
          usedEntries.insert(e.origin);
          drop = true;
        }
    if (const Node *n = nodeOf(d.location)) {
      auto it = nodeSupp.find(n);
      if (it == nodeSupp.end()) {
        auto s = nodeSuppressionOf(*n);
        it = nodeSupp.emplace(n, std::make_pair(s ? *s : NodeSuppression{}, std::set<std::string>())).first;
      }
      for (const NodeSuppression::Entry &e : it->second.first.entries)
        if (contains(e.codes, d.code)) {
          it->second.second.insert(e.token);
          drop = true;
        }
    }
    if (d.location.source.valid())
      if (auto it = sourceSupp.find({d.location.source.file, d.location.source.line}); it != sourceSupp.end())
        for (const std::string &token : it->second->tokens)
          if (contains(resolveRuleSelector(token), d.code)) {
            usedSource.insert({it->second, token});
            drop = true;
          }
    for (const IgnoreEntry &e : p.nodeIgnores)
      if (contains(e.codes, d.code) &&
          (globMatches(e.pattern, d.location.nodeName) || globMatches(e.pattern, d.location.modulePath))) {
        usedEntries.insert(e.origin);
        drop = true;
      }
    if (drop)
      ++suppressed;
    else
      kept.push_back(std::move(d));
  }
  diags = std::move(kept);

  if (p.reportUnusedIgnores && p.isEnabled("GL005")) {
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &n : g.nodes()) {
        auto s = nodeSuppressionOf(*n);
        if (!s)
          continue;
        auto it = nodeSupp.find(n.get());
        for (const NodeSuppression::Entry &e : s->entries)
          if (it == nodeSupp.end() || !it->second.second.count(e.token))
            diags.push_back(unusedSuppression(
                Location::ofNode(m.path, *n),
                fmt::format("'{}' in this node's {} metadata suppresses nothing", e.token, kIgnoreMetadataKey), p));
      }
    });
    for (const SourceSuppression &s : m.sourceSuppressions)
      for (const std::string &token : s.tokens)
        if (!resolveRuleSelector(token).empty() && !usedSource.count({&s, token}))
          diags.push_back(unusedSuppression(sourceSuppressionLocation(m.path, s),
                                            fmt::format("'{}' in this line's suppression comment suppresses nothing",
                                                        token),
                                            p));
    std::stable_sort(diags.begin(), diags.end(), diagnosticLess);
  }
  return suppressed;
}

std::vector<Diagnostic> unusedConfigIgnores(const std::vector<const ConfigLayer *> &layers,
                                            const std::set<std::string> &used, const RulePolicy &p) {
  std::vector<Diagnostic> out;
  std::set<std::string> seen;
  auto check = [&](const ConfigLayer &l, const IgnoreEntry &e, const char *key) {
    if (used.count(e.origin) || !seen.insert(e.origin).second)
      return;
    Location loc = Location::ofFile(l.origin);
    // origin is "FILE:LINE": point editors at the entry.
    size_t colon = e.origin.rfind(':');
    loc.source.file = l.origin;
    loc.source.line = colon == std::string::npos ? 1 : static_cast<unsigned>(std::stoul(e.origin.substr(colon + 1)));
    out.push_back(unusedSuppression(
        std::move(loc),
        fmt::format("{} entry '{}' ({}) suppresses nothing in the files linted", key, e.pattern,
                    llvm::join(e.selectors, ", ")),
        p));
  };
  for (const ConfigLayer *l : layers) {
    for (const IgnoreEntry &e : l->perFileIgnores)
      check(*l, e, "per-file-ignores");
    for (const IgnoreEntry &e : l->perNodeIgnores)
      check(*l, e, "per-node-ignores");
  }
  return out;
}

}  // namespace graphlint
