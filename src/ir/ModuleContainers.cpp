// Module containers from the module stacks (ModuleContainers.h).
#include "graphlint/ir/ModuleContainers.h"

#include <set>
#include <string>

namespace graphlint {

void recordModuleContainers(Model &m, const llvm::StringSet<> &called) {
  if (!m.graph)
    return;
  std::set<std::string> containers;  // sorted: the metadata is deterministic
  for (const auto &np : m.graph->nodes()) {
    llvm::StringRef path = np->modulePath;
    for (size_t dot = path.find('.'); dot != llvm::StringRef::npos; dot = path.find('.', dot + 1))
      if (!called.count(path.take_front(dot)))
        containers.insert(path.take_front(dot).str());
  }
  for (const std::string &c : containers)
    m.metadata.emplace_back("module_container", c);
}

}  // namespace graphlint
