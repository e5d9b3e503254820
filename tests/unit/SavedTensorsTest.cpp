// What a synthesised backward keeps for PyTorch's own ops (a `.pt2` archive
// or a forward-only FX export linted with --train): derivatives.yaml's save
// rules, the same as for the ONNX op each follows.
#include "IrBuilder.h"
#include "graphlint/analyses/MemoryPlan.h"

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

SavedForBackward saved(const Node *n) {
  llvm::SmallVector<bool, 4> needs(n->inputs.size(), true);
  return savedForBackward(*n, needs);
}

}  // namespace

TEST(SavedTensors, InplaceActivationReadingItsInputSavesACopyOfTheOriginal) {
  IrBuilder b;
  Value *x = b.input("x", f32({4, 8}));  // 128 bytes
  // hardswish_'s derivative reads the input it overwrote: autograd saves a
  // copy, and not the overwritten tensor (the result now).
  SavedForBackward hs = saved(b.node("aten::hardswish_", {x}, {"hs"}, {f32({4, 8})}));
  EXPECT_TRUE(hs.inputs.empty());
  EXPECT_TRUE(hs.outputs.empty());
  EXPECT_EQ(hs.extraBytes, 128u);
  // The functional hardswish keeps its input (derivatives.yaml: hardswish_backward(grad, self)).
  SavedForBackward hsf = saved(b.node("aten::hardswish", {x}, {"hsf"}, {f32({4, 8})}));
  EXPECT_EQ(hsf.inputs, (llvm::SmallVector<unsigned, 2>{0}));
  // relu_'s reads its result: nothing more.
  SavedForBackward relu = saved(b.node("aten::relu_", {x}, {"r"}, {f32({4, 8})}));
  EXPECT_TRUE(relu.inputs.empty());
  EXPECT_EQ(relu.outputs, (llvm::SmallVector<unsigned, 1>{0}));
  EXPECT_EQ(relu.extraBytes, 0u);
}

TEST(SavedTensors, AtenOpsFollowTheirOnnxRule) {
  IrBuilder b;
  Value *x = b.input("x", f32({2, 3, 8, 8}));  // 384 elements
  Value *w = b.param("w", f32({3}));
  // max_pool2d without its indices output: the int64 indices are kept beside the input.
  SavedForBackward pool = saved(b.node("aten::max_pool2d", {x}, {"p"}, {f32({2, 3, 4, 4})}));
  EXPECT_EQ(pool.inputs, (llvm::SmallVector<unsigned, 2>{0}));
  EXPECT_EQ(pool.extraBytes, 96u * 8);
  // batch_norm: its input and fp32 mean and inverse std per channel.
  SavedForBackward bn = saved(b.node("aten::batch_norm", {x, w, w}, {"bn"}, {f32({2, 3, 8, 8})}));
  EXPECT_EQ(bn.inputs, (llvm::SmallVector<unsigned, 2>{0}));
  EXPECT_EQ(bn.extraBytes, 3u * 8);
  // layer_norm over the last dim (normalized_shape [8]): mean and rstd per row of 8.
  Node *ln = b.node("aten::layer_norm", {x}, {"ln"}, {f32({2, 3, 8, 8})});
  Attribute shape;
  shape.name = "normalized_shape";
  shape.kind = AttrKind::Ints;
  shape.ints = {8};
  ln->attributes.push_back(shape);
  EXPECT_EQ(saved(ln).extraBytes, 48u * 8);
  // dropout (no mask output): the one-byte mask CUDA's fused kernel keeps, not its input.
  SavedForBackward drop = saved(b.node("aten::dropout", {x}, {"d"}, {f32({2, 3, 8, 8})}));
  EXPECT_TRUE(drop.inputs.empty());
  EXPECT_EQ(drop.extraBytes, 384u);
  // an nn.Dropout(p=0) module's: at::dropout returns its input, no mask.
  Node *zero = b.node("aten::dropout", {x}, {"d0"}, {f32({2, 3, 8, 8})});
  Attribute p;
  p.name = "p";
  p.kind = AttrKind::Float;
  p.f = 0;
  zero->attributes.push_back(p);
  EXPECT_EQ(saved(zero).extraBytes, 384u) << "a functional p = 0 may be eval()'s";
  EXPECT_FALSE(gradPassesThrough(*zero, 0)) << "a training dropout's backward multiplies by its noise";
  zero->metadata.emplace_back("dropout_module", "torch.nn.modules.dropout.Dropout");
  EXPECT_EQ(saved(zero).extraBytes, 0u);
  // It records no autograd node: its output's gradient is its input's
  // (timm's ViT, proj_drop = 0: its .pt2 training peak +2.3% at batch 8 before).
  EXPECT_TRUE(gradPassesThrough(*zero, 0));
  // mul keeps the other operand; add nothing.
  Value *y = b.input("y", f32({2, 3, 8, 8}));
  EXPECT_EQ(saved(b.node("aten::mul", {x, y}, {"m"}, {f32({2, 3, 8, 8})})).inputs,
            (llvm::SmallVector<unsigned, 2>{0, 1}));
  EXPECT_TRUE(saved(b.node("aten::add", {x, y}, {"a"}, {f32({2, 3, 8, 8})})).inputs.empty());
}

TEST(SavedTensors, FillsConversionsAndComparisonsKeepNothing) {
  IrBuilder b;
  Value *x = b.input("x", f32({4, 8}));
  for (const char *op : {"aten::full_like", "aten::to", "aten::clone", "aten::contiguous", "aten::eq", "Cast"}) {
    SavedForBackward s = saved(b.node(op, {x}, {std::string(op) + "_out"}, {f32({4, 8})}));
    EXPECT_TRUE(s.inputs.empty() && s.outputs.empty() && s.extraBytes == 0) << op;
  }
}

// derivatives.yaml: neg's gradient is -grad and trunc's/frac's need no
// tensor (the pointwise default of keeping input 0 is wrong for them); exp2,
// expm1 and tan differentiate through their result. Llama's rotate_half
// (aten neg) kept its q/k projections in a `.pt2` training step, +5%.
TEST(SavedTensors, UnaryOpsKeepWhatTheirDerivativeReads) {
  IrBuilder b;
  Value *x = b.input("x", f32({4, 8}));
  for (const char *op : {"aten::neg", "aten::neg_", "Neg", "aten::trunc", "aten::frac"}) {
    SavedForBackward s = saved(b.node(op, {x}, {std::string(op) + "_out"}, {f32({4, 8})}));
    EXPECT_TRUE(s.inputs.empty() && s.outputs.empty() && s.extraBytes == 0) << op;
  }
  for (const char *op : {"aten::exp2", "aten::expm1", "aten::tan", "Tan"}) {
    SavedForBackward s = saved(b.node(op, {x}, {std::string(op) + "_out"}, {f32({4, 8})}));
    EXPECT_TRUE(s.inputs.empty()) << op;
    EXPECT_EQ(s.outputs, (llvm::SmallVector<unsigned, 1>{0})) << op;
  }
}
