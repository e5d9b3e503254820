// `--emit-dot`: a model's fusion plan as Graphviz DOT. Each nested body is a
// cluster inside the cluster of its enclosing graph (function bodies are
// top-level clusters); each fusion group with a
// kernel (or a control-flow node) is a cluster inside its graph; shape-only
// nodes stand outside group clusters, greyed. Edges that cross a boundary are
// red and labelled with the reason (solid and bold for fusion breakers, dashed
// for structural boundaries). Renders a FusionSummary with edges; never
// analyses. docs/output-formats.md specifies the drawing.
#include "graphlint/report/Reporters.h"
#include "graphlint/ir/MessageText.h"

#include <llvm/Support/JSON.h>

#include <fmt/format.h>

namespace graphlint {
namespace {

// The body of a DOT double-quoted string: quotes and backslashes escaped,
// line breaks as \n, other control characters dropped, invalid UTF-8 fixed.
// (Labels are plain strings, never HTML or record labels, so <, >, {, } and |
// are literal.)
std::string q(const std::string &raw) {
  std::string s = llvm::json::isUTF8(raw) ? raw : llvm::json::fixUTF8(raw);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      continue;
    else
      out += c;
  }
  return out + "\"";
}

// Labels built from several escaped parts joined by a DOT line break.
std::string lines(std::initializer_list<std::string> parts) {
  std::string out = "\"";
  bool first = true;
  for (const std::string &p : parts) {
    std::string e = q(p);
    out += (first ? "" : "\\n") + e.substr(1, e.size() - 2);
    first = false;
  }
  return out + "\"";
}

const char *fillFor(const std::string &kind) {
  if (kind == "pointwise") return "#dbe9f6";
  if (kind == "reduction") return "#fff2cc";
  if (kind == "contraction") return "#fde0d0";
  if (kind == "control-flow") return "#e6e0f3";
  if (kind == "host-sync") return "#f8d7da";
  return "#e8e8e8";  // opaque, unknown, collective
}

struct Writer {
  const FusionSummary &s;
  llvm::raw_ostream &os;
  std::vector<std::vector<unsigned>> groupsOfGraph, childGraphs;

  void node(unsigned n, const std::string &indent, bool shapeOnly) {
    const FusionSummary::Node &nd = s.nodes[n];
    os << indent << "n" << n << " [label=" << lines({nd.op, nd.label});
    if (shapeOnly)
      os << ", style=\"rounded,dashed\", color=gray60, fontcolor=gray40";
    os << "];\n";
  }

  void graph(unsigned gi, const std::string &indent) {
    std::string in = indent;
    if (gi != 0) {
      os << indent << "subgraph cluster_g" << gi << " {\n";
      in = indent + "  ";
      os << in << "label=" << q(s.graphs[gi].path) << "; style=dashed; color=gray50; fontcolor=gray30;\n";
    }
    for (unsigned gid : groupsOfGraph[gi]) {
      const FusionSummary::Group &g = s.groups[gid];
      if (g.kind == "shape-only") {
        for (unsigned n : g.nodes)
          node(n, in, true);
        continue;
      }
      os << in << "subgraph cluster_f" << g.id << " {\n";
      os << in << "  label="
         << q(fmt::format("group {}: {}, {} kernel{}", g.id, g.kind, g.kernels, g.kernels == 1 ? "" : "s"))
         << "; style=\"filled,rounded\"; fillcolor=\"" << fillFor(g.kind) << "\"; color=gray40;\n";
      for (unsigned n : g.nodes)
        node(n, in + "  ", false);
      os << in << "}\n";
    }
    for (unsigned child : childGraphs[gi])
      graph(child, in);
    if (gi != 0)
      os << indent << "}\n";
  }
};

}  // namespace

void renderDot(const FusionSummary &s, const std::string &title, llvm::raw_ostream &os) {
  Writer w{s, os, {}, {}};
  w.groupsOfGraph.resize(s.graphs.size());
  w.childGraphs.resize(s.graphs.size());
  for (const FusionSummary::Group &g : s.groups)
    if (g.graph < s.graphs.size() && g.id < s.groups.size())
      w.groupsOfGraph[g.graph].push_back(g.id);
  for (unsigned gi = 1; gi < s.graphs.size(); ++gi)
    if (s.graphs[gi].parent >= 0)
      w.childGraphs[static_cast<unsigned>(s.graphs[gi].parent)].push_back(gi);

  os << "digraph fusion {\n";
  os << "  graph [label="
     << lines({oneLine(title), fmt::format("backend {}: {}", s.backend, fusionSummaryLine(s))})
     << ", labelloc=t, fontname=\"Helvetica\", fontsize=12, compound=true, newrank=true];\n";
  os << "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n";
  os << "  edge [color=gray45, fontname=\"Helvetica\", fontsize=9];\n";
  if (!s.graphs.empty())
    w.graph(0, "  ");
  for (unsigned gi = 1; gi < s.graphs.size(); ++gi)
    if (s.graphs[gi].parent < 0)  // model-local function bodies
      w.graph(gi, "  ");

  for (const FusionSummary::Edge &e : s.edges) {
    os << "  n" << e.from << " -> n" << e.to;
    if (e.boundary >= 0 && static_cast<size_t>(e.boundary) < s.boundaries.size()) {
      const FusionSummary::Boundary &b = s.boundaries[static_cast<size_t>(e.boundary)];
      std::string label = b.detail.empty() ? b.reason : b.reason + " (" + b.detail + ")";
      os << " [color=red, fontcolor=red, label=" << q(label)
         << (b.breaker ? ", penwidth=2" : ", style=dashed") << "]";
    }
    os << ";\n";
  }
  // Control-flow node -> the body it runs.
  for (unsigned gi = 1; gi < s.graphs.size(); ++gi) {
    const FusionSummary::Graph &g = s.graphs[gi];
    if (g.parentNode < 0 || w.groupsOfGraph[gi].empty())
      continue;
    unsigned first = static_cast<unsigned>(s.nodes.size());
    for (unsigned gid : w.groupsOfGraph[gi])
      for (unsigned n : s.groups[gid].nodes)
        first = std::min(first, n);
    if (first >= s.nodes.size())
      continue;
    os << "  n" << g.parentNode << " -> n" << first << " [style=dotted, color=purple, fontcolor=purple, label="
       << q(g.attribute) << ", lhead=cluster_g" << gi << "];\n";
  }
  os << "}\n";
}

}  // namespace graphlint
