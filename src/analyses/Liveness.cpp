// Liveness over one graph's schedule (include/graphlint/analyses/Liveness.h).
#include "graphlint/analyses/Liveness.h"
#include "graphlint/ir/ModuleContainers.h"
#include "graphlint/ir/ValueFacts.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>

#include <algorithm>
#include <vector>

namespace graphlint {

Liveness::Liveness(const Graph &g, llvm::function_ref<bool(const Node &)> runs, const Model *model, bool pythonHolds) {
  for (const auto &np : g.nodes()) {
    if (runs && !runs(*np))
      continue;
    auto at = static_cast<int64_t>(np->index);
    auto note = [&](const Node &n) {
      for (const Value *in : n.inputs)
        if (const Value *v = captureOrigin(in)) {
          auto [it, inserted] = lastRead_.try_emplace(v, at);
          if (!inserted)
            it->second = std::max(it->second, at);
        }
    };
    note(*np);
    for (const auto &sub : np->subgraphs())
      forEachGraph(*sub, [&](const Graph &gr) {
        for (const auto &n : gr.nodes())
          note(*n);
      });
  }
  if (!pythonHolds)
    return;
  holdModuleArguments(g, model);
  holdPythonLocals(g);
}

// FX `held` (Node::metadata "held.J" -> node name): a Python frame bound
// output J until after the named node, so it lives until then.
void Liveness::holdPythonLocals(const Graph &g) {
  llvm::StringMap<int64_t> indexByName;
  for (const auto &np : g.nodes())
    for (const auto &kv : np->metadata) {
      if (!llvm::StringRef(kv.first).startswith("held."))
        continue;
      if (indexByName.empty())
        for (const auto &other : g.nodes())
          indexByName.try_emplace(other->name, static_cast<int64_t>(other->index));
      unsigned j = 0;
      auto it = indexByName.find(kv.second);
      if (llvm::StringRef(kv.first).drop_front(5).getAsInteger(10, j) || j >= np->outputs.size() ||
          !np->outputs[j] || it == indexByName.end())
        continue;
      int64_t &lu = lastRead_[np->outputs[j]];
      lu = std::max(lu, it->second);
    }
}

void Liveness::holdModuleArguments(const Graph &g, const Model *model) {
  const auto &nodes = g.nodes();
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
  // A trie, walked beside each node's path: looking every prefix up as a
  // string costs O(length^2) for a deep path (round 2, gap 16).
  ModulePathTrie containers;
  std::vector<bool> isContainer;
  if (model)
    for (const auto &kv : model->metadata)
      if (kv.first == "module_container") {
        unsigned node = containers.insert(kv.second);
        isContainer.resize(containers.size(), false);
        isContainer[node] = true;
      }
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
    std::optional<unsigned> container = ModulePathTrie::kRoot;  // this prefix in `containers`
    for (size_t d = 0; d < parts.size(); ++d) {
      if (container)
        container = containers.child(*container, parts[d]);
      same = same && d < prevParts.size() && prevParts[d] == parts[d] && d < prevChain.size();
      if (same) {
        out.push_back(prevChain[d]);
      } else {
        out.push_back(static_cast<unsigned>(scopeEnd.size()));
        scopeEnd.push_back(0);
        holds.push_back(!container || !isContainer[*container]);
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
  auto chainOf = [&](const Node &n) -> const std::vector<unsigned> * {
    return n.graph == &g && n.index < chains.size() ? &chains[n.index] : nullptr;
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
      int64_t &lu = lastRead_[v];
      // The producer is inside scope d of the user when their chains agree there.
      for (size_t d = 0; d < scopes->size(); ++d)
        if ((!from || d >= from->size() || (*from)[d] != (*scopes)[d]) && holds[(*scopes)[d]])
          lu = std::max(lu, scopeEnd[(*scopes)[d]]);
    }
  }
  // The output of a module call the exporter folded whole (Param::heldByCaller)
  // has no producer: eager bound it to a Python local of the module around all
  // its readers (a position embedding, a rotary table, passed down to each
  // reader), so it lives until that module returns; the outermost forward's
  // until the graph ends.
  llvm::DenseMap<const Value *, std::vector<unsigned>> around;  // the readers' common scopes
  for (const auto &np : nodes) {
    const std::vector<unsigned> *scopes = chainOf(*np);
    if (!scopes)
      continue;
    for (const Value *v : np->inputs) {
      if (!v || v->kind != Value::Kind::Param || !v->param || !v->param->heldByCaller)
        continue;
      auto [it, first] = around.try_emplace(v, *scopes);
      if (first)
        continue;
      std::vector<unsigned> &common = it->second;
      size_t d = 0;
      while (d < common.size() && d < scopes->size() && common[d] == (*scopes)[d])
        ++d;
      common.resize(d);
    }
  }
  int64_t last = nodes.empty() ? 0 : static_cast<int64_t>(nodes.size()) - 1;
  for (const auto &[v, common] : around) {
    int64_t end = last;
    for (auto sc = common.rbegin(); sc != common.rend(); ++sc)
      if (holds[*sc]) {
        end = scopeEnd[*sc];
        break;
      }
    int64_t &lu = lastRead_[v];
    lu = std::max(lu, end);
  }
}

}  // namespace graphlint
