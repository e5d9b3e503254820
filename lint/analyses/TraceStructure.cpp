// The model structure the memory trace reads (MemoryTrace.h): module scopes
// (a module's forward holds its arguments until it returns), the repeated
// layers --recompute layer checkpoints, and exporter-decomposed kernels
// (GELU, SiLU) that PyTorch runs as one.
#include "MemoryTraceBuilder.h"

#include <llvm/ADT/StringSet.h>

#include <algorithm>

namespace graphlint {

llvm::StringRef checkpointLayer(const Node &n) {
  llvm::StringRef path = n.modulePath;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    llvm::StringRef part = path.slice(start, dot);
    llvm::StringRef digits = part.substr(part.rfind('_') == llvm::StringRef::npos ? 0 : part.rfind('_') + 1);
    bool index = !digits.empty() && digits.find_first_not_of("0123456789") == llvm::StringRef::npos;
    if (index)
      return path.slice(0, dot);
    if (dot == llvm::StringRef::npos)
      break;
    start = dot + 1;
  }
  return {};
}

}  // namespace graphlint

namespace graphlint::memory {

void PlanBuilder::holdModuleArguments(llvm::DenseMap<const Value *, int64_t> &lastUse) {
  const auto &nodes = g_.nodes();
  // A module's forward holds its arguments (and its caller's variable holds
  // them too) until it returns: a value read inside a scope it was not
  // produced in lives until that scope's last node. ONNX exporters name nodes
  // after their scope ("/blocks.0/mlp/fc/MatMul"); FX nodes carry the module
  // path ("blocks.0.mlp.fc"), where one scope instance is a run of
  // consecutive nodes (a module called twice, torchvision's shared ReLU, is
  // two instances). Scopes are numbered by (enclosing scope, name component):
  // a name with 100,000 components costs time linear in its length, where
  // hashing every prefix of it would be quadratic. A node's chain lists its
  // scopes outermost first ("/a/b/MatMul": /a, /a/b).
  llvm::DenseMap<std::pair<unsigned, llvm::StringRef>, unsigned> scopeIds;
  std::vector<int64_t> scopeEnd(1, 0);  // by scope id; 0 is the root
  // FX: a path prefix whose module never ran a forward (nn.ModuleList, the
  // exporter's `module_containers`) is a scope that holds nothing: a GPT's
  // embeddings are not held across all of `blocks`, only across `blocks.0`.
  llvm::StringSet<> containers;
  for (const auto &kv : m_.metadata)
    if (kv.first == "module_container")
      containers.insert(kv.second);
  std::vector<bool> holds(1, true);  // by scope id
  llvm::SmallVector<llvm::StringRef, 8> prevParts;
  std::vector<unsigned> prevChain;
  auto scopesOf = [&](const Node &n, std::vector<unsigned> &out) {
    llvm::StringRef name = n.name;
    if (name.startswith("/")) {
      unsigned parent = 0;
      for (size_t start = 1, slash = name.find('/', 1); slash != llvm::StringRef::npos;
           start = slash + 1, slash = name.find('/', slash + 1)) {
        auto [it, inserted] = scopeIds.try_emplace({parent, name.slice(start, slash)}, scopeEnd.size());
        if (inserted) {
          scopeEnd.push_back(0);
          holds.push_back(true);
        }
        parent = it->second;
        out.push_back(parent);
      }
      return;
    }
    llvm::SmallVector<llvm::StringRef, 8> parts;
    // Backward nodes (a checkpoint's recompute among them) run in autograd's
    // engine, not inside module calls.
    if (!n.modulePath.empty() && !n.backwardPhase)
      llvm::StringRef(n.modulePath).split(parts, '.');
    bool same = true;
    for (size_t d = 0; d < parts.size(); ++d) {
      same = same && d < prevParts.size() && prevParts[d] == parts[d] && d < prevChain.size();
      if (same) {
        out.push_back(prevChain[d]);
      } else {
        out.push_back(static_cast<unsigned>(scopeEnd.size()));
        scopeEnd.push_back(0);
        size_t len = parts[d].end() - parts[0].begin();
        holds.push_back(containers.empty() || !containers.count(llvm::StringRef(n.modulePath).substr(0, len)));
      }
    }
    prevParts = parts;
    prevChain = out;
  };
  std::vector<std::vector<unsigned>> chains(nodes.size());
  for (const auto &np : nodes) {
    std::vector<unsigned> &chain = chains[np->index < nodes.size() ? np->index : 0];
    scopesOf(*np, chain);
    for (unsigned sc : chain)
      scopeEnd[sc] = static_cast<int64_t>(np->index);
  }
  // FX `held`: a Python frame bound the value until after the named node.
  llvm::StringMap<int64_t> indexByName;
  for (const auto &np : nodes)
    for (const auto &kv : np->metadata) {
      if (!llvm::StringRef(kv.first).startswith("held."))
        continue;
      if (indexByName.empty())
        for (const auto &other : nodes)
          indexByName.try_emplace(other->name, static_cast<int64_t>(other->index));
      unsigned j = 0;
      auto it = indexByName.find(kv.second);
      if (llvm::StringRef(kv.first).drop_front(5).getAsInteger(10, j) || j >= np->outputs.size() ||
          !np->outputs[j] || it == indexByName.end())
        continue;
      int64_t &lu = lastUse[np->outputs[j]];
      lu = std::max(lu, it->second);
    }
  auto chainOf = [&](const Node &n) -> const std::vector<unsigned> * {
    return n.graph == &g_ && n.index < chains.size() ? &chains[n.index] : nullptr;
  };
  for (const auto &np : nodes) {
    const Node &user = *np;
    const std::vector<unsigned> *scopes = chainOf(user);
    if (!scopes || scopes->empty())
      continue;
    for (const Value *v : user.inputs) {
      if (!v || v->kind != Value::Kind::NodeOutput || !v->producer)
        continue;
      const std::vector<unsigned> *from = chainOf(*v->producer);
      int64_t &lu = lastUse[v];
      // The producer is inside scope d of the user when their chains agree there.
      for (size_t d = 0; d < scopes->size(); ++d)
        if ((!from || d >= from->size() || (*from)[d] != (*scopes)[d]) && holds[(*scopes)[d]])
          lu = std::max(lu, scopeEnd[(*scopes)[d]]);
    }
  }
}

void PlanBuilder::findComposites() {
  auto soleUser = [](const Value *v) -> const Node * {
    return v && v->uses.size() == 1 && !v->isGraphOutput() ? v->uses[0].user : nullptr;
  };
  auto isConst = [](const Value *v) {
    return v && (v->kind == Value::Kind::Param || (v->producer && v->producer->opType == "Constant"));
  };
  auto other = [](const Node *n, const Value *v) -> const Value * {
    return n->inputs.size() == 2 ? (n->inputs[0] == v ? n->inputs[1] : n->inputs[0]) : nullptr;
  };
  for (const auto &np : g_.nodes()) {
    // SiLU: x * Sigmoid(x).
    const Node &sig = *np;
    if (sig.opType == "Sigmoid" && !sig.inputs.empty() && sig.inputs[0]) {
      const Node *mul = soleUser(sig.outputs.empty() ? nullptr : sig.outputs[0]);
      if (mul && mul->opType == "Mul" && other(mul, sig.outputs[0]) == sig.inputs[0]) {
        compositeInner_.insert(&sig);
        compositeInput_[mul] = sig.inputs[0];
        inplaceActivation_.insert(mul);
      }
    }
  }
  for (const auto &np : g_.nodes()) {
    const Node &erf = *np;
    if (erf.opType != "Erf" || erf.inputs.empty() || !erf.inputs[0] || !erf.inputs[0]->producer)
      continue;
    const Node *div = erf.inputs[0]->producer;
    if ((div->opType != "Div" && div->opType != "Mul") || div->inputs.size() != 2 || !isConst(div->inputs[1]))
      continue;
    const Value *x = div->inputs[0];
    const Node *add = soleUser(erf.outputs[0]);
    if (!add || add->opType != "Add" || !isConst(other(add, erf.outputs[0])))
      continue;
    const Node *mul = soleUser(add->outputs[0]);
    if (!mul || mul->opType != "Mul" || other(mul, add->outputs[0]) != x)
      continue;
    const Node *last = mul;
    if (const Node *half = soleUser(mul->outputs[0]);
        half && half->opType == "Mul" && isConst(other(half, mul->outputs[0])))
      last = half;
    for (const Node *inner : {div, &erf, add, mul})
      if (inner != last)
        compositeInner_.insert(inner);
    compositeInput_[last] = x;
  }
}

}  // namespace graphlint::memory
