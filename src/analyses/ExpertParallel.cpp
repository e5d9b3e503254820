// Expert parallelism on the captured graph (MeshSharding.h): the MoE layers,
// their experts' parameters (sharded over ep ranks: parameters, gradients and
// optimizer state / ep) and the tokens their router dispatches. Which expert
// a token goes to is data: the all-to-all is sized by an even share of the
// tokens times the capacity factor (GShard, Lepikhin et al. 2020; Switch
// Transformer, Fedus et al. 2021), stated as an assumption.
#include "graphlint/analyses/MeshSharding.h"

#include <fmt/format.h>
#include <llvm/ADT/StringExtras.h>

#include <map>
#include <set>

namespace graphlint {

void MeshSharding::findExperts(const Graph &g, const Setup &s) {
  struct Found {
    std::set<std::string> indices;
    double elements = 0;
    unsigned leading = 0;  // a grouped experts' parameter [E, ...]: E
  };
  std::map<std::string, Found> layers;
  for (const auto &p : g.params()) {
    const Value *v = p->value;
    if (!v || p->buffer)
      continue;
    llvm::StringRef name(v->name);
    size_t at = name.find(".experts.");
    if (at == llvm::StringRef::npos)
      continue;
    expertParam_[v] = true;
    Found &f = layers[name.substr(0, at).str()];
    f.elements += elements(v);
    llvm::StringRef rest = name.substr(at + 9);
    llvm::StringRef index = rest.split('.').first;
    unsigned i = 0;
    if (rest.contains('.') && !index.getAsInteger(10, i))
      f.indices.insert(index.str());
    else if (v->type.shape.rankKnown && v->type.shape.dims.size() == 3 && v->type.shape.dims[0].isStatic())
      f.leading = static_cast<unsigned>(v->type.shape.dims[0].value);
  }
  for (auto &[module, f] : layers) {
    MoeLayer l;
    l.module = module;
    l.experts = f.indices.empty() ? f.leading : static_cast<unsigned>(f.indices.size());
    l.expertElements = f.elements;
    llvm::StringRef parent(module);
    for (const auto &np : g.nodes()) {
      const Node &n = *np;
      if (n.backwardPhase || !(n.modulePath == module || llvm::StringRef(n.modulePath).startswith(module + ".")))
        continue;
      if (!l.input)
        for (const Value *in : n.inputs)
          if (in && batchDerived_.lookup(in) && in->type.shape.rankKnown && in->type.shape.dims.size() >= 2) {
            l.input = in;
            break;
          }
      // The router's top-k: its output's last dim is k.
      std::string a = n.atenName();
      if (!l.topKFromGraph && (a == "topk" || (n.domain.empty() && n.opType == "TopK")) && !n.outputs.empty() &&
          n.outputs[0] && n.outputs[0]->type.shape.rankKnown && !n.outputs[0]->type.shape.dims.empty() &&
          n.outputs[0]->type.shape.dims.back().isStatic()) {
        l.topK = static_cast<unsigned>(n.outputs[0]->type.shape.dims.back().value);
        l.topKFromGraph = true;
      }
    }
    if (l.input && l.input->type.shape.dims.back().isStatic()) {
      l.hidden = static_cast<double>(l.input->type.shape.dims.back().value);
      l.tokens = l.hidden > 0 ? elements(l.input) / l.hidden : 0;
    }
    moe_.push_back(l);
  }
  if (!moe_.empty() && ep_ > 1) {
    assumptions_.push_back(fmt::format(
        "tokens per expert: an even share of the routed tokens (tokens x top-k / experts) x capacity factor {}; "
        "routing is data: a skewed router sends more",
        s.capacityFactor));
    for (const MoeLayer &l : moe_)
      if (!l.topKFromGraph) {
        assumptions_.push_back(fmt::format("{}: no top-k node found, top-k taken as 1", l.module));
        break;
      }
  }
}

}  // namespace graphlint
