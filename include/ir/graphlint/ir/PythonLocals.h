// Python locals from a torch.export graph's stack traces: the `held` facts
// graphlint-export records by watching the model's frames return, derived
// from what a .pt2 archive, or the ONNX file torch.onnx's dynamo exporter
// writes from the same graph, keeps of them.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/StackTrace.h"

#include <string>
#include <vector>

namespace graphlint {

/// Where one node ran: its stack_trace's frames and its nn_module_stack's
/// module paths (the dynamo exporter's name_scopes), both outermost first.
struct CallSite {
  Node *node = nullptr;
  std::vector<TraceFrame> frames;
  std::vector<std::string> modules;
};

/// Eager keeps a tensor a Python local binds until the frame returns or
/// rebinds the name: `inputs_embeds = self.wte(ids)` lives to the end of the
/// model's forward, past its last read in the graph. torch.export records one
/// frame per module forward (the trace's frames and nn_module_stack's entries
/// pair up); a statement that assigns names binds the values it produced that
/// are read after it. Each such value is held (Node::metadata "held.J", as the
/// FX importer reads `held`) until a name of it is rebound or the module
/// call returns. Sites whose frames and modules do not pair up are skipped;
/// a helper function's locals (no frame of its own in the trace) are not seen.
void holdPythonLocals(Graph &g, const std::vector<CallSite> &sites);

}  // namespace graphlint
