// Module containers: a module path prefix (nn.ModuleList `blocks`,
// nn.ModuleDict) whose module never ran a forward of its own, so it holds no
// arguments the way a module call does (graphlint/analyses/Liveness.h). The FX
// exporter records them (`module_containers`); the .pt2 and dynamo ONNX
// importers derive them from the module stacks their nodes record.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/StringSet.h>

#include <optional>
#include <vector>

namespace graphlint {

/// Dotted module paths ("blocks.0.attn") and all their prefixes, held as a
/// trie of components: adding or finding a path costs O(its length), where a
/// set of prefix strings costs O(length^2) (a 50,000-component path in a
/// 15 KB file took 4.9 GB that way). The paths' bytes must outlive the trie.
class ModulePathTrie {
public:
  static constexpr unsigned kRoot = 0;
  ModulePathTrie() : parent_{kRoot}, depth_{0} {}
  /// Adds `path` (and so every prefix of it); returns its node.
  unsigned insert(llvm::StringRef path);
  /// The node of `path`, if `path` or a longer path was inserted.
  std::optional<unsigned> find(llvm::StringRef path) const;
  /// The node one `component` below `node`, if any path continues that way.
  std::optional<unsigned> child(unsigned node, llvm::StringRef component) const {
    auto it = child_.find({node, component});
    return it == child_.end() ? std::nullopt : std::optional<unsigned>(it->second);
  }
  unsigned parent(unsigned node) const { return parent_[node]; }
  unsigned depth(unsigned node) const { return depth_[node]; }
  size_t size() const { return parent_.size(); }
  /// The dotted path of `node` (its bytes are what was inserted).
  llvm::StringRef path(unsigned node) const { return paths_[node]; }

private:
  llvm::DenseMap<std::pair<unsigned, llvm::StringRef>, unsigned> child_;
  std::vector<unsigned> parent_;
  std::vector<unsigned> depth_;
  std::vector<llvm::StringRef> paths_{llvm::StringRef()};
};

/// How many components of a module path name containers: no model nests
/// modules this deep, and each container is a string of up to its path's
/// length, so the metadata stays O(kMaxContainerDepth x input).
constexpr unsigned kMaxContainerDepth = 256;

/// Adds a Model::metadata entry ("module_container", PATH) for every proper
/// prefix of a node's module path that is not in `called` (the modules whose
/// forward ran, as the export's module stacks list them), down to
/// kMaxContainerDepth components.
void recordModuleContainers(Model &m, const llvm::StringSet<> &called);

}  // namespace graphlint
