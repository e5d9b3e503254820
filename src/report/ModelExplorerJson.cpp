// `--emit-model-explorer DIR` (docs/viewers.md): a model as Google's Model
// Explorer (ai-edge-model-explorer) reads it. graph.json is one graph
// collection in its JSON graph format (model_explorer/graph_builder.py: a
// GraphNode per node with id, label, namespace, subgraphIds, attrs,
// incomingEdges and outputsMetadata), each module path a namespace so that the
// graph collapses into layers; the other files are node-data overlays
// (node_data_builder.py's ModelNodeData: results by node id, per graph id)
// for the fusion group, the predicted time, the bytes at the memory peak and
// the findings of each node, coloured by a gradient where the value is a
// quantity. Everything is read from the FileReport: the GraphSummary the
// driver took from the cached analyses, and the diagnostics.
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/Support/Path.h>

#include <functional>
#include <iterator>
#include <map>
#include <memory>

namespace graphlint {

namespace {

using GNode = GraphSummary::Node;

// Model Explorer splits a namespace at '/', and "\/" is a slash in a name.
std::string escapeSlashes(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '/')
      out += '\\';
    out += c;
  }
  return out;
}

// A module path as nested layers, spelt as torch.onnx scopes its node names:
// "blocks.7.attn" -> "blocks/blocks.7/attn", "layer1.0.conv1" ->
// "layer1/layer1.0/conv1" (a numbered child is its parent's name, a dot and
// the number). A joint graph's backward nodes sit under "backward".
std::string namespaceOf(const GNode &n) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  llvm::StringRef(n.module).split(parts, '.', -1, false);
  std::vector<std::string> layers;
  for (llvm::StringRef p : parts) {
    bool number = !layers.empty() && llvm::all_of(p, llvm::isDigit);
    layers.push_back(number ? layers.back() + "." + p.str() : p.str());
  }
  std::string ns = n.backward ? "backward" : "";
  for (const std::string &l : layers)
    ns += (ns.empty() ? "" : "/") + escapeSlashes(l);
  return ns;
}

// What a node shows: its op ("addmm" for aten ops, the qualified op
// otherwise); a parameter, its name less the module it sits in.
std::string labelOf(const GNode &n) {
  llvm::StringRef op(n.op);
  switch (n.kind) {
  case GNode::Kind::Op: return op.startswith("aten::") ? op.drop_front(6).str() : n.op;
  case GNode::Kind::Param:
    if (!n.module.empty() && llvm::StringRef(n.name).startswith(n.module + "."))
      return n.name.substr(n.module.size() + 1);
    return n.name;
  case GNode::Kind::Input:
  case GNode::Kind::Capture: return n.name;
  }
  return n.name;
}

// `names` made unique: a repeated one gets "~2", "~3", ...
std::vector<std::string> uniqueIds(std::vector<std::string> names) {
  llvm::StringSet<> used;
  for (std::string &name : names) {
    std::string id = name;
    for (unsigned k = 2; !used.insert(id).second; ++k)
      id = name + "~" + std::to_string(k);
    name = std::move(id);
  }
  return names;
}

// Node ids: the node's label (its name, or "#N"), a value's name. Graph ids:
// the graph paths (two bodies of equally named nodes share one).
std::vector<std::string> nodeIds(const GraphSummary::Graph &g) {
  std::vector<std::string> names;
  names.reserve(g.nodes.size());
  for (const GNode &n : g.nodes)
    names.push_back(n.label.empty() ? "#" : n.label);
  return uniqueIds(std::move(names));
}
std::vector<std::string> graphIds(const GraphSummary &s) {
  std::vector<std::string> names;
  for (const GraphSummary::Graph &g : s.graphs)
    names.push_back(g.path);
  return uniqueIds(std::move(names));
}

std::string millis(double seconds) { return fmt::format("{:.4g} ms", seconds * 1e3); }

// The findings at each node: by graph, by summary node index.
struct NodeFindings {
  unsigned count = 0;
  Severity worst = Severity::Note;
  std::vector<std::string> lines;  // "GL141 warning: message"
};
struct FindingsIndex {
  std::vector<std::map<unsigned, NodeFindings>> byGraph;
  std::vector<std::string> fileLevel;  // findings at no node
};

FindingsIndex indexFindings(const FileReport &r) {
  const GraphSummary &s = r.graph;
  FindingsIndex out;
  out.byGraph.resize(s.graphs.size());
  std::map<std::string, unsigned> graphOf;
  std::vector<std::map<unsigned, unsigned>> opOf(s.graphs.size());  // op index -> summary node
  for (unsigned gi = 0; gi < s.graphs.size(); ++gi) {
    graphOf.emplace(s.graphs[gi].path, gi);
    for (unsigned k = 0; k < s.graphs[gi].nodes.size(); ++k)
      if (s.graphs[gi].nodes[k].kind == GNode::Kind::Op)
        opOf[gi][s.graphs[gi].nodes[k].index] = k;
  }
  for (const Diagnostic &d : r.diagnostics) {
    std::string line = fmt::format("{} {}: {}", d.code, severityName(d.severity), d.message);
    bool placed = false;
    auto place = [&](const Location &l) {
      auto g = graphOf.find(l.graphPath);
      if (!l.nodeIndex || g == graphOf.end())
        return;
      auto k = opOf[g->second].find(*l.nodeIndex);
      if (k == opOf[g->second].end())
        return;
      NodeFindings &f = out.byGraph[g->second][k->second];
      ++f.count;
      f.worst = std::max(f.worst, d.severity);
      f.lines.push_back(line);
      placed = true;
    };
    place(d.location);
    for (const Location &l : d.alsoAt)
      place(l);
    if (!placed)
      out.fileLevel.push_back(line);
  }
  return out;
}

void keyValue(llvm::json::OStream &j, llvm::StringRef key, const std::string &value) {
  j.object([&] {
    j.attribute("key", key);
    j.attribute("value", value);
  });
}

void renderGraph(const FileReport &r, llvm::raw_ostream &os) {
  const GraphSummary &s = r.graph;
  FindingsIndex findings = indexFindings(r);
  std::vector<std::string> gids = graphIds(s);
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("label", llvm::sys::path::filename(r.path));
    j.attributeArray("graphs", [&] {
      for (unsigned gi = 0; gi < s.graphs.size(); ++gi) {
        const GraphSummary::Graph &g = s.graphs[gi];
        std::vector<std::string> ids = nodeIds(g);
        j.object([&] {
          j.attribute("id", gids[gi]);
          j.attributeArray("nodes", [&] {
            for (unsigned k = 0; k < g.nodes.size(); ++k) {
              const GNode &n = g.nodes[k];
              j.object([&] {
                j.attribute("id", ids[k]);
                j.attribute("label", labelOf(n));
                j.attribute("namespace", namespaceOf(n));
                if (!n.subgraphs.empty())
                  j.attributeArray("subgraphIds", [&] {
                    for (unsigned sub : n.subgraphs)
                      j.value(gids[sub]);
                  });
                j.attributeArray("attrs", [&] {
                  for (const auto &[key, value] : n.attrs)
                    keyValue(j, key, value);
                  if (n.kind == GNode::Kind::Op && n.op != labelOf(n))
                    keyValue(j, "graphlint.op", n.op);
                  if (!n.name.empty() && n.name != ids[k])
                    keyValue(j, "graphlint.name", n.name);
                  if (!n.module.empty())
                    keyValue(j, "graphlint.module", n.module);
                  if (!n.source.empty())
                    keyValue(j, "graphlint.source", n.source);
                  if (n.backward)
                    keyValue(j, "graphlint.phase", "backward");
                  if (n.group)
                    keyValue(j, "graphlint.fusion_group", std::to_string(*n.group));
                  if (n.seconds)
                    keyValue(j, "graphlint.predicted_time", millis(*n.seconds));
                  if (n.peakBytes)
                    keyValue(j, "graphlint.bytes_at_peak", formatBytes(static_cast<double>(n.peakBytes)));
                  auto f = findings.byGraph[gi].find(k);
                  if (f != findings.byGraph[gi].end())
                    keyValue(j, "graphlint.findings", llvm::join(f->second.lines, "\n"));
                });
                j.attributeArray("incomingEdges", [&] {
                  for (unsigned in = 0; in < n.inputs.size(); ++in)
                    if (const auto &e = n.inputs[in])
                      j.object([&] {
                        j.attribute("sourceNodeId", ids[e->node]);
                        j.attribute("sourceNodeOutputId", std::to_string(e->output));
                        j.attribute("targetNodeInputId", std::to_string(in));
                      });
                });
                j.attributeArray("outputsMetadata", [&] {
                  for (unsigned o = 0; o < n.outputs.size(); ++o) {
                    const GraphSummary::Output &out = n.outputs[o];
                    if (out.name.empty() && out.type.empty())
                      continue;  // an omitted optional output
                    j.object([&] {
                      j.attribute("id", std::to_string(o));
                      j.attributeArray("attrs", [&] {
                        keyValue(j, "tensor_name", out.name);
                        keyValue(j, "tensor_shape", out.type);
                        if (!out.dtype.empty()) {
                          keyValue(j, "dtype", out.dtype);
                          keyValue(j, "shape", out.shape);
                        }
                      });
                    });
                  }
                });
                // Weights at the top of the layer that reads them.
                if (n.kind == GNode::Kind::Param)
                  j.attributeObject("config", [&] { j.attribute("pinToGroupTop", true); });
              });
            }
          });
          if (gi == 0)
            j.attributeObject("groupNodeAttributes", [&] {
              j.attributeObject("", [&] {
                j.attribute("model", r.path);
                j.attribute("mode", s.train ? "training step" : "inference");
                j.attribute("fusion backend", s.backend);
                j.attribute("target", s.target.empty() ? "unknown (no --target): no predicted times" : s.target);
                j.attribute("peak allocated", formatBytes(static_cast<double>(s.peakAllocatedBytes)));
                if (!s.peakNode.empty())
                  j.attribute("peak at", s.peakNode);
                j.attribute("findings", std::to_string(r.diagnostics.size()));
                if (!findings.fileLevel.empty())
                  j.attribute("findings at no node", llvm::join(findings.fileLevel, "\n"));
              });
            });
        });
      }
    });
  });
}

// One overlay: `value(node)` for the nodes that have one; `color(node)`, an
// explicit colour, or none to let the gradient colour it. Model Explorer maps
// the gradient linearly from the smallest value to the largest; kernel times
// and tensor sizes are heavy-tailed (an LM head's matmul is 10x a layer's),
// so the colour ramps up within the first tenth and the tail darkens slowly.
struct Overlay {
  std::string name;
  std::vector<std::pair<double, const char *>> gradient;  // stop, colour
  bool hideStats = false;  // sums and shares of the values mean nothing
  std::function<std::optional<double>(unsigned graph, unsigned node)> value;
  std::function<std::string(unsigned graph, unsigned node)> color;
};

void renderOverlay(const GraphSummary &s, const Overlay &o, llvm::raw_ostream &os) {
  std::vector<std::string> gids = graphIds(s);
  llvm::json::OStream j(os);
  j.object([&] {
    for (unsigned gi = 0; gi < s.graphs.size(); ++gi) {
      const GraphSummary::Graph &g = s.graphs[gi];
      std::vector<std::string> ids = nodeIds(g);
      j.attributeObject(gids[gi], [&] {
        j.attribute("name", o.name);
        j.attributeObject("results", [&] {
          for (unsigned k = 0; k < g.nodes.size(); ++k)
            if (std::optional<double> v = o.value(gi, k))
              j.attributeObject(ids[k], [&] {
                j.attribute("value", *v);
                if (o.color)
                  j.attribute("bgColor", o.color(gi, k));
              });
        });
        if (!o.gradient.empty())
          j.attributeArray("gradient", [&] {
            for (const auto &entry : o.gradient)  // not a structured binding: clang 14 cannot capture one
              j.object([&] {
                j.attribute("stop", entry.first);
                j.attribute("bgColor", entry.second);
              });
          });
        if (o.hideStats) {
          j.attribute("hideInAggregatedStatsTable", true);
          j.attribute("hideInChildrenStatsTable", true);
        }
      });
    }
  });
}

// Twelve colours far apart (Tableau's and ColorBrewer's Paired), so that
// neighbouring fusion groups read as different kernels.
constexpr const char *kGroupColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                        "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#a6cee3", "#fdbf6f"};

const char *severityColor(Severity s) {
  switch (s) {
  case Severity::Error: return "#d93025";
  case Severity::Warning: return "#f9ab00";
  case Severity::Note: return "#1a73e8";
  }
  return "#1a73e8";
}

}  // namespace

std::string_view explorerFileName(ExplorerFile f) {
  switch (f) {
  case ExplorerFile::Graph: return "graph.json";
  case ExplorerFile::FusionGroup: return "fusion_group.json";
  case ExplorerFile::PredictedTime: return "predicted_time.json";
  case ExplorerFile::PeakBytes: return "peak_bytes.json";
  case ExplorerFile::Findings: return "findings.json";
  }
  return "";
}

void renderModelExplorer(const FileReport &r, ExplorerFile f, llvm::raw_ostream &os) {
  const GraphSummary &s = r.graph;
  auto node = [&](unsigned g, unsigned k) -> const GNode & { return s.graphs[g].nodes[k]; };
  Overlay o;
  switch (f) {
  case ExplorerFile::Graph: renderGraph(r, os); return;
  case ExplorerFile::FusionGroup:
    o.name = "fusion group (" + s.backend + ")";
    o.hideStats = true;  // a sum or mean of group ids means nothing
    o.value = [&](unsigned g, unsigned k) -> std::optional<double> {
      if (!node(g, k).group)
        return std::nullopt;
      return static_cast<double>(*node(g, k).group);
    };
    o.color = [&](unsigned g, unsigned k) {
      return std::string(kGroupColors[*node(g, k).group % std::size(kGroupColors)]);
    };
    break;
  case ExplorerFile::PredictedTime:
    o.name = s.target.empty() ? "predicted time (no --target)" : "predicted time, s (" + s.target + ")";
    o.gradient = {{0, "#fff5eb"}, {0.02, "#fdd0a2"}, {0.1, "#fd8d3c"}, {0.4, "#d94801"}, {1, "#7f2704"}};
    o.value = [&](unsigned g, unsigned k) { return node(g, k).seconds; };
    break;
  case ExplorerFile::PeakBytes:
    o.name = "bytes at the memory peak";
    o.gradient = {{0, "#f7fbff"}, {0.02, "#c6dbef"}, {0.1, "#6baed6"}, {0.4, "#2171b5"}, {1, "#08306b"}};
    o.value = [&](unsigned g, unsigned k) -> std::optional<double> {
      if (!node(g, k).peakBytes)
        return std::nullopt;
      return static_cast<double>(node(g, k).peakBytes);
    };
    break;
  case ExplorerFile::Findings: {
    auto index = std::make_shared<FindingsIndex>(indexFindings(r));
    o.name = "findings";
    o.value = [index](unsigned g, unsigned k) -> std::optional<double> {
      auto it = index->byGraph[g].find(k);
      if (it == index->byGraph[g].end())
        return std::nullopt;
      return static_cast<double>(it->second.count);
    };
    o.color = [index](unsigned g, unsigned k) {
      return std::string(severityColor(index->byGraph[g].at(k).worst));
    };
    break;
  }
  }
  renderOverlay(s, o, os);
}

}  // namespace graphlint
