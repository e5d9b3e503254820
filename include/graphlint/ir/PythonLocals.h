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
/// module paths (the dynamo exporter's name_scopes), both outermost first,
/// and, when the file names them, the modules' classes ("pkg.mod.Block").
struct CallSite {
  Node *node = nullptr;
  std::vector<TraceFrame> frames;
  std::vector<std::string> modules;
  std::vector<std::string> moduleTypes;  // empty, or one per module
};

/// Eager keeps a tensor a Python local binds until the frame returns or
/// rebinds the name: `inputs_embeds = self.wte(ids)` lives to the end of the
/// model's forward, past its last read in the graph. A non-strict
/// torch.export records one frame per module forward (the trace's frames and
/// nn_module_stack's entries pair up). A strict (dynamo) export records every
/// Python frame it inlined: decorators' wrappers and helper functions
/// (transformers' `eager_attention_forward`, Llama's `repeat_kv`) besides the
/// module forwards, and no frame for torch's own leaf modules; its `forward`
/// frames are paired with the modules whose class's file they are in, and the
/// other frames are calls inside the module around them (alignTraceFrames).
/// A statement that assigns names binds the values it produced that are read
/// after it. Each such value is held (Node::metadata "held.J", as the FX
/// importer reads `held`) until a name of it is rebound or its function
/// returns. Sites whose frames cannot be paired with their modules are
/// skipped; in a non-strict trace a helper function's locals (no frame of
/// its own) are not seen.
/// Returns unseenHelperCalls(sites).
std::vector<std::string> holdPythonLocals(Graph &g, const std::vector<CallSite> &sites);

/// The calls whose locals a trace cannot show: where every frame is a
/// module's `forward` (a non-strict torch.export's default), the statements
/// a forward frame is innermost at that call a function (`attn, w =
/// attention_interface(...)`, `self._attn(...)`, not torch's own nor a
/// tensor method) which ran at least two kernels that allocate in one call,
/// each as "FILE:LINE: CODE", the calls that ran the most kernels first.
/// Empty for a trace that records helper frames (strict, or
/// graphlint.record_python_frames).
std::vector<std::string> unseenHelperCalls(const std::vector<CallSite> &sites);

/// The model metadata key under which importers record unseenHelperCalls,
/// one entry per call.
inline constexpr const char *kUnseenHelperCall = "graphlint.unseen_helper_call";

/// The model metadata key under which the ONNX importer records how many
/// nodes of a torch.onnx dynamo export carry an FX node but neither a frame
/// of the model's Python nor a module scope (the exporter drops them for the
/// ops of a torch.autocast or torch.no_grad region): no Python local or
/// module argument of theirs is held.
inline constexpr const char *kUnscopedNodes = "graphlint.unscoped_nodes";

/// A site's frames as the tracker walks them: torch's own frames dropped
/// (a torch.nn module's `forward` kept), each frame keyed by the module whose
/// call it runs in (its own for a module forward, else the innermost module
/// frame's around it, "" outside every module). Empty when the frames cannot
/// be paired with the modules: the site does not name the modules' classes,
/// or has more `forward` frames than modules.
struct AlignedFrames {
  std::vector<TraceFrame> frames;
  std::vector<std::string> modules;
  std::vector<bool> helper;  // a function call, not a module's forward
};
AlignedFrames alignTraceFrames(const CallSite &site);

}  // namespace graphlint
