// Module containers from the module stacks (ModuleContainers.h).
#include "graphlint/ir/ModuleContainers.h"

#include <set>
#include <string>

namespace graphlint {

unsigned ModulePathTrie::insert(llvm::StringRef path) {
  unsigned node = kRoot;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    size_t end = dot == llvm::StringRef::npos ? path.size() : dot;
    auto [it, fresh] = child_.try_emplace({node, path.slice(start, end)}, static_cast<unsigned>(parent_.size()));
    if (fresh) {
      parent_.push_back(node);
      depth_.push_back(depth_[node] + 1);
      paths_.push_back(path.take_front(end));
    }
    node = it->second;
    if (dot == llvm::StringRef::npos)
      break;
    start = dot + 1;
  }
  return node;
}

std::optional<unsigned> ModulePathTrie::find(llvm::StringRef path) const {
  unsigned node = kRoot;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    size_t end = dot == llvm::StringRef::npos ? path.size() : dot;
    auto it = child_.find({node, path.slice(start, end)});
    if (it == child_.end())
      return std::nullopt;
    node = it->second;
    if (dot == llvm::StringRef::npos)
      break;
    start = dot + 1;
  }
  return node;
}

void recordModuleContainers(Model &m, const llvm::StringSet<> &called) {
  if (!m.graph)
    return;
  ModulePathTrie trie;
  std::vector<bool> isPrefix;  // a proper prefix of some node's module path
  for (const auto &np : m.graph->nodes()) {
    if (np->modulePath.empty())
      continue;
    unsigned node = trie.insert(np->modulePath);
    isPrefix.resize(trie.size(), false);
    for (unsigned p = trie.parent(node); p != ModulePathTrie::kRoot && !isPrefix[p]; p = trie.parent(p))
      isPrefix[p] = true;  // stops at a marked one: each node is marked once
  }
  std::vector<bool> ran(trie.size(), false);
  for (const auto &c : called)
    if (std::optional<unsigned> node = trie.find(c.getKey()))
      ran[*node] = true;
  std::set<std::string> containers;  // sorted: the metadata is deterministic
  for (unsigned node = 1; node < trie.size(); ++node)
    if (isPrefix[node] && !ran[node] && trie.depth(node) <= kMaxContainerDepth)
      containers.insert(trie.path(node).str());
  for (const std::string &c : containers)
    m.metadata.emplace_back("module_container", c);
}

}  // namespace graphlint
