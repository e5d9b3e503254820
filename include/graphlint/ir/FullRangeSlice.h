// A full-range slice is a slice that keeps every element of its dim
// (`x[:, :seq]` or `x[:, 0:]` where the dim is seq long). torch 2.x's
// indexing returns an alias of the tensor for one (AliasBackward0, measured
// on 2.13 and 2.14), so eager's backward allocates nothing for it; torch
// 1.13 records SliceBackward0 and its zero-filled copy. A symbolic trace
// cannot prove the slice keeps everything at every size and records
// aten::slice, whose backward is that copy (aten::slice_backward): a
// rescalable capture bound with -D would cost what a static capture at the
// same sizes, and eager, never run. The importers record such a slice, and
// its slice_backward, as what eager runs at the bound sizes: an aten::alias,
// a view without a kernel.
#pragma once

#include <llvm/ADT/StringRef.h>

namespace graphlint {

class Node;

/// Whether eager PyTorch of this version (an FX file's producer.torch,
/// "2.13.0+cpu") returns an alias for a full-range slice: every 2.x (and an
/// unrecorded version, taken as a current torch), not 1.x.
bool eagerAliasesFullRangeSlices(llvm::StringRef torchVersion);

/// `n` is an aten::slice or aten::slice_backward that keeps every element at
/// the bound sizes: step 1, start 0 (where recorded as a number), and its
/// tensor operand's shape equal to its output's (static dims equal, or the
/// same symbolic expression, which holds for every binding).
bool isFullRangeSlice(const Node &n);

/// Rewrites a full-range slice or slice_backward into aten::alias of its
/// tensor operand (other operands, e.g. a size computed by a node, are
/// dropped with their uses). The node keeps its name, source line, phase
/// and gradient marks; metadata "full_range_slice" names the op it was
/// recorded as. Returns whether it rewrote `n`.
bool recordFullRangeSliceAsAlias(Node &n);

}  // namespace graphlint
