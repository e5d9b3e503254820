// Module containers: a module path prefix (nn.ModuleList `blocks`,
// nn.ModuleDict) whose module never ran a forward of its own, so it holds no
// arguments the way a module call does (graphlint/analyses/Liveness.h). The FX
// exporter records them (`module_containers`); the .pt2 and dynamo ONNX
// importers derive them from the module stacks their nodes record.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/StringSet.h>

namespace graphlint {

/// Adds a Model::metadata entry ("module_container", PATH) for every proper
/// prefix of a node's module path that is not in `called` (the modules whose
/// forward ran, as the export's module stacks list them).
void recordModuleContainers(Model &m, const llvm::StringSet<> &called);

}  // namespace graphlint
