// What torch.onnx's dynamo exporter (torch.onnx.export(..., dynamo=True))
// records on each node beyond its source line and module path, read back as
// IR facts: which initializers are parameters, from the torch.export
// placeholders each node's FX node read (pkg.torch.onnx.fx_node), and the
// Python locals of its stack traces (pkg.torch.onnx.stack_trace, paired with
// pkg.torch.onnx.name_scopes), as the .pt2 importer derives them.
#pragma once

#include "graphlint/ir/Graph.h"

#include <string>
#include <vector>

namespace graphlint::onnxio {

/// Sets Param::trained (unless training info set it) for a dynamo export.
/// torch.export names a parameter's placeholder `p_<path>`, a buffer's
/// `b_<path>` and a constant's `c_<name>`, and the exporter names an
/// initializer after its parameter or buffer: one whose placeholder a node
/// read is trained or not as that says. The exporter's optimizer folds
/// constants: a weight's transpose becomes a new initializer (`val_12`) whose
/// parameter no initializer is named after any more; a causal mask or a
/// rotary table computed from buffers becomes an initializer too.
///
/// onnxscript's optimizer names what it folded into each such initializer
/// (its value_info's `pkg.onnxscript.optimizer.folded_from`), and the
/// exporter writes the ExportedProgram's signature (the main graph's
/// `pkg.torch.export.ExportedProgram.graph_signature`), which says which of
/// those names are parameters. Where both are there: an initializer folded
/// from one parameter and constants only (a transpose, Gemma's `1 + weight`)
/// stands for that parameter (trained); one folded from parameters and what
/// the forward computes (OPT's position embedding of constant positions) is
/// `computed` (Param::computed) and trained: eager makes it in the forward,
/// and the gradient reaches the parameters through it; one folded from no
/// parameter is `computed` (a mask, a rotary table). Each parameter of the
/// signature that no initializer stands for is recorded in the model's
/// metadata (kFoldedParameter).
///
/// Without them (an older onnxscript), a folded initializer is trained when
/// a node that reads it read a parameter that survives under no initializer
/// of its own; any other folded initializer is `computed`. Nothing is set
/// when no node carries an FX node (another exporter), or for an initializer
/// no reader of which does (the heuristic of TrainableParams decides).
void markDynamoParams(Model &m);

/// A node the exporter's optimizer made (a Split for SplitToSequence +
/// SequenceAt, a fused pattern) carries no scopes: it gets the innermost
/// module path that holds both what it reads and what reads it, so the
/// module scopes of the memory trace do not break around it.
void inferDynamoScopes(Graph &g);

/// The module containers of a dynamo export (graphlint/ir/ModuleContainers.h):
/// prefixes of module paths that no node's name_scopes list (`h` of GPT-2's
/// `h.0`, `h.1`).
void recordDynamoModuleContainers(Model &m);

/// The Python locals of a dynamo export's stack traces
/// (graphlint/ir/PythonLocals.h): values a module's forward keeps in a local
/// past their last read in the graph are held until it returns. Returns the
/// helper calls whose locals the traces cannot show (unseenHelperCalls).
std::vector<std::string> holdDynamoPythonLocals(Graph &g);

}  // namespace graphlint::onnxio
