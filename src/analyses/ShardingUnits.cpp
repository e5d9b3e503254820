#include "graphlint/analyses/ShardingUnits.h"

#include "graphlint/analyses/MemoryPlan.h"

#include <algorithm>
#include <limits>
#include <map>

namespace graphlint {

llvm::StringRef indexedModule(llvm::StringRef name) {
  size_t at = 0;
  while (at < name.size()) {
    size_t dot = name.find('.', at);
    llvm::StringRef part = name.slice(at, dot == llvm::StringRef::npos ? name.size() : dot);
    if (!part.empty() && llvm::all_of(part, [](char c) { return c >= '0' && c <= '9'; }) && at > 0)
      return name.take_front(dot == llvm::StringRef::npos ? name.size() : dot);
    if (dot == llvm::StringRef::npos)
      break;
    at = dot + 1;
  }
  return {};
}

ShardingUnits shardingUnits(const Graph &g, llvm::ArrayRef<const Value *> trainable,
                            llvm::function_ref<double(const Value *)> bytes, double cutBytes) {
  return shardingUnits(g, checkpointLayers(g), trainable, bytes, cutBytes);
}

ShardingUnits shardingUnits(const Graph &g, llvm::ArrayRef<llvm::StringRef> layers,
                            llvm::ArrayRef<const Value *> trainable, llvm::function_ref<double(const Value *)> bytes,
                            double cutBytes) {
  ShardingUnits u;
  bool blocks = false;
  // The unit of each parameter and where the forward first enters that unit.
  std::map<std::string, size_t> firstRead;  // unit name -> first forward node index
  std::vector<std::string> unitName(trainable.size());
  std::vector<size_t> firstReader;
  for (size_t i = 0; i < trainable.size(); ++i) {
    const Value *p = trainable[i];
    const Node *reader = nullptr;
    for (const Use &use : p->uses)
      if (!use.user->backwardPhase && use.user->graph == &g && (!reader || use.user->index < reader->index))
        reader = use.user;
    // The parameter's own indexed module, else the repeated layer reading it.
    llvm::StringRef layer = indexedModule(p->name);
    if (layer.empty() && reader && reader->index < layers.size())
      layer = layers[reader->index];
    blocks |= !layer.empty();
    unitName[i] = layer.empty() ? "(root)" : layer.str();
    size_t at = reader ? reader->index : std::numeric_limits<size_t>::max();
    firstReader.push_back(at);
    auto [it, fresh] = firstRead.emplace(unitName[i], at);
    if (!fresh)
      it->second = std::min(it->second, at);
  }
  if (!blocks) {
    // No repeated block: a size-based wrap over the parameters in the order
    // the forward first reads them.
    std::vector<size_t> byUse(trainable.size());
    for (size_t i = 0; i < byUse.size(); ++i)
      byUse[i] = i;
    std::stable_sort(byUse.begin(), byUse.end(), [&](size_t a, size_t b) { return firstReader[a] < firstReader[b]; });
    double open = 0;
    for (size_t i : byUse) {
      if (u.params.empty() || open >= cutBytes) {
        u.params.emplace_back();
        u.names.push_back("unit " + std::to_string(u.names.size()));
        open = 0;
      }
      u.params.back().push_back(trainable[i]);
      u.unitOf[trainable[i]] = static_cast<unsigned>(u.params.size() - 1);
      open += bytes(trainable[i]);
    }
    return u;
  }
  u.perBlock = true;
  std::vector<std::pair<size_t, std::string>> order;
  for (const auto &[name, at] : firstRead)
    order.push_back({at, name});
  std::sort(order.begin(), order.end());
  std::map<std::string, unsigned> index;
  for (const auto &[at, name] : order) {
    index[name] = static_cast<unsigned>(u.names.size());
    if (name == "(root)")
      u.root = static_cast<int>(u.names.size());
    u.names.push_back(name);
  }
  u.params.resize(u.names.size());
  for (size_t i = 0; i < trainable.size(); ++i) {
    unsigned k = index[unitName[i]];
    u.params[k].push_back(trainable[i]);
    u.unitOf[trainable[i]] = k;
  }
  return u;
}

}  // namespace graphlint
