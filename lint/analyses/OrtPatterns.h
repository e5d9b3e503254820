// Planner internals shared by FusionPlan.cpp (the greedy planner) and
// OrtPatterns.cpp (ONNX Runtime's transformer patterns, the ort profile):
// per-group planning state and the pattern predicates. Not a public header.
#pragma once

#include "graphlint/lint/FusionPlan.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>

#include <optional>

namespace graphlint {

// Per-group planning state (internal; forward-declared in FusionPlan.h).
struct FusionGroupState {
  llvm::SmallVector<unsigned, 4> deps;  // kernel groups this group reads
  const Node *lastReduction = nullptr;
  unsigned epilogue = 0;
  bool closed = false;
  bool read = false;  // another group depends on this one
  // ort profile
  const Node *anchor = nullptr;  // the contraction a group grew from
  unsigned stage = 0;            // its epilogue stage (kFold, kSummed, kActivated)
  bool injective = false;        // started by a gather/slice/pad/transpose
  bool castHead = false;         // a lone precision Cast so far
  bool normalization = false;    // holds a ReduceMean (decomposed LayerNorm)
};
using GroupState = FusionGroupState;

namespace fusion_detail {

bool isFloatCast(const Node &n);
bool isNoopCast(const Node &n);  // a Cast to the dtype it reads
bool isLayoutChange(const Node &n);
const Value *otherOperand(const Node &n, const Value *v);

// Stages of a contraction's epilogue under the ort profile.
enum : unsigned { kFold = 0, kSummed = 1, kActivated = 2 };

// Constants ORT folds at session init: isFoldedConstant(v, /*throughCasts=*/true) (ir/ValueFacts.h).
std::optional<int64_t> constantElements(const Value *v);
bool isOrtActivation(const Node &n);
bool isConvLike(const Node &n);
bool isGemmLike(const Node &n);
bool onlyFirstOutputUsed(const Node &n);
bool broadcastsOnto(const Shape &b, const Shape &out);
std::optional<BreakReason> ortEpilogueRefusal(const Node &anchor, unsigned stage, const Node &n, const Value *v,
                                              unsigned *nextStage, bool residualSum);
std::optional<BreakReason> ortIntegerEpilogueRefusal(unsigned stage, const Node &n, unsigned *nextStage);
bool isFloatingValue(const Value *v);
bool isNormalizationEntry(const Node &n);
bool isNormalizationHead(const Node &n);
bool feedsNormalization(const Node &cast);
bool ortPadFolds(const Node &pad, const Node &consumer);
bool ortTransposeFolds(const Node &tr, const Node &mm, bool throughReshape = false);
bool ortScaleFolds(const Node &s, const Value *v, const Node &mm);
bool isLayerNormOp(const Node &n);
// ORT's elementwise fusions (GeluFusion, BiasGeluFusion, FastGeluFusion,
// QuickGeluFusion): node -> a pattern id shared by the nodes of one match.
llvm::DenseMap<const Node *, unsigned> ortElementwisePatterns(const Graph &g);

}  // namespace fusion_detail
}  // namespace graphlint
