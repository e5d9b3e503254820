// ONNX Runtime's fusion patterns (onnxruntime/core/optimizer), the predicates
// the ort model (OrtFusion.cpp) asks: which epilogues, prologues and
// normalizations ORT's graph transformers rewrite into one kernel.
// Planner-internal, not a public header.
#pragma once

#include "FusionBackendModel.h"

#include <llvm/ADT/DenseMap.h>

#include <optional>

namespace graphlint {

namespace fusion_detail {

const Value *otherOperand(const Node &n, const Value *v);

// Stages of a contraction's epilogue under the ort profile.
enum : unsigned { kFold = 0, kSummed = 1, kActivated = 2 };

// Constants ORT folds at session init: isFoldedConstant(v, /*throughCasts=*/true) (graphlint/ir/ValueFacts.h).
std::optional<int64_t> constantElements(const Value *v);
bool isOrtActivation(const Node &n);
bool isConvLike(const Node &n);
bool isGemmLike(const Node &n);
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
