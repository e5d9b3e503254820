// Value-level facts every consumer reads the same way, from the IR and the
// op registry: the value a nested body's capture stands for, whether a node's
// output is a view of its input, and whether a value is a weight or constant
// that runtimes fold at load time. Rules, the fusion planner, the ORT
// patterns, the memory trace and DataDependence used to carry private copies
// of each (a capture was resolved in a dozen places, some one level deep,
// some all the way). These are cheap walks of a few hops over the IR, so they
// are functions rather than cached analyses.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <utility>

namespace graphlint {

class Node;
class Value;
struct ConstData;

/// The value a capture (`Value::Kind::OuterScope`) stands for, followed out
/// through every enclosing body; `v` itself when it is not a capture.
const Value *captureOrigin(const Value *v);

/// Output 0 of `n` is a view of its input 0 (the registry's alias fact:
/// Reshape, Flatten, Squeeze, Unsqueeze, Identity, BitCast, aten view/expand/...).
bool isViewOp(const Node &n);

/// An op, by its ONNX op type or its aten name (an FX node's, without
/// overload or number), that only re-lays out its one tensor operand's
/// elements and makes no copy of its own: ONNX's Reshape, Expand, Unsqueeze,
/// Squeeze, Transpose, Slice, Flatten, Identity; aten's view, _unsafe_view,
/// reshape, expand, unsqueeze, squeeze, transpose, permute, slice, select,
/// alias, t, detach, flatten. (A reshape may still copy where strides
/// cannot be viewed.)
bool isLayoutOpName(llvm::StringRef op);

/// A PyTorch op recorded for a dtype conversion of input 0 (`_to_copy`,
/// `to`, `type_as`, `float`, `half`, `bfloat16`, `double`: the registry's
/// ConversionKind::Convert); like the calls it records, it may also move the
/// tensor to another device.
bool isAtenConversion(const Node &n);

/// Any op whose purpose is to convert input 0's element type: ONNX Cast and
/// CastLike, PyTorch's conversions and autocast's casts.
bool isConversion(const Node &n);

/// An ONNX Cast or CastLike: a dtype conversion and nothing else.
bool isOnnxCast(const Node &n);

/// A PyTorch dropout that returns its input itself, in training too: an
/// nn.Dropout module's (the `.pt2` importer's "dropout_module" fact) with
/// p = 0, or a functional one recorded with train=True (a train() export,
/// Llama's attention dropout of 0.0), or one of an eval() export of a model
/// none of whose nn.Dropout modules has p > 0 (the importer's
/// "dropout_training_p" fact): at::dropout's shortcut on every device
/// (torchvision's ViT). Not another functional dropout of an eval() export,
/// whose p = 0 may be eval's only (GPT-2's `p if self.training else 0.0`),
/// nor native_dropout, which always writes a mask.
bool isIdentityDropout(const Node &n);

/// An ai.onnx Dropout run in training mode: its training_mode input is a
/// constant true and its ratio not a constant 0 (the dynamo exporter's
/// export of a train() module). It writes a new output and keeps a mask, as
/// PyTorch's dropout does; any other ai.onnx Dropout is the identity.
bool isTrainingOnnxDropout(const Node &n);

/// An ai.onnx BatchNormalization in training mode (training_mode = 1, opset
/// >= 14, as torch.onnx writes it with TrainingMode.TRAINING): it normalises
/// over the batch's statistics, a reduction over N x H x W like aten's
/// _native_batch_norm_legit, not the per-channel affine of inference.
bool isTrainingOnnxBatchNorm(const Node &n);

/// The small payload of a constant: an initializer's or an ai.onnx
/// Constant's value tensor (through captures and free views); nullptr when
/// `v` is no constant or its payload was not kept.
const ConstData *constantPayload(const Value *v);

/// A node's numeric attribute, float or int (a `.pt2` records a Python
/// scalar as either); nullopt when it has none or another kind.
std::optional<double> numericAttr(const Node &n, llvm::StringRef name);

/// A dropout node's `p` attribute (float or int); nullopt when it has none.
std::optional<double> dropoutProbability(const Node &n);

/// Whether PyTorch can view a tensor of `shape` and `strides` as `newShape`
/// (reshape and flatten return a view then, a copy otherwise): each run of
/// old dims the new shape regroups must be contiguous within itself.
bool stridesAllowView(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> strides,
                      llvm::ArrayRef<int64_t> newShape);

/// The strides of that view (the regrouped dims step through each contiguous
/// run of old dims); nullopt where PyTorch copies, or the strides do not
/// match the shape's rank.
std::optional<llvm::SmallVector<int64_t, 4>> viewStrides(llvm::ArrayRef<int64_t> shape,
                                                         llvm::ArrayRef<int64_t> strides,
                                                         llvm::ArrayRef<int64_t> newShape);

/// A contiguous (row-major) tensor's strides.
llvm::SmallVector<int64_t, 4> contiguousStrides(llvm::ArrayRef<int64_t> shape);

/// The strides of a dense tensor of `dims` in the dim order `strides` give
/// (outermost the largest; equal strides keep the dims' order): the layout
/// eager gives an elementwise op's new output from its operand's.
llvm::SmallVector<int64_t, 4> denseStrides(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> strides);

/// The operands of a batched matmul whose strides cannot view [batch, rows,
/// cols] once expanded to the broadcast batch, each with the element count
/// of the copy eager's reshape makes for bmm (and autograd saves). Empty for
/// mm, a 2-d right operand, or strides that do not match the dims.
llvm::SmallVector<std::pair<unsigned, int64_t>, 2> matmulOperandCopies(llvm::ArrayRef<int64_t> dims0,
                                                                       llvm::ArrayRef<int64_t> strides0,
                                                                       llvm::ArrayRef<int64_t> dims1,
                                                                       llvm::ArrayRef<int64_t> strides1);

/// The operands scaled_dot_product_attention's math path (ATen's
/// _scaled_dot_product_attention_math, a CPU training step under attention
/// dropout) copies for its two bmm, from the query's, key's and value's dims
/// and strides, each as its operand index (0, 1, 2) with the copy's element
/// count: q and k^T are scaled into new tensors laid out as their operands
/// (denseStrides), then bmm; then the contiguous probabilities times v.
/// Grouped query heads first repeat key and value into contiguous heads
/// (enable_gqa's repeat_interleave). Empty where ranks differ or are below 2.
llvm::SmallVector<std::pair<unsigned, int64_t>, 3> attentionMathOperandCopies(
    llvm::ArrayRef<int64_t> qDims, llvm::ArrayRef<int64_t> qStrides, llvm::ArrayRef<int64_t> kDims,
    llvm::ArrayRef<int64_t> kStrides, llvm::ArrayRef<int64_t> vDims, llvm::ArrayRef<int64_t> vStrides);

/// A reshape or flatten the importer found its input's recorded strides
/// cannot view (the `.pt2` importer's "reshape_copies" fact: Llama's
/// repeat_kv reshapes an expanded tensor): PyTorch returns a copy.
bool reshapeCopies(const Node &n);

/// The operands of a batched matmul that eager copies before its bmm (the
/// `.pt2` importer's "matmul_copies" fact: an operand whose recorded strides
/// cannot view [batch, rows, cols]), each with the copy's element count; bmm
/// saves the copy for backward, not the operand.
llvm::SmallVector<std::pair<unsigned, int64_t>, 2> matmulCopies(const Node &n);

/// The operands of `.pt2` scaled_dot_product_attention `n` (query 0, key 1,
/// value 2) its math path copies for a bmm, with the copies' element counts
/// (the importer's "attention_math_copies" fact from the recorded strides:
/// q and k^T scaled in their operands' layout, then bmm; the probabilities
/// times v).
llvm::SmallVector<std::pair<unsigned, int64_t>, 2> attentionMathCopies(const Node &n);

/// The op a node of a torch.onnx dynamo export was written for, from its FX
/// node (`pkg.torch.onnx.fx_node`, "%y : ... = call_function[target=
/// torch.ops.aten.X.overload](args = ...)"): "torch.ops.aten.X.overload";
/// empty for a node without one.
llvm::StringRef dynamoFxTarget(const Node &n);

/// The scaled_dot_product_attention call an ai.onnx node of a dynamo export
/// is a piece of (the exporter writes the op as its math decomposition, each
/// node carrying the call's FX node): that FX node, which names the call;
/// nullptr for any other node.
const std::string *decomposedAttentionCall(const Node &n);

/// The scaled_dot_product_attention call `n` is or is a piece of draws
/// attention dropout in a training step: a `.pt2` op's dropout_p > 0, or 0
/// recorded by an eval() export where training's may not be (no
/// "dropout_training_p" 0 fact of the importer); a dynamo decomposition's
/// FX node's dropout_p > 0 (the exporter leaves the dropout out of the
/// graph). False for any other node.
bool attentionDropsOut(const Node &n);

/// `Tensor.to(dtype)` to the dtype the tensor already has (torch.export's
/// aten.to.dtype, T5's `hidden_states.to(torch.float32)`), or an ONNX Cast
/// to its input's dtype (autocast's cast of a tensor already in bfloat16):
/// PyTorch returns the tensor itself unless copy=True.
bool isNoopConversion(const Node &n);

/// A Cast torch.onnx's dynamo exporter inserted for type promotion (its FX
/// node is `prims.convert_element_type`, which the exporter's type-promotion
/// pass adds before an op of mixed dtypes: the bfloat16 scores an autocast
/// region adds to a float32 mask). Eager's kernel promotes as it reads and
/// never makes the converted tensor; `.to()` and autocast's casts are
/// `aten._to_copy` and copy.
bool isPromotionCast(const Node &n);

/// Writes input 0 in place (the registry's fact: PyTorch's `relu_`, `copy_`, `index_put_`).
bool isInplaceOp(const Node &n);

/// A view that runs no kernel (a shape-only op): what a runtime folds into
/// its consumer.
bool isFreeView(const Node &n);

/// A weight (Param) or an ai.onnx Constant, reached through free views and,
/// when `throughCasts`, through ai.onnx Casts: a value every runtime folds
/// at load time (ORT folds a Cast of a bias; exporters inline CastLike on
/// every constant).
bool isFoldedConstant(const Value *v, bool throughCasts = false);

/// Bounds every element of an integer tensor lies within, proved from how
/// the graph builds it (src/ir/ElementFacts.cpp): index arithmetic (aten
/// arange, ONNX Range, sums and differences, shifts by a constant), views,
/// broadcasts and integer conversions of it, constants whose payload was
/// kept. A side is unset where it is not proved.
struct ElementBounds {
  std::optional<int64_t> lo, hi;
};
ElementBounds elementBounds(const Value *v);

/// Every element of a bool tensor is true (or every one false), proved the
/// same way: a comparison the operands' bounds decide (`kv_index >= 0`),
/// and/or/not of such, ones/full, views. nullopt where not proved.
std::optional<bool> uniformBool(const Value *v);

/// Every element is zero, proved: zeros/full(0)/ConstantOfShape(0), a
/// `where` whose condition is uniform and whose chosen branch is zero
/// (transformers' all-pass attention mask as torch.export traces it),
/// views and conversions of such, and constants whose payload is all zero
/// (kept, or read at import: TensorLiteral::uniformByte).
bool isAllZero(const Value *v);

/// An additive attention mask that masks nothing, built by the forward: a
/// `where(cond, 0, min)` whose condition is uniformly true (transformers'
/// bidirectional mask without padding, `kv_index >= 0`, as a tracer records
/// it), read through views and conversions; or the dynamo ONNX exporter's
/// fold of one (a computed initializer named after its FX `where` node,
/// every byte zero). A zeros tensor the model itself builds is not one.
bool isAllPassMask(const Value *v);

/// A causal attention mask over equal query and key lengths, built by the
/// forward from positions alone: a bool tensor whose last two dims are
/// [s, s] and whose element [..., i, j] is `j <= i`, or an additive
/// `where(that, 0, negative)`. Proved by evaluating the index arithmetic
/// that builds it (aten arange, sums, slices, index, cat, cumsum, diff,
/// comparisons; tensors of at most 2^20 elements) and checking each term of
/// the final `and` against the pattern over the whole mask (at most 2^27
/// elements). transformers' `create_causal_mask` under a tracer (torch.export,
/// graphlint-export's fake capture) builds one where eager passes
/// `is_causal=True` and no mask.
bool isCausalMask(const Value *v);

}  // namespace graphlint
