// Human-readable dump of the IR, one line per node, for `graphlint inspect`
// and debugging: `%out: f32[1,64] = Relu(%in) {attrs}  # module @ file:line`.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/Support/raw_ostream.h>

namespace graphlint {

void printGraph(const Graph &g, llvm::raw_ostream &os, unsigned indent = 0);
void printModel(const Model &m, llvm::raw_ostream &os);

}  // namespace graphlint
