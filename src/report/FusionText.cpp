// `--fusion` in the text format: per model, the fusion groups that matter to a
// reader (kernels and control flow; shape-only groups are counted, not listed)
// and one summary line with the boundaries by reason, fusion breakers first.
// Renders a FusionSummary; never analyses. docs/output-formats.md specifies it.
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

constexpr size_t kMaxOps = 40;

// "LayerNormalization MatMul Add x3 Softmax", shortened to kMaxOps with "...".
std::string opSequence(const FusionSummary &s, const FusionSummary::Group &g) {
  std::string out;
  for (size_t i = 0; i < g.nodes.size();) {
    const std::string &op = s.nodes[g.nodes[i]].op;
    size_t j = i;
    while (j < g.nodes.size() && s.nodes[g.nodes[j]].op == op)
      ++j;
    std::string part = j - i > 1 ? fmt::format("{} x{}", op, j - i) : op;
    out += (out.empty() ? "" : " ") + part;
    i = j;
  }
  if (out.size() > kMaxOps)
    out = out.substr(0, kMaxOps - 3) + "...";
  return out;
}

std::string span(const FusionSummary &s, const FusionSummary::Group &g) {
  if (g.nodes.empty())
    return "";
  const std::string &first = s.nodes[g.nodes.front()].label;
  if (g.nodes.size() == 1)
    return first;
  return first + " .. " + s.nodes[g.nodes.back()].label;
}

std::string counts(const std::vector<std::pair<std::string, unsigned>> &v) {
  if (v.empty())
    return "none";
  std::string out;
  for (const auto &[reason, n] : v)
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", reason, n);
  return out;
}

}  // namespace

std::string fusionSummaryLine(const FusionSummary &s) {
  std::vector<std::pair<std::string, unsigned>> breaks, structural;
  std::vector<std::pair<std::string, unsigned>> all = s.reasonCounts();
  for (const auto &rc : all) {
    bool breaker = false;
    for (const FusionSummary::Boundary &b : s.boundaries)
      if (b.reason == rc.first) {
        breaker = b.breaker;
        break;
      }
    (breaker ? breaks : structural).push_back(rc);
  }
  return fmt::format("{} nodes, {} groups, {} kernels; breaks: {}; structural: {}", s.nodes.size(), s.groups.size(),
                     s.kernelsPredicted, counts(breaks), counts(structural));
}

void renderFusionText(const FusionSummary &s, const std::string &title, llvm::raw_ostream &os) {
  if (!s.present)
    return;
  os << fmt::format("{}: fusion plan for {}\n", title, s.backend);
  os << fmt::format("  {:>5}  {:<12} {:>7} {:>5}  {:<{}}  {}\n", "group", "kind", "kernels", "nodes", "ops", kMaxOps,
                    "first .. last node");
  unsigned hidden = 0, hiddenNodes = 0;
  for (unsigned gi = 0; gi < s.graphs.size(); ++gi) {
    bool header = gi == 0;
    for (const FusionSummary::Group &g : s.groups) {
      if (g.graph != gi)
        continue;
      if (g.kind == "shape-only" && g.kernels == 0) {
        ++hidden;
        hiddenNodes += static_cast<unsigned>(g.nodes.size());
        continue;
      }
      if (!header) {
        os << "  in " << s.graphs[gi].path << ":\n";
        header = true;
      }
      os << fmt::format("  {:>5}  {:<12} {:>7} {:>5}  {:<{}}  {}\n", g.id, g.kind, g.kernels, g.nodes.size(),
                        opSequence(s, g), kMaxOps, span(s, g));
    }
  }
  if (hidden)
    os << fmt::format("  (+{} shape-only group{} of {} node{}: constants, views and host-side shape arithmetic, 0 "
                      "kernels)\n",
                      hidden, hidden == 1 ? "" : "s", hiddenNodes, hiddenNodes == 1 ? "" : "s");
  os << "  " << fusionSummaryLine(s) << "\n";
}

}  // namespace graphlint
