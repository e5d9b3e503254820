// Full-range slices: what eager's indexing skips (FullRangeSlice.h).
#include "graphlint/ir/FullRangeSlice.h"

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/OpRegistry.h"

#include <llvm/ADT/STLExtras.h>

namespace graphlint {

namespace {

// A scalar attribute that must equal `want` where recorded as a number; an
// absent one takes the schema default `want`. A size expression (a string)
// is not a number: the shapes decide (isFullRangeSlice).
bool numberIsOrAbsent(const Node &n, llvm::StringRef name, int64_t want) {
  const Attribute *a = n.attr(name);
  return !a || a->kind != AttrKind::Int || a->i == want;
}

bool sameKnownShape(const Type &a, const Type &b) {
  if (!a.isTensor() || !b.isTensor() || !a.shape.rankKnown || !b.shape.rankKnown || a.shape.dims.size() != b.shape.dims.size())
    return false;
  for (size_t i = 0; i < a.shape.dims.size(); ++i)
    if (a.shape.dims[i].isUnknown() || a.shape.dims[i] != b.shape.dims[i])
      return false;
  return true;
}

}  // namespace

bool eagerAliasesFullRangeSlices(llvm::StringRef torchVersion) {
  return !torchVersion.startswith("0.") && !torchVersion.startswith("1.");
}

bool isFullRangeSlice(const Node &n) {
  if (n.domain != "aten" || (n.opType != "slice" && n.opType != "slice_backward"))
    return false;
  if (n.inputs.empty() || !n.inputs[0] || n.outputs.size() != 1 || !n.outputs[0] || !n.mutatedInputs.empty())
    return false;
  // Equal lengths mean every element is kept: the start is 0 and the step 1
  // (or the dim holds at most one element, where eager's shortcut still
  // needs the literal step 1).
  return numberIsOrAbsent(n, "start", 0) && numberIsOrAbsent(n, "step", 1) &&
         sameKnownShape(n.inputs[0]->type, n.outputs[0]->type);
}

bool recordFullRangeSliceAsAlias(Node &n) {
  if (!isFullRangeSlice(n))
    return false;
  const OpInfo *alias = OpRegistry::instance().lookup("aten", "alias", 1);
  if (!alias)
    return false;
  for (unsigned i = 1; i < n.inputs.size(); ++i)
    if (Value *v = n.inputs[i])
      llvm::erase_if(v->uses, [&](const Use &u) { return u.user == &n && u.operand == i; });
  n.inputs.resize(1);
  n.metadata.erase(llvm::remove_if(n.metadata, [](const auto &kv) { return kv.first == "overload"; }), n.metadata.end());
  n.metadata.emplace_back("full_range_slice", "aten::" + n.opType);
  n.opType = "alias";
  n.op = alias;
  n.attributes.clear();
  n.outputAliasesInput.assign(1, 0);
  return true;
}

}  // namespace graphlint
