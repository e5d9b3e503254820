// What torch.onnx's dynamo exporter (torch.onnx.export(..., dynamo=True))
// records on each node beyond its source line and module path, read back as
// IR facts: which initializers are parameters, from the torch.export
// placeholders each node's FX node read (pkg.torch.onnx.fx_node), and the
// Python locals of its stack traces (pkg.torch.onnx.stack_trace, paired with
// pkg.torch.onnx.name_scopes), as the .pt2 importer derives them.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <string>
#include <utility>
#include <vector>

namespace graphlint::onnxio {

/// An FX node as the exporter records it (`pkg.torch.onnx.fx_node`, "%add_2 :
/// [num_users=1] = call_function[target=...](args = (%x, %p_fc_bias), ...)"):
/// its own name ("add_2"; empty when the text is not one).
llvm::StringRef fxNodeName(llvm::StringRef fxNode);

/// The `%name`s its arguments read, in order, each once: other FX nodes'
/// names and the ExportedProgram's placeholders.
llvm::SmallVector<llvm::StringRef, 8> fxNodeArgs(llvm::StringRef fxNode);

/// A placeholder of torch.export's graph: a parameter's (`p_fc_weight`), a
/// buffer's (`b_mask`) or a lifted constant's (`c_lifted_tensor_0`).
bool isPlaceholder(llvm::StringRef name);

/// "m.model.layers.0.q_proj.weight" -> "m_model_layers_0_q_proj_weight": the
/// suffix torch.export names a parameter's placeholder with (`p_` + it).
std::string placeholderSuffix(llvm::StringRef path);

/// The ExportedProgram's signature as the exporter writes it (the main
/// graph's `pkg.torch.export.ExportedProgram.graph_signature`, one input per
/// line: "p_fc_weight: PARAMETER target='fc.weight'"): (target, kind), in order.
std::vector<std::pair<std::string, std::string>> signatureInputs(const Model &m);

/// What onnxscript's optimizer folded into an initializer (its value_info's
/// `pkg.onnxscript.optimizer.folded_from`, "['m.fc.weight', 'val_3']").
std::vector<std::string> foldedFrom(const Param &p);

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

/// Undoes the merges of the exporter's optimizer where eager keeps two
/// tensors. DeduplicateInitializersPass makes equal initializers of up to
/// 1024 elements one (a fresh model's zero biases, its norms' ones and
/// zeros); a node whose FX node read a parameter's placeholder that no
/// initializer stands for, through an initializer that stands for none of
/// its placeholders, reads a copy of it named after the parameter again
/// (same payload: the bytes were equal). CommonSubexpressionEliminationPass
/// then computes equal nodes once (GPT-NeoX's ln1(x) and ln2(x)); an FX node
/// whose name no value carries, read through a value of another FX node of
/// the same op that is also read under its own name, is computed again (a
/// copy of that FX node's nodes) just before its first reader. Both carry
/// kMergedInto. A torch.cat of one tensor and empty ones, which the
/// optimizer removes and eager copies, is a one-input Concat again
/// (kRestoredCopy). Runs last: the copies take the types shape inference
/// gave.
void restoreDynamoMerges(Model &m);

/// A node the exporter's optimizer made (a Split for SplitToSequence +
/// SequenceAt, a fused pattern) carries no scopes: it gets the innermost
/// module path that holds both what it reads and what reads it, so the
/// module scopes of the memory trace do not break around it.
void inferDynamoScopes(Graph &g);

/// A value the forward computes that the optimizer folded (Param::computed)
/// and that nodes read in two module calls (a causal mask each layer's
/// attention adds, T5's position bias): the module around those calls passed
/// it down from a Python local, so eager holds it until that module's forward
/// returns (Param::heldByCaller), not only to its last read. Runs after
/// inferDynamoScopes.
void holdFoldsSharedAcrossCalls(Graph &g);

/// The module containers of a dynamo export (graphlint/ir/ModuleContainers.h):
/// prefixes of module paths that no node's name_scopes list (`h` of GPT-2's
/// `h.0`, `h.1`).
void recordDynamoModuleContainers(Model &m);

/// The Python locals of a dynamo export's stack traces
/// (graphlint/ir/PythonLocals.h): values a module's forward keeps in a local
/// past their last read in the graph are held until it returns. Returns the
/// helper calls whose locals the traces cannot show (unseenHelperCalls).
/// Records in `m` how many nodes carry an FX node but neither a frame of the
/// model nor a module scope (kUnscopedNodes).
std::vector<std::string> holdDynamoPythonLocals(Model &m);

}  // namespace graphlint::onnxio
