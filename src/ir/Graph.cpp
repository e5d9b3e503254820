#include "graphlint/ir/Graph.h"
#include "graphlint/ir/CheckedMath.h"
#include "graphlint/ir/Display.h"

#include <algorithm>

#include <llvm/ADT/STLExtras.h>

#include <fmt/format.h>

namespace graphlint {

std::string Device::str() const {
  switch (kind) {
  case Kind::Unknown: return "?";
  case Kind::CPU: return "cpu";
  case Kind::CUDA: return index >= 0 ? fmt::format("cuda:{}", index) : "cuda";
  case Kind::Meta: return "meta";
  case Kind::Other: return "other";
  }
  return "?";
}

std::optional<int64_t> TensorLiteral::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  return n;
}

std::string Attribute::str() const {
  auto join = [](const auto &xs) {
    std::string s;
    for (size_t i = 0; i < xs.size(); ++i)
      s += (i ? "," : "") + fmt::format("{}", xs[i]);
    return s;
  };
  switch (kind) {
  case AttrKind::Float: return fmt::format("{}", f);
  case AttrKind::Int: return std::to_string(i);
  case AttrKind::String: return fmt::format("\"{}\"", s);
  case AttrKind::Floats: return "[" + join(floats) + "]";
  case AttrKind::Ints: return "[" + join(ints) + "]";
  case AttrKind::Strings: return fmt::format("[{} strings]", strings.size());
  case AttrKind::Tensor:
  case AttrKind::SparseTensor:
    if (!tensors.empty()) {
      std::string d;
      for (size_t k = 0; k < tensors[0].dims.size(); ++k)
        d += (k ? "," : "") + std::to_string(tensors[0].dims[k]);
      return fmt::format("tensor {}[{}]", dtypeShortName(tensors[0].dtype), d);
    }
    return "tensor";
  case AttrKind::Graph: return "graph";
  case AttrKind::Graphs: return fmt::format("[{} graphs]", graphs.size());
  case AttrKind::Tensors: return fmt::format("[{} tensors]", tensors.size());
  default: break;
  }
  if (!refAttrName.empty())
    return "@" + refAttrName;
  return "<attr>";
}

const Attribute *Node::attr(llvm::StringRef n) const {
  for (const Attribute &a : attributes)
    if (a.name == n)
      return &a;
  return nullptr;
}

std::optional<int64_t> Node::attrInt(llvm::StringRef n) const {
  const Attribute *a = attr(n);
  if (a && a->kind == AttrKind::Int)
    return a->i;
  return std::nullopt;
}

const std::string *Node::metadataValue(llvm::StringRef key) const {
  for (const auto &kv : metadata)
    if (kv.first == key)
      return &kv.second;
  return nullptr;
}

std::string Node::qualifiedOp() const {
  if (domain.empty() || domain == "ai.onnx")
    return opType;
  return domain + "::" + opType;
}

std::string Node::atenName() const {
  llvm::StringRef op = opType;
  if (domain == "aten")
    return op.split('.').first.str();
  if (op.consume_front("aten::") || op.consume_front("aten."))
    return op.split('.').first.str();
  return {};
}

Value *Graph::createValue(std::string n, Value::Kind kind) {
  values_.push_back(std::make_unique<Value>());
  Value *v = values_.back().get();
  v->name = std::move(n);
  v->kind = kind;
  v->graph = this;
  if (!v->name.empty())
    byName_.try_emplace(v->name, v);
  return v;
}

Node *Graph::createNode() {
  nodes_.push_back(std::make_unique<Node>());
  Node *n = nodes_.back().get();
  n->graph = this;
  n->index = static_cast<unsigned>(nodes_.size() - 1);
  return n;
}

Param *Graph::createParam() {
  params_.push_back(std::make_unique<Param>());
  return params_.back().get();
}

Value *Graph::findLocal(llvm::StringRef n) const {
  auto it = byName_.find(n);
  return it == byName_.end() ? nullptr : it->second;
}

void Graph::renameValue(Value &v, std::string name) {
  auto it = byName_.find(v.name);
  if (it != byName_.end() && it->second == &v)
    byName_.erase(it);
  v.name = std::move(name);
  if (!v.name.empty())
    byName_.try_emplace(v.name, &v);
}

void Graph::replaceInput(Node &user, unsigned operand, Value *to) {
  Value *from = user.inputs[operand];
  if (from)
    llvm::erase_if(from->uses, [&](const Use &u) { return u.user == &user && u.operand == operand; });
  user.inputs[operand] = to;
  to->uses.push_back({&user, operand});
}

void Graph::placeNodes(const Placement &before, const Placement &after) {
  llvm::DenseMap<const Node *, std::unique_ptr<Node>> placed;
  for (const auto *m : {&before, &after})
    for (const auto &[at, list] : *m)
      for (Node *c : list)
        placed.try_emplace(c, nullptr);
  for (auto &np : nodes_)
    if (auto it = placed.find(np.get()); it != placed.end())
      it->second = std::move(np);
  std::vector<std::unique_ptr<Node>> order;
  order.reserve(nodes_.size());
  for (auto &np : nodes_) {
    if (!np)
      continue;
    const Node *self = np.get();
    if (auto it = before.find(self); it != before.end())
      for (Node *c : it->second)
        order.push_back(std::move(placed[c]));
    order.push_back(std::move(np));
    if (auto it = after.find(self); it != after.end())
      for (Node *c : it->second)
        order.push_back(std::move(placed[c]));
  }
  nodes_ = std::move(order);
  renumber();
}

unsigned Graph::depth() const {
  unsigned d = 0;
  for (const Graph *g = parentGraph; g; g = g->parentGraph)
    ++d;
  return d;
}

std::string Graph::path() const {
  if (!parentGraph)
    return name.empty() ? "main" : name;  // "main", or "function:NAME" for function bodies
  // Exporter names such as "/If" already start with the separator.
  std::string owner = parentNode ? nodeLabel(*parentNode) : "?";
  llvm::StringRef o(owner);
  return fmt::format("{}/{}:{}", parentGraph->path(), o.startswith("/") ? o.drop_front().str() : owner, name);
}

void Graph::renumber() {
  for (size_t i = 0; i < nodes_.size(); ++i)
    nodes_[i]->index = static_cast<unsigned>(i);
}

bool Graph::hasBackward() const {
  return std::any_of(nodes_.begin(), nodes_.end(), [](const std::unique_ptr<Node> &n) { return n->backwardPhase; });
}

int64_t Model::opsetVersion(llvm::StringRef domain) const {
  auto isDefault = [](llvm::StringRef d) { return d.empty() || d == "ai.onnx"; };
  for (const OpsetImport &o : opsets)
    if (o.domain == domain || (isDefault(domain) && isDefault(o.domain)))
      return o.version;
  return 0;
}

const Function *Model::findFunction(llvm::StringRef domain, llvm::StringRef name) const {
  for (const auto &f : functions)
    if (f->domain == domain && f->name == name)
      return f.get();
  return nullptr;
}

Value::MemoryFormat memoryFormatOf(llvm::ArrayRef<Dim> dims, llvm::ArrayRef<Dim> strides) {
  if (dims.size() != 4 || strides.size() != 4)
    return Value::MemoryFormat::Unknown;
  int64_t c = dims[1].value, h = dims[2].value, w = dims[3].value;
  for (unsigned i = 1; i < 4; ++i)
    if (!dims[i].isStatic() || !strides[i].isStatic())
      return Value::MemoryFormat::Unknown;
  auto matches = [&](int64_t sc, int64_t sh, int64_t sw) {
    return (c == 1 || strides[1].value == sc) && (h == 1 || strides[2].value == sh) &&
           (w == 1 || strides[3].value == sw);
  };
  // A model file decides the dims: a product past int64 describes no real
  // layout, so the format stays unknown instead of wrapping.
  CheckedInt hw = checkedMul(h, w), wc = checkedMul(w, c);
  if (!hw || !wc)
    return Value::MemoryFormat::Unknown;
  bool nchw = matches(*hw, w, 1), nhwc = matches(1, *wc, c);
  if (nchw == nhwc)
    return Value::MemoryFormat::Unknown;
  return nchw ? Value::MemoryFormat::Contiguous : Value::MemoryFormat::ChannelsLast;
}

Value::MemoryFormat contiguousMemoryFormat(llvm::ArrayRef<Dim> dims) {
  if (dims.size() != 4)
    return Value::MemoryFormat::Unknown;
  // Only dims 1..3 decide (memoryFormatOf): the batch may stay symbolic.
  int64_t h = dims[2].isStatic() ? dims[2].value : 0, w = dims[3].isStatic() ? dims[3].value : 0;
  int64_t c = dims[1].isStatic() ? dims[1].value : 0;
  CheckedInt hw = checkedMul(h, w), chw = hw ? checkedMul(c, *hw) : std::nullopt;
  if (!chw)
    return Value::MemoryFormat::Unknown;
  Dim strides[4] = {Dim::fixed(*chw), Dim::fixed(*hw), Dim::fixed(w), Dim::fixed(1)};
  return memoryFormatOf(dims, strides);
}

}  // namespace graphlint
