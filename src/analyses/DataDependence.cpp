// One forward pass over every graph in execution order (bodies before the
// node that owns them) propagates two taints: "contents from runtime data"
// and "dims from runtime data". Shape/Size turn a dims taint into a contents
// taint and drop the contents taint of their input, which is why shape
// arithmetic on static or symbolic dims stays clean.
#include "graphlint/analyses/DataDependence.h"
#include "graphlint/ir/ValueFacts.h"

#include "graphlint/ir/OpRegistry.h"

#include <llvm/ADT/StringSwitch.h>

#include <optional>
#include <set>

namespace graphlint {

ControlFlowKind controlFlowKind(const Node &n) {
  llvm::StringRef op = n.opType;
  if (isDefaultDomain(n.domain)) {
    if (op == "If") return ControlFlowKind::If;
    if (op == "Loop") return ControlFlowKind::Loop;
    if (op == "Scan") return ControlFlowKind::Scan;
  }
  // FX spellings: domain "higher_order" with op "cond", or the full target
  // "torch.ops.higher_order.cond" / "higher_order.cond" as the op name.
  std::string q = n.qualifiedOp();
  llvm::StringRef full(q);
  if (full.contains("higher_order")) {
    llvm::StringRef last = full.rsplit('.').second.empty() ? full : full.rsplit('.').second;
    last = last.rsplit(':').second.empty() ? last : last.rsplit(':').second;
    if (last == "cond") return ControlFlowKind::Cond;
    if (last == "while_loop") return ControlFlowKind::WhileLoop;
    return ControlFlowKind::Other;  // scan, map_impl, flex_attention, ...
  }
  if (n.op && n.op->kind == OpKind::ControlFlow)
    return ControlFlowKind::Other;  // SequenceMap, or an FX op that owns bodies
  return ControlFlowKind::None;
}

std::string_view controlFlowKindName(ControlFlowKind k) {
  switch (k) {
  case ControlFlowKind::None: return "none";
  case ControlFlowKind::If: return "If";
  case ControlFlowKind::Loop: return "Loop";
  case ControlFlowKind::Scan: return "Scan";
  case ControlFlowKind::Cond: return "torch.cond";
  case ControlFlowKind::WhileLoop: return "torch.while_loop";
  case ControlFlowKind::Other: return "control flow";
  }
  return "control flow";
}

BranchBodies branchBodies(const Node &n) {
  BranchBodies b;
  ControlFlowKind k = controlFlowKind(n);
  if ((k != ControlFlowKind::If && k != ControlFlowKind::Cond) || n.subgraphs().size() != 2)
    return b;
  // Bodies are stored in attribute order, which exporters do not fix
  // (else_branch often comes first): find them by attribute name.
  const Graph *byName[2] = {nullptr, nullptr};
  std::string names[2];
  for (const Attribute &a : n.attributes) {
    llvm::StringRef an = a.name;
    int which = an.startswith("then") || an.startswith("true") ? 0 : an.startswith("else") || an.startswith("false") ? 1 : -1;
    if (which >= 0 && a.graphs.size() == 1 && a.graphs[0] < n.subgraphs().size()) {
      byName[which] = n.subgraphs()[a.graphs[0]].get();
      names[which] = a.name;
    }
  }
  if (!byName[0] || !byName[1] || byName[0] == byName[1]) {
    byName[0] = n.subgraphs()[0].get(), byName[1] = n.subgraphs()[1].get();
    names[0] = "true branch", names[1] = "false branch";
  }
  b.thenBody = byName[0], b.elseBody = byName[1];
  b.thenName = names[0], b.elseName = names[1];
  return b;
}

namespace {

const Value *defining(const Value *v) { return captureOrigin(v); }

bool isScalar(const Value *v) { return v && v->type.isTensor() && v->type.shape.rankKnown && v->type.shape.rank() == 0; }

// The size symbols a tensor's dims mention (s0, u0), none for other values.
std::set<std::string> dimSymbols(const Value *v) {
  std::set<std::string> syms;
  if (v && v->type.isTensor() && v->type.shape.rankKnown)
    for (const Dim &d : v->type.shape.dims)
      if (d.isSymbolic())
        d.expr->collectSymbols(syms);
  return syms;
}

// Every dim a known number: whatever sized the inputs, this output's size is
// fixed (a scalar, a sum over a data-dependent dim, index_put's gradient of a
// boolean mask into a tensor of the input's static shape).
bool staticShape(const Value *v) {
  if (!v || !v->type.isTensor() || !v->type.shape.rankKnown)
    return false;
  for (const Dim &d : v->type.shape.dims)
    if (!d.isStatic())
      return false;
  return true;
}

// Ops whose output contents do not depend on their inputs' contents.
bool contentsFree(const Node &n) {
  if (!isDefaultDomain(n.domain))
    return false;
  return llvm::StringSwitch<bool>(n.opType)
      .Cases("Constant", "ConstantOfShape", "EyeLike", "RandomNormal", "RandomUniform", true)
      .Cases("RandomNormalLike", "RandomUniformLike", "Shape", "Size", true)
      .Default(false);
}

// Ops whose output dims are input 0's whatever the others' are (a scatter
// into a base tensor: autograd's gradient of a boolean mask is index_put into
// zeros of the input's shape), or come from a size argument alone.
enum class DimsFrom : uint8_t { Inputs, Input0, Arguments };
DimsFrom dimsFrom(const Node &n) {
  llvm::StringRef op = n.opType;
  if (op.endswith("_"))
    op = op.drop_back();
  if (n.domain == "aten")
    return llvm::StringSwitch<DimsFrom>(op)
        .Cases("index_put", "_index_put_impl", "scatter", "scatter_add", "scatter_reduce", DimsFrom::Input0)
        .Cases("index_add", "index_copy", "index_fill", "masked_scatter", "masked_fill", DimsFrom::Input0)
        .Cases("new_zeros", "new_ones", "new_empty", "new_full", DimsFrom::Arguments)
        .Default(DimsFrom::Inputs);
  if (isDefaultDomain(n.domain) && (op == "ScatterND" || op == "ScatterElements" || op == "Scatter"))
    return DimsFrom::Input0;
  return DimsFrom::Inputs;
}

bool isMetadataQuery(const Node &n) { return isDefaultDomain(n.domain) && (n.opType == "Shape" || n.opType == "Size"); }

}  // namespace

bool DataDependence::isSmallValue(const Value *v) {
  if (!v || !v->type.isTensor())
    return false;
  auto n = v->type.shape.numElements();
  return v->type.shape.rankKnown && n && *n <= 64;
}

bool DataDependence::constantValue(const Value *v, std::vector<int64_t> *ints) {
  for (unsigned depth = 0; v && depth < 8; ++depth) {
    v = defining(v);
    if (v->kind == Value::Kind::Param && v->param) {
      if (!v->param->tensor.data.known)
        return false;
      if (ints)
        *ints = v->param->tensor.data.ints;
      return true;
    }
    if (v->kind != Value::Kind::NodeOutput || !v->producer)
      return false;
    const Node &p = *v->producer;
    if (!isDefaultDomain(p.domain))
      return false;
    if (p.opType == "Constant") {
      if (const Attribute *a = p.attr("value"); a && !a->tensors.empty()) {
        if (!a->tensors[0].data.known)
          return false;
        if (ints)
          *ints = a->tensors[0].data.ints;
        return true;
      }
      if (const Attribute *a = p.attr("value_int")) {
        if (ints)
          *ints = {a->i};
        return true;
      }
      if (const Attribute *a = p.attr("value_ints")) {
        if (ints)
          *ints = a->ints;
        return true;
      }
      return p.attr("value_float") || p.attr("value_floats");
    }
    if ((p.opType == "Identity" || p.opType == "Cast") && !p.inputs.empty()) {
      v = p.inputs[0];
      continue;
    }
    return false;
  }
  return false;
}

llvm::SmallVector<unsigned, 3> DataDependence::shapeOperands(const Node &n) {
  llvm::SmallVector<unsigned, 3> ops;
  if (!isDefaultDomain(n.domain))
    return ops;
  int64_t v = n.opsetVersion;
  llvm::StringRef op = n.opType;
  if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "OneHot" || op == "CenterCropPad")
    ops = {1};
  else if (op == "ConstantOfShape")
    ops = {0};
  else if (op == "Range")
    ops = {0, 1, 2};
  else if (op == "Slice" && v >= 10)
    ops = {1, 2};
  else if (op == "Resize")
    ops = v >= 11 ? llvm::SmallVector<unsigned, 3>{2, 3} : llvm::SmallVector<unsigned, 3>{1};
  else if (op == "Upsample" && v >= 9)
    ops = {1};
  else if (op == "TopK" && v >= 10)
    ops = {1};
  else if (op == "Pad" && v >= 11)
    ops = {1};
  else if (op == "Split" && v >= 13)
    ops = {1};
  else if (op == "MaxUnpool")
    ops = {2};
  else if (op == "Col2Im")
    ops = {1, 2};
  llvm::SmallVector<unsigned, 3> present;
  for (unsigned i : ops)
    if (i < n.inputs.size() && n.inputs[i])
      present.push_back(i);
  return present;
}

DataDependence::DataDependence(const Model &m, AnalysisContext &) : DataDependence(m) {}

DataDependence::DataDependence(const Model &m) {
  if (!m.graph)
    return;
  for (const SymbolInfo &sym : m.symbols)
    if (sym.kind == SymbolInfo::Kind::Unbacked && sym.origin == SymbolInfo::Origin::Unbound) {
      const Node *src = nullptr;
      if (!sym.source.empty())
        for (const auto &n : m.graph->nodes())
          if (n->name == sym.source)
            src = n.get();
      unbacked_[sym.name] = src;
    }
  // A capture that carries unbacked sizes past the op that makes them (torch
  // 2.x's symbolic trace: f32[u0,256] downstream) records a fixed size only
  // where the size is fixed; torch 1.13's trace continues with the upper
  // bound as a plain number, so there a static shape proves nothing.
  if (!unbacked_.empty()) {
    trustStaticShapes_ = false;
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &n : g.nodes())
        for (const Value *out : n->outputs)
          for (const std::string &name : dimSymbols(out))
            if (auto it = unbacked_.find(name); it != unbacked_.end() && it->second && it->second != n.get())
              trustStaticShapes_ = true;  // carried past the op that made it
    });
  }
  visitGraph(*m.graph);
}

// A dim over an unbacked symbol is data-dependent even where no edge leads
// back to the op that produced it (a SymInt passed as a constant argument):
// such an output starts the dependence at that op.
void DataDependence::taintUnbackedDims(const Node &n) {
  for (const Value *out : n.outputs) {
    for (const std::string &name : dimSymbols(out)) {
      auto it = unbacked_.find(name);
      if (it == unbacked_.end())
        continue;
      if (!it->second)
        it->second = &n;
      Facts &f = facts_[out];
      if (f.shape)
        break;
      f.shape = true;
      f.shapeTaint = Taint{it->second, nullptr, it->second == &n ? 0u : 1u};
      bool inputsSized = false;
      for (const Value *in : n.inputs)
        inputsSized |= shapeTaint(in) != nullptr;
      if (!inputsSized && it->second != &n && !(n.op && n.op->kind == OpKind::DataDependentOutput))
        addSite({DataDependentSite::Kind::UnbackedSize, &n, 0, out, false, f.shapeTaint});
      break;
    }
  }
}

const Taint *DataDependence::contentTaint(const Value *v) const {
  auto it = facts_.find(defining(v));
  return it != facts_.end() && it->second.content ? &it->second.contentTaint : nullptr;
}

const Taint *DataDependence::shapeTaint(const Value *v) const {
  auto it = facts_.find(defining(v));
  return it != facts_.end() && it->second.shape ? &it->second.shapeTaint : nullptr;
}

void DataDependence::addSite(DataDependentSite s) {
  if (siteOf_.count(s.node))
    return;  // one site per node: the first reason found
  siteOf_[s.node] = static_cast<unsigned>(sites_.size());
  sites_.push_back(std::move(s));
}

void DataDependence::visitGraph(const Graph &g) {
  const Node *owner = g.parentNode;
  ControlFlowKind ck = owner ? controlFlowKind(*owner) : ControlFlowKind::None;
  // Formal inputs: the main graph's are runtime data. A body's carry data
  // except a Loop's iteration counter, a host-side integer like a Python
  // range() index; their dims follow the owner's operands.
  // Held by value: the facts_[in] inserts below may grow the map and free
  // the bucket a pointer from shapeTaint() points into.
  std::optional<Taint> ownerShape;
  if (owner)
    for (const Value *in : owner->inputs)
      if (const Taint *t = shapeTaint(in); t && (!ownerShape || t->hops < ownerShape->hops))
        ownerShape = *t;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value *in = g.inputs[i];
    Facts f;
    bool counter = ck == ControlFlowKind::Loop && i == 0;
    if (ck == ControlFlowKind::Loop && i == 1) {
      // The incoming condition is the Loop's own operand on entry.
      const Taint *t = owner->inputs.size() > 1 ? contentTaint(owner->inputs[1]) : nullptr;
      if (t) {
        f.content = true;
        f.contentTaint = *t;
      }
    } else if (!counter) {
      f.content = true;
      f.contentTaint.source = in;
    }
    if (ownerShape && !counter) {
      f.shape = true;
      f.shapeTaint = *ownerShape;
    }
    facts_[in] = f;
  }
  for (const auto &n : g.nodes())
    visitNode(*n);
  if (!g.parentGraph)
    for (const Value *out : g.outputs)
      if (const Taint *t = shapeTaint(out); t && out->kind == Value::Kind::NodeOutput && out->producer)
        addSite({DataDependentSite::Kind::GraphOutput, out->producer, 0, out, false, *t});
}

void DataDependence::visitNode(const Node &n) {
  for (const auto &body : n.subgraphs())
    visitGraph(*body);

  auto better = [](const Taint *best, const Taint *t) { return t && (!best || t->hops < best->hops); };
  llvm::SmallVector<unsigned, 3> sizeOps = shapeOperands(n);
  auto isSizeOperand = [&](unsigned i) { return llvm::is_contained(sizeOps, i); };

  // Contents: from the most direct tainted input (bodies' outputs included).
  const Value *contentFrom = nullptr;
  const Taint *content = nullptr;
  if (isMetadataQuery(n)) {
    // Shape/Size read only dims: data-dependent exactly when the dims are.
    if (!n.inputs.empty() && (content = shapeTaint(n.inputs[0])))
      contentFrom = n.inputs[0];
  } else if (!contentsFree(n)) {
    for (const Value *in : n.inputs)
      if (const Taint *t = contentTaint(in); better(content, t))
        content = t, contentFrom = in;
    for (const auto &body : n.subgraphs())
      for (const Value *out : body->outputs)
        if (const Taint *t = contentTaint(out); better(content, t))
          content = t, contentFrom = out;
  }

  // Dims: a data-dependent-output op starts a new dependence; a size operand
  // computed from data starts one here; otherwise dims follow tainted inputs.
  const Taint *dims = nullptr;
  unsigned dimsOperand = 0;
  Taint started;
  bool starts = false;
  // A value read to the host (.item(), tolist, is_nonzero) is a scalar of
  // fixed shape: its contents are data, and a size only where they become one
  // (a size operand, an unbacked symbol in an output's dims). Used as a value
  // (a scale, a loss weight) it leaves later shapes static.
  bool readsValue = n.op && n.op->syncKind == HostSyncKind::ReadsValue;
  if (n.op && n.op->kind == OpKind::DataDependentOutput && !readsValue) {
    started.origin = &n;
    starts = true;
  }
  for (unsigned i : sizeOps) {
    const Value *arg = n.inputs[i];
    const Taint *t = contentTaint(arg);
    bool fromContents = t != nullptr;
    if (!t)
      t = shapeTaint(arg);
    if (!t)
      continue;
    addSite({DataDependentSite::Kind::ShapeArgument, &n, i, arg, fromContents, *t});
    if (!starts) {
      // Keep naming the data-dependent op when the size came from one.
      bool viaDataOp = t->origin && t->origin->op && t->origin->op->kind == OpKind::DataDependentOutput;
      started = viaDataOp ? Taint{t->origin, nullptr, t->hops + 1} : Taint{&n, nullptr, 0};
      starts = true;
    }
  }
  DimsFrom from = dimsFrom(n);
  if (!isMetadataQuery(n) && from != DimsFrom::Arguments) {
    for (unsigned i = 0; i < n.inputs.size() && (from == DimsFrom::Inputs || i == 0); ++i)
      if (const Taint *t = shapeTaint(n.inputs[i]); !isSizeOperand(i) && better(dims, t))
        dims = t, dimsOperand = i;
    for (const auto &body : n.subgraphs())
      for (const Value *out : body->outputs)
        if (const Taint *t = shapeTaint(out); better(dims, t))
          dims = t;
  }
  // A Loop stacks its scan outputs along the trip count: data-dependent when
  // the trip count or the loop condition is.
  bool scanOutputsDynamic = false;
  if (controlFlowKind(n) == ControlFlowKind::Loop) {
    const Value *trip = n.inputs.size() > 0 ? n.inputs[0] : nullptr;
    const Graph *body = n.subgraphs().empty() ? nullptr : n.subgraphs()[0].get();
    const Value *bodyCond = body && !body->outputs.empty() ? body->outputs[0] : nullptr;
    scanOutputsDynamic = contentTaint(trip) || contentTaint(bodyCond);
  }
  unsigned carried = n.inputs.size() >= 2 ? static_cast<unsigned>(n.inputs.size() - 2) : 0;

  // `content` and `dims` point into facts_; the facts_[out] inserts below may
  // grow the map and free them, so the loop works on copies.
  std::optional<Taint> contentCopy = content ? std::optional<Taint>(*content) : std::nullopt;
  std::optional<Taint> dimsCopy = dims ? std::optional<Taint>(*dims) : std::nullopt;
  content = contentCopy ? &*contentCopy : nullptr;
  dims = dimsCopy ? &*dimsCopy : nullptr;

  bool anyDynamicOutput = false;
  for (const Value *out : n.outputs) {
    if (!out)
      continue;
    Facts f;
    if (readsValue) {
      f.content = true;
      f.contentTaint = Taint{&n, nullptr, 0};
    } else if (content) {
      f.content = true;
      bool narrows = isSmallValue(out) && !isSmallValue(contentFrom) && !isMetadataQuery(n) && content->origin == nullptr;
      if (narrows)
        f.contentTaint = Taint{&n, nullptr, 0};
      else
        f.contentTaint = Taint{content->origin, content->source, content->hops + 1};
    }
    if (starts) {
      f.shape = true;
      f.shapeTaint = started;
    } else if (dims && !(trustStaticShapes_ ? staticShape(out) : isScalar(out)) && !readsValue) {
      f.shape = true;
      f.shapeTaint = Taint{dims->origin, dims->source, dims->hops + 1};
    } else if (scanOutputsDynamic && out->resultIndex >= carried) {
      f.shape = true;
      f.shapeTaint = Taint{&n, nullptr, 0};
    }
    // A kernel that reads data-dependent dims is dynamic even where its
    // output's size is fixed again (a sum over them); a scalar is not reported.
    anyDynamicOutput |= (f.shape && !starts) || (dims && !starts && !readsValue && !isScalar(out));
    facts_[out] = f;
  }

  // A kernel (not elementwise or a view) sized by a data-dependent shape:
  // the compiler cannot specialise it.
  bool elementwise = n.op && (n.op->kind == OpKind::Pointwise || n.op->kind == OpKind::Broadcast ||
                              n.op->kind == OpKind::Injective || n.op->kind == OpKind::ShapeOnly);
  if (dims && !elementwise && (anyDynamicOutput || starts))
    addSite({DataDependentSite::Kind::DynamicConsumer, &n, dimsOperand, n.inputs.empty() ? nullptr : n.inputs[dimsOperand],
             false, *dims});
  if (!unbacked_.empty())
    taintUnbackedDims(n);
}

}  // namespace graphlint
