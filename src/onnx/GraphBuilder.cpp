#include "GraphBuilder.h"

#include "ProtoConvert.h"
#include "SourceInfo.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/Verifier.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>

#include <deque>

namespace graphlint::onnxio {

void GraphBuilder::problem(const Graph &g, const Node *n, std::string msg) {
  ImportProblem p;
  p.kind = ImportProblem::Kind::Invalid;
  p.message = std::move(msg);
  p.graph = &g;
  p.node = n;
  model_.problems.push_back(std::move(p));
}

onnx::NodeProto *GraphBuilder::protoOf(const Node *n) const {
  auto it = nodeProtos_.find(n->graph);
  if (it == nodeProtos_.end() || n->index >= it->second.size())
    return nullptr;
  return it->second[n->index];
}

const onnx::GraphProto *GraphBuilder::protoOf(const Graph *g) const {
  auto it = graphProtos_.find(g);
  return it == graphProtos_.end() ? nullptr : it->second;
}


const GraphBuilder::OpEntry &GraphBuilder::opEntry(const std::string &domain, const std::string &opType) {
  std::string key = domain;
  key += '\0';
  key += opType;
  auto [it, added] = ops_.try_emplace(key);
  if (added) {
    OpEntry &e = it->second;
    e.opsetVersion = model_.opsetVersion(domain);
    // Model-local functions are all known before any graph is built.
    if (model_.findFunction(domain, opType))
      e.op = OpRegistry::instance().lookup("graphlint.function", opType, 1);
    else
      e.op = OpRegistry::instance().lookup(domain, opType, e.opsetVersion);
  }
  return it->second;
}

Value *GraphBuilder::resolve(Graph &g, const std::string &name, Node &user, unsigned operand) {
  if (Value *v = g.findLocal(name))
    return v;
  for (Graph *outer = g.parentGraph; outer; outer = outer->parentGraph) {
    if (Value *ov = outer->findLocal(name)) {
      if (ov->kind == Value::Kind::OuterScope)
        ov = ov->outer;
      Value *v = g.createValue(name, Value::Kind::OuterScope);
      v->outer = ov;
      return v;
    }
  }
  // Dangling: the verifier reports Missing values.
  return g.createValue(name, Value::Kind::Missing);
}

std::unique_ptr<Graph> GraphBuilder::build(const onnx::GraphProto &gp, Graph *parentGraph, Node *parentNode,
                                           std::string name) {
  auto g = std::make_unique<Graph>();
  g->name = name.empty() ? gp.name() : name;
  g->parentGraph = parentGraph;
  g->parentNode = parentNode;
  graphProtos_[g.get()] = &gp;

  // Params first: old IR versions also list initializers among the inputs.
  for (const auto &t : gp.initializer()) {
    if (g->findLocal(t.name())) {
      problem(*g, nullptr, fmt::format("initializer '{}' is defined more than once", t.name()));
      continue;
    }
    Param *p = g->createParam();
    p->tensor = literalFromTensor(t);
    Value *v = g->createValue(t.name(), Value::Kind::Param);
    v->param = p;
    p->value = v;
    Shape s;
    s.rankKnown = true;
    for (int64_t d : p->tensor.dims)
      s.dims.push_back(Dim::fixed(d));
    v->type = Type::tensor(p->tensor.dtype, s);
  }
  for (const auto &st : gp.sparse_initializer()) {
    const auto &vals = st.values();
    if (g->findLocal(vals.name()))
      continue;
    Param *p = g->createParam();
    p->tensor = literalFromTensor(vals);
    p->tensor.dims.assign(st.dims().begin(), st.dims().end());
    Value *v = g->createValue(vals.name(), Value::Kind::Param);
    v->param = p;
    p->value = v;
    Shape s;
    s.rankKnown = true;
    for (int64_t d : st.dims())
      s.dims.push_back(Dim::fixed(d));
    Type t = Type::tensor(p->tensor.dtype, s);
    t.kind = TypeKind::SparseTensor;
    v->type = t;
  }
  for (const auto &in : gp.input()) {
    if (Value *existing = g->findLocal(in.name())) {
      if (existing->kind != Value::Kind::Param)
        problem(*g, nullptr, fmt::format("graph input '{}' is declared more than once", in.name()));
      continue;
    }
    Value *v = g->createValue(in.name(), Value::Kind::GraphInput);
    v->type = typeFromProto(in.type());
    // A negative dim is not a size: report it and treat it as unknown, so no
    // analysis multiplies by it (some tools write -1 meaning "dynamic").
    for (size_t d = 0; d < v->type.shape.dims.size(); ++d) {
      Dim &dim = v->type.shape.dims[d];
      if (dim.isStatic() && dim.value < 0) {
        problem(*g, nullptr, fmt::format("graph input '{}' declares a negative size {} for dimension {}; use a "
                                         "symbolic dim (dim_param) for a dynamic size",
                                         in.name(), dim.value, d));
        dim = Dim::unknown();
      }
    }
    g->inputs.push_back(v);
  }

  // Nodes and their outputs, in file order.
  std::vector<std::pair<Node *, const onnx::NodeProto *>> order;
  order.reserve(gp.node_size());
  for (const auto &np : gp.node()) {
    Node *n = g->createNode();
    n->name = np.name();
    n->opType = np.op_type();
    n->domain = isDefaultDomain(np.domain()) ? std::string() : np.domain();
    const OpEntry &entry = opEntry(n->domain, n->opType);
    n->opsetVersion = entry.opsetVersion;
    n->docString = np.doc_string();
    // metadata_props (field 9) is newer than the installed ONNX.
    n->metadata = newerMetadataProps(np, 9);
    n->op = entry.op;
    for (const auto &ap : np.attribute()) {
      n->attributes.emplace_back();
      attributeFromProto(ap, n->attributes.back());
    }
    recoverSourceInfo(*n);
    for (const std::string &out : np.output()) {
      if (out.empty()) {
        n->outputs.push_back(nullptr);
        continue;
      }
      // A second definition gets its own (unregistered) value; the verifier
      // reports the duplicate.
      Value *prev = g->findLocal(out);
      Value *v = prev ? g->createValue("", Value::Kind::NodeOutput) : g->createValue(out, Value::Kind::NodeOutput);
      if (prev)
        v->name = out;
      v->producer = n;
      v->resultIndex = static_cast<unsigned>(n->outputs.size());
      n->outputs.push_back(v);
    }
    order.emplace_back(n, &np);
  }

  // Inputs and nested bodies, now that every local value exists.
  for (const auto &entry : order) {
    // Plain variables, not a structured binding: the lambdas below capture
    // them, which C++17 (and clang, for the fuzz build) does not allow.
    Node *n = entry.first;
    const onnx::NodeProto *np = entry.second;
    for (int i = 0; i < np->input_size(); ++i) {
      const std::string &in = np->input(i);
      Value *v = in.empty() ? nullptr : resolve(*g, in, *n, static_cast<unsigned>(i));
      n->inputs.push_back(v);
      if (v)
        v->uses.push_back({n, static_cast<unsigned>(i)});
    }
    bool tooDeepReported = false;  // one problem per node, not per body (If has two)
    for (size_t ai = 0; ai < n->attributes.size(); ++ai) {
      const auto &ap = np->attribute(static_cast<int>(ai));
      auto addBody = [&](const onnx::GraphProto &body) {
        if (g->depth() + 1 > kMaxGraphDepth) {
          if (!tooDeepReported)
            problem(*g, n, fmt::format("subgraphs are nested deeper than {} levels; the bodies of node {} are not "
                                       "analysed",
                                       kMaxGraphDepth, describeNode(*n)));
          tooDeepReported = true;
          return;
        }
        n->attributes[ai].graphs.push_back(static_cast<unsigned>(n->subgraphs().size()));
        n->subgraphs().push_back(build(body, g.get(), n, ap.name()));
      };
      if (ap.has_g())
        addBody(ap.g());
      for (const auto &body : ap.graphs())
        addBody(body);
    }
  }

  for (const auto &out : gp.output()) {
    Value *v = g->findLocal(out.name());
    if (!v) {
      // A body may yield an outer value directly.
      for (Graph *outer = g->parentGraph; outer && !v; outer = outer->parentGraph)
        v = outer->findLocal(out.name());
      if (v) {
        Value *cap = g->createValue(out.name(), Value::Kind::OuterScope);
        cap->outer = v->kind == Value::Kind::OuterScope ? v->outer : v;
        v = cap;
      } else {
        v = g->createValue(out.name(), Value::Kind::Missing);
      }
    }
    Type declared = typeFromProto(out.type());
    if (declared.kind != TypeKind::Unknown && v->type.kind == TypeKind::Unknown)
      v->type = declared;
    v->markGraphOutput();
    g->outputs.push_back(v);
  }
  for (const auto &vi : gp.value_info()) {
    Value *v = g->findLocal(vi.name());
    if (v && v->type.kind == TypeKind::Unknown)
      v->type = typeFromProto(vi.type());
    // An initializer's value_info metadata (field 4, newer than the installed
    // ONNX): onnxscript's optimizer names what it folded into it there.
    if (v && v->kind == Value::Kind::Param && v->param)
      for (auto &kv : newerMetadataProps(vi, 4))
        v->param->metadata.push_back(std::move(kv));
  }

  sortTopologically(*g);
  // Node::index is final now: map it to the proto each node came from.
  std::vector<onnx::NodeProto *> &protos = nodeProtos_[g.get()];
  protos.resize(g->nodes().size());
  for (auto &[node, proto] : order)
    protos[node->index] = const_cast<onnx::NodeProto *>(proto);
  return g;
}

void capturedValues(const Node &n, llvm::SmallVectorImpl<Value *> &out) {
  const Graph *home = n.graph;
  for (const auto &sub : n.subgraphs())
    forEachGraph(*sub, [&](const Graph &g) {
      for (const auto &v : g.values())
        if (v->kind == Value::Kind::OuterScope && v->outer && v->outer->graph == home)
          out.push_back(v->outer);
    });
}

void GraphBuilder::sortTopologically(Graph &g) {
  auto &nodes = g.mutableNodes();
  const size_t n = nodes.size();
  // Exporters write sorted graphs: when every node reads only earlier nodes,
  // the stable sort below would return the file order, so keep it as it is
  // (no per-node lists for a million nodes).
  bool inFileOrder = true;
  for (size_t i = 0; i < n && inFileOrder; ++i) {
    llvm::SmallVector<Value *, 8> deps(nodes[i]->inputs.begin(), nodes[i]->inputs.end());
    capturedValues(*nodes[i], deps);
    for (Value *v : deps)
      if (v && v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == &g &&
          v->producer->index >= i) {
        inFileOrder = false;
        break;
      }
  }
  if (inFileOrder)
    return;
  // Kahn's algorithm, stable: among ready nodes the file order wins.
  std::vector<unsigned> pending(n, 0);  // by file position (Node::index)
  std::vector<std::vector<unsigned>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    llvm::SmallVector<Value *, 8> deps(nodes[i]->inputs.begin(), nodes[i]->inputs.end());
    capturedValues(*nodes[i], deps);
    llvm::SmallDenseSet<const Node *, 8> seen;
    unsigned count = 0;
    for (Value *v : deps) {
      if (!v || v->kind != Value::Kind::NodeOutput || !v->producer || v->producer->graph != &g)
        continue;
      if (!seen.insert(v->producer).second)
        continue;
      consumers[v->producer->index].push_back(static_cast<unsigned>(i));
      ++count;
    }
    pending[i] = count;
  }
  std::vector<unsigned> ready, sorted;
  sorted.reserve(n);
  for (size_t i = n; i-- > 0;)
    if (pending[i] == 0)
      ready.push_back(static_cast<unsigned>(i));
  // A min-heap on file index keeps the order stable.
  auto cmp = [](unsigned a, unsigned b) { return a > b; };
  std::make_heap(ready.begin(), ready.end(), cmp);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), cmp);
    unsigned i = ready.back();
    ready.pop_back();
    sorted.push_back(i);
    for (unsigned c : consumers[i])
      if (--pending[c] == 0) {
        ready.push_back(c);
        std::push_heap(ready.begin(), ready.end(), cmp);
      }
  }
  if (sorted.size() < n) {
    // A cycle: keep the stuck nodes in file order; the verifier reports it.
    std::vector<bool> placed(n, false);
    for (unsigned i : sorted)
      placed[i] = true;
    for (size_t i = 0; i < n; ++i)
      if (!placed[i])
        sorted.push_back(static_cast<unsigned>(i));
  } else {
    for (size_t k = 0; k < n; ++k)
      if (sorted[k] != k) {
        const Node *late = nodes[sorted[k]].get();
        // Indices are still file positions here; name them as such, since
        // the diagnostic's location uses the sorted order.
        problem(g, late, fmt::format("nodes are not in topological order: {} (file position {}) must run before "
                                     "{} (file position {}); ONNX requires sorted nodes",
                                     late->qualifiedOp() + (late->name.empty() ? "" : " '" + late->name + "'"),
                                     late->index + 1,
                                     nodes[k]->qualifiedOp() + (nodes[k]->name.empty() ? "" : " '" + nodes[k]->name + "'"),
                                     k + 1));
        break;
      }
  }
  std::vector<std::unique_ptr<Node>> reordered;
  reordered.reserve(n);
  for (unsigned i : sorted)
    reordered.push_back(std::move(nodes[i]));
  nodes = std::move(reordered);
  g.renumber();
}

}  // namespace graphlint::onnxio
