// `graphlint inspect`: structure, types and parameter totals of a model. The
// JSON form is a contract (docs/output-formats.md): values carry ONNX dtype
// names and shapes whose dims are ints, symbol strings, or null (unknown).
#include "graphlint/ir/Display.h"
#include "graphlint/report/Reporters.h"

#include "graphlint/engine/Driver.h"

#include <fmt/format.h>

#include <map>

namespace graphlint {
namespace json = llvm::json;

static json::Value shapeJson(const Type &t) {
  if (!t.isTensor() || !t.shape.rankKnown)
    return nullptr;
  json::Array dims;
  for (const Dim &d : t.shape.dims) {
    if (d.isStatic())
      dims.push_back(d.value);
    else if (d.isSymbolic())
      dims.push_back(d.str());
    else
      dims.push_back(nullptr);
  }
  return dims;
}

static json::Value dtypeJson(const Type &t) {
  if (t.isTensor())
    return t.dtype == DType::Undefined ? json::Value(nullptr) : json::Value(std::string(dtypeName(t.dtype)));
  switch (t.kind) {
  case TypeKind::Sequence: return "SEQUENCE";
  case TypeKind::Optional: return "OPTIONAL";
  case TypeKind::Map: return "MAP";
  default: return nullptr;
  }
}

static json::Value valueJson(const Value &v) {
  json::Object o{{"name", v.name}, {"dtype", dtypeJson(v.type)}, {"shape", shapeJson(v.type)}};
  if (v.type.kind == TypeKind::Sequence || v.type.kind == TypeKind::Optional)
    o["kind"] = v.type.kind == TypeKind::Sequence ? "sequence" : "optional";
  if (v.type.element)
    o["element"] = json::Object{{"dtype", dtypeJson(*v.type.element)}, {"shape", shapeJson(*v.type.element)}};
  return o;
}

json::Value inspectJson(const Model &m) {
  FileStats s = statsOf(m);
  std::map<std::string, int64_t> hist;
  json::Array values;
  forEachGraph(*m.graph, [&](const Graph &g) {
    for (const auto &n : g.nodes()) {
      ++hist[n->qualifiedOp()];
      for (const Value *v : n->outputs)
        if (v)
          values.push_back(valueJson(*v));
    }
  });
  json::Object ops;
  for (const auto &[k, v] : hist)
    ops[k] = v;
  json::Array inputs, outputs, opsets;
  for (const Value *v : m.graph->inputs)
    inputs.push_back(valueJson(*v));
  for (const Value *v : m.graph->outputs)
    outputs.push_back(valueJson(*v));
  for (const auto &o : m.opsets)
    opsets.push_back(json::Object{{"domain", o.domain.empty() ? "ai.onnx" : o.domain}, {"version", o.version}});
  return json::Object{
      {"file", m.path},
      {"graph",
       json::Object{{"nodes", static_cast<int64_t>(s.nodes)},
                    {"top_level_nodes", static_cast<int64_t>(m.graph->nodes().size())},
                    {"subgraphs", static_cast<int64_t>(s.graphs - 1)},
                    {"values", static_cast<int64_t>(s.values)},
                    {"inputs", static_cast<int64_t>(m.graph->inputs.size())},
                    {"outputs", static_cast<int64_t>(m.graph->outputs.size())},
                    {"functions", static_cast<int64_t>(m.functions.size())},
                    {"ir_version", m.irVersion},
                    {"producer", m.producerName + (m.producerVersion.empty() ? "" : " " + m.producerVersion)},
                    {"opsets", std::move(opsets)}}},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"values", std::move(values)},
      {"params", json::Object{{"count", static_cast<int64_t>(s.params)}, {"bytes", static_cast<int64_t>(s.paramBytes)}}},
      {"buffers", json::Object{{"count", static_cast<int64_t>(s.buffers)}, {"bytes", static_cast<int64_t>(s.bufferBytes)}}},
      {"ops", std::move(ops)}};
}


void renderInspectText(const Model &m, llvm::raw_ostream &os) {
  FileStats s = statsOf(m);
  uint64_t numel = 0, bufferNumel = 0;
  forEachGraph(*m.graph, [&](const Graph &g) {
    for (const auto &p : g.params())
      (p->buffer ? bufferNumel : numel) += static_cast<uint64_t>(p->tensor.numElements().value_or(0));
  });
  os << m.path << "\n";
  if (m.format == ModelFormat::Onnx)
    os << fmt::format("  producer   {} {} (ir_version {})\n", m.producerName, m.producerVersion, m.irVersion);
  else  // PyTorch graphs have no ONNX IR version
    os << fmt::format("  producer   {} {}\n", m.producerName, m.producerVersion);
  std::string opsets;
  for (const auto &o : m.opsets)
    opsets += fmt::format("{}{} {}", opsets.empty() ? "" : ", ", o.domain.empty() ? "ai.onnx" : o.domain, o.version);
  os << "  opsets     " << opsets << "\n";
  os << fmt::format("  nodes      {} ({} top-level, {} subgraphs, {} functions)\n", s.nodes, m.graph->nodes().size(),
                    s.graphs - 1, m.functions.size());
  os << fmt::format("  params     {} tensors, {} elements, {}\n", s.params, numel, formatBytes(static_cast<double>(s.paramBytes)));
  if (s.buffers)
    os << fmt::format("  buffers    {} tensors, {} elements, {} (registered buffers: resident, never trained)\n",
                      s.buffers, bufferNumel, formatBytes(static_cast<double>(s.bufferBytes)));
  for (const Value *v : m.graph->inputs)
    os << "  input      " << v->name << ": " << v->type.str() << "\n";
  for (const Value *v : m.graph->outputs)
    os << "  output     " << v->name << ": " << v->type.str() << "\n";
  std::map<std::string, int> hist;
  forEachGraph(*m.graph, [&](const Graph &g) {
    for (const auto &n : g.nodes())
      ++hist[n->qualifiedOp()];
  });
  std::vector<std::pair<int, std::string>> byCount;
  for (const auto &[k, v] : hist)
    byCount.emplace_back(-v, k);
  std::sort(byCount.begin(), byCount.end());
  os << "  ops       ";
  for (const auto &[c, k] : byCount)
    os << " " << k << "=" << -c;
  os << "\n";
}

}  // namespace graphlint
