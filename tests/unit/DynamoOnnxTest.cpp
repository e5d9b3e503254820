// ONNX files from torch 2.x's dynamo exporter (torch.onnx.export(...,
// dynamo=True), opset 18): findings point at the user's file:line from the
// per-node `pkg.torch.onnx.stack_trace`, and carry the module path from
// `pkg.torch.onnx.name_scopes` (not the FX node name that list ends with).
// What the exporter's optimizer folds is read back from what it records (the
// FX nodes, `pkg.torch.onnx.fx_node`; each fold's sources,
// `pkg.onnxscript.optimizer.folded_from`; the ExportedProgram's signature):
// which initializers are parameters, which it computed from buffers and
// constants, and the Python locals of the stack traces. The fixtures are written by tests/fixtures/dynamo/make_dynamo.py
// (torch 2.13).
#include "TestSupport.h"

#include "graphlint/import/Importer.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/engine/Driver.h"
#include "graphlint/analyses/Liveness.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/TrainableParams.h"
#include "src/onnx/SourceInfo.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

namespace graphlint {
namespace {

using test::sourcePath;

TEST(DynamoOnnx, CastChainsReportedAtTheUsersLinesAndModules) {
  FileReport r = lintFile(sourcePath("tests/fixtures/dynamo/dynamo_cast.onnx"), {});
  ASSERT_FALSE(r.fatal) << r.fatalMessage;
  std::set<test::Finding> want = test::markerFindings(sourcePath("tests/fixtures/dynamo/dynamo_models.py"));
  std::set<test::Finding> got = test::findingsByLine(r, "dynamo_models.py", {"GL101", "GL102"});
  EXPECT_EQ(got, want) << "expected: " << test::describeFindings(want) << "\nactual:   " << test::describeFindings(got);
  std::map<unsigned, std::string> modules;
  for (const Diagnostic *d : test::withCode(r, "GL102"))
    modules[d->location.source.line] = d->location.modulePath;
  EXPECT_EQ(modules, (std::map<unsigned, std::string>{{16, "block"}, {27, ""}}));
}

TEST(DynamoOnnx, ModulePathFromNameScopes) {
  Node n;
  n.metadata = {{"pkg.torch.onnx.name_scopes", "['', 'block', 'block.fc', 'linear']"},
                {"pkg.torch.onnx.class_hierarchy",
                 "['m.CastChain', 'm.Block', 'torch.nn.modules.linear.Linear', 'aten.linear.default']"}};
  EXPECT_EQ(onnxio::dynamoModulePath(n), std::optional<std::string>("block.fc"));
  n.metadata = {{"pkg.torch.onnx.name_scopes", "['', '_to_copy']"},
                {"pkg.torch.onnx.class_hierarchy", "['m.CastChain', 'aten._to_copy.default']"}};
  EXPECT_EQ(onnxio::dynamoModulePath(n), std::optional<std::string>(""));
  n.metadata = {{"namespace", "layer1/layer1.0"}};
  EXPECT_EQ(onnxio::dynamoModulePath(n), std::nullopt);
}

// dynamo_attention_model.py: the optimizer folds qk's and out's transposed
// weights into new initializers (val_0, val_12) and the causal bias, which
// eager computes in forward from a buffer, into one (masked_fill); its
// Split (from SplitToSequence + SequenceAt) carries no metadata.
TEST(DynamoOnnx, FoldedInitializersAreParametersOrForwardValues) {
  auto m = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_attention.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  const Graph &g = *(*m)->graph;
  std::set<std::string> trained, computed;
  for (const Value *v : trainableParams(g))
    trained.insert(v->name);
  for (const auto &p : g.params())
    if (p->computed)
      computed.insert(p->value->name);
  EXPECT_EQ(trained, (std::set<std::string>{"blocks.0.qk.bias", "out.bias", "val_0", "val_12"}));
  EXPECT_EQ(computed, (std::set<std::string>{"masked_fill", "scalar_tensor_default"}));
  for (const auto &n : g.nodes()) {
    if (n->opType == "Split")  // between the qk projection (blocks.0.qk) and the scores (blocks.0)
      EXPECT_EQ(n->modulePath, "blocks.0");
    // `h = self.blocks[0](x)`: h is a local of the model's forward, held past its
    // last read (out's MatMul) until forward returns.
    if (n->name == "node_matmul_1") {
      const std::string *held = n->metadataValue("held.0");
      ASSERT_NE(held, nullptr);
      EXPECT_EQ(*held, g.nodes().back()->name);
    }
  }
  // The ModuleList `blocks` never ran a forward: a container, which holds
  // nothing the way a module call does.
  std::vector<std::string> containers;
  for (const auto &kv : (*m)->metadata)
    if (kv.first == "module_container")
      containers.push_back(kv.second);
  EXPECT_EQ(containers, std::vector<std::string>{"blocks"});
  // The memory plan: the parameters are resident (816 fp32 values); the
  // folded bias is an activation from its first reader to its last.
  graphlint::Setup setup;
  AnalysisContext ctx(**m, setup);
  const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
  EXPECT_EQ(sum.paramsBytes, 816u * 4);
  bool biasLive = false;
  for (const MemoryPlan::Contributor &c : ctx.get<MemoryPlan>().atPeak())
    biasLive |= c.value && c.value->name == "masked_fill";
  EXPECT_FALSE(biasLive) << "freed after the scores' Add, before the peak";
}

// dynamo_folds_model.py in train(): the optimizer folds the position
// module's whole forward (an embedding of constant positions) into one
// initializer, `embedding`, and keeps nothing of its table; ScaledNorm's
// `1 + weight` into `add`, which stands for the weight.
TEST(DynamoOnnx, FoldsOfParametersReadFromTheOptimizersRecord) {
  auto m = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_folds.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  const Graph &g = *(*m)->graph;
  std::set<std::string> trained, computed, heldByCaller;
  for (const Value *v : trainableParams(g))
    trained.insert(v->name);
  const Value *positions = nullptr;
  for (const auto &p : g.params()) {
    if (p->computed)
      computed.insert(p->value->name);
    if (p->heldByCaller)
      heldByCaller.insert(p->value->name);
    if (p->value->name == "embedding")
      positions = p->value;
  }
  EXPECT_EQ(trained, (std::set<std::string>{"add", "fc.bias", "val_5"}));
  EXPECT_EQ(computed, (std::set<std::string>{"embedding", "scalar_tensor_default"}));
  EXPECT_EQ(heldByCaller, std::set<std::string>{"embedding"});
  ASSERT_NE(positions, nullptr);
  EXPECT_TRUE(positions->param->trained.value_or(false)) << "the gradient reaches the table through it";
  std::vector<std::string> folded;
  for (const auto &kv : (*m)->metadata)
    if (kv.first == kFoldedParameter)
      folded.push_back(kv.second);
  EXPECT_EQ(folded, std::vector<std::string>{"positions.table.weight"});
  // `pos = self.positions(x)` is a local of the model's forward: held until it
  // returns, past its one read (the Mul).
  auto lastReads = Liveness(g, {}, m->get()).lastReads();
  EXPECT_EQ(lastReads[positions], static_cast<int64_t>(g.nodes().size()) - 1);

  // The training step: `x.sigmoid() * pos` saves the sigmoid, since pos
  // needs a gradient, and the norm's Mul saves its input, since `1 + weight`
  // needs one; the positions are gone by then.
  graphlint::Setup setup;
  setup.train = true;
  setup.optimizer = Optimizer::Adam;
  AnalysisContext ctx(**m, setup);
  const MemoryPlan &plan = ctx.get<MemoryPlan>();
  std::set<std::string> atPeak;
  for (const MemoryPlan::Contributor &c : plan.atPeak())
    if (c.value)
      atPeak.insert(c.value->name);
  EXPECT_EQ(plan.summary().peakPhase, "backward");
  EXPECT_TRUE(atPeak.count("sigmoid"));
  EXPECT_TRUE(atPeak.count("mul"));
  EXPECT_FALSE(atPeak.count("embedding"));
  // The table is not counted, and the report says so (and names no helper:
  // `self.fc(h).relu()` calls a submodule).
  ASSERT_EQ(plan.summary().caveats.size(), 1u);
  EXPECT_NE(plan.summary().caveats[0].find("positions.table.weight"), std::string::npos);
}

// dynamo_folds_model.py's PositionsInline: `h = x.sigmoid() *
// self.positions(x)` binds no name to the positions, a temporary of the
// statement whose node reads them: not held past that read.
TEST(DynamoOnnx, AFoldedModuleOutputReadWhereItIsCalledIsATemporary) {
  auto m = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_folds_inline.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  const Graph &g = *(*m)->graph;
  const Value *positions = nullptr;
  for (const auto &p : g.params())
    if (p->computed && p->trained.value_or(false))
      positions = p->value;
  ASSERT_NE(positions, nullptr);
  EXPECT_FALSE(positions->param->heldByCaller);
  ASSERT_EQ(positions->uses.size(), 1u);
  auto lastReads = Liveness(g, {}, m->get()).lastReads();
  EXPECT_EQ(lastReads[positions], static_cast<int64_t>(positions->uses[0].user->index));
}

// dynamo_folds_model.py's ConvBN: the optimizer fuses the batch norm into the
// Conv, which carries the batch norm's FX node. Eager still runs the
// convolution and the batch norm: the convolution's output (2x8x8x8 fp32,
// 4 KiB) is a buffer the file does not have.
TEST(DynamoOnnx, ABatchNormFusedIntoAConvStillAllocatesTheConvolutionsOutput) {
  auto findConv = [](const Graph &g) -> const Node * {
    for (const auto &n : g.nodes())
      if (n->opType == "Conv")
        return n.get();
    return nullptr;
  };
  // Inference: the convolution's output is live while the batch norm runs,
  // and its input (`x * 2`, read by nothing else) is gone by then.
  auto eval = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_convbn.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(eval)) << llvm::toString(eval.takeError());
  const Node *conv = findConv(*(*eval)->graph);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(fusedBatchNormOutput(*conv), conv->outputs[0]);
  {
    graphlint::Setup setup;
    AnalysisContext ctx(**eval, setup);
    const MemoryPlan &plan = ctx.get<MemoryPlan>();
    EXPECT_EQ(plan.peakNode(), conv);
    bool convOutput = false, convInput = false;
    for (const MemoryPlan::Contributor &c : plan.atPeak()) {
      convOutput |= c.kind == MemoryKind::Temporary && c.bytes == 4096;
      convInput |= c.value == conv->inputs[0];
    }
    EXPECT_TRUE(convOutput) << "the convolution's output, freed when the batch norm returns";
    EXPECT_FALSE(convInput) << "freed when the convolution returns";
    // The model's states as eager holds them: the convolution's weight (864 B),
    // the batch norm's weight, bias, running mean and variance (4 x 8 fp32)
    // and batch count (int64), which the file does not hold, and the head.
    EXPECT_EQ(plan.summary().paramsBytes, 864u + (4 * 8 * 4 + 8) + (8 * 4 + 4) * 4);
  }
  // Training: the batch norm saves it, with its fp32 mean and inverse std.
  auto train = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_convbn_train.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(train)) << llvm::toString(train.takeError());
  graphlint::Setup setup;
  setup.train = true;
  setup.optimizer = Optimizer::Adam;
  AnalysisContext ctx(**train, setup);
  // The batch norm's weight and bias train: their gradients and Adam moments.
  EXPECT_EQ(ctx.get<MemoryPlan>().summary().gradsBytes, (864u + 2 * 8 * 4 + (8 * 4 + 4) * 4));
  EXPECT_EQ(ctx.get<MemoryPlan>().summary().optimizerBytes, 2 * (864u + 2 * 8 * 4 + (8 * 4 + 4) * 4));
  bool saved = false;
  for (const MemoryPlan::Contributor &c : ctx.get<MemoryPlan>().atPeak())
    saved |= c.kind == MemoryKind::Saved && c.bytes == 4096 + 8 * 8 && c.producer && c.producer->opType == "Conv";
  EXPECT_TRUE(saved);
  // A Conv the exporter wrote alone (no batch norm's FX node) is one kernel.
  Node plain;
  plain.opType = "Conv";
  plain.outputs.push_back(conv->outputs[0]);
  EXPECT_EQ(fusedBatchNormOutput(plain), nullptr);
  plain.metadata = {{"pkg.torch.onnx.fx_node", "%conv2d : [num_users=1] = call_function[target=torch.ops.aten."
                                               "conv2d.default](args = (%x, %p_conv_weight), kwargs = {})"}};
  EXPECT_EQ(fusedBatchNormOutput(plain), nullptr);
}

// dynamo_merges_model.py, freshly initialised (2 blocks, 2,816 parameters):
// the optimizer keeps one initializer per equal value (every norm weight is
// ones, every bias zeros) and then computes ln1(x) and ln2(x) once per
// block. Eager keeps every parameter and both norms' outputs; its triu mask,
// folded into an initializer, is a local of the model's forward that both
// blocks read. The peaks beyond the resident states were measured with
// validation/memory_matrix.py's measure() on torch 2.13 (batch 2): 7,424 bytes in
// inference, 23,104 in an Adam step (7,168 and 20,800 predicted before the
// merges were undone).
TEST(DynamoOnnx, WhatTheOptimizerMergedEagerKeepsApart) {
  auto m = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_merges.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  const Graph &g = *(*m)->graph;
  std::map<std::string, std::string> mergedParams;
  const Value *mask = nullptr;
  for (const auto &p : g.params()) {
    for (const auto &[key, value] : p->metadata)
      if (key == kMergedInto)
        mergedParams[p->value->name] = value;
    if (p->value->name == "triu")
      mask = p->value;
  }
  // 14 norm weights and biases; the file keeps one per value and shape: ones
  // [16], zeros [16] and zeros [32].
  EXPECT_EQ(mergedParams.size(), 11u);
  EXPECT_EQ(mergedParams["blocks.1.ln1.weight"], "blocks.0.ln1.weight");
  EXPECT_EQ(mergedParams["blocks.0.down.bias"], "blocks.0.ln1.bias");
  EXPECT_EQ(mergedParams["blocks.0.ln2.weight"], "blocks.0.ln1.weight");
  ASSERT_NE(mask, nullptr);
  EXPECT_TRUE(mask->param->computed);
  EXPECT_TRUE(mask->param->heldByCaller);
  // One LayerNormalization per norm again, each ln2 in its own module,
  // reading its own parameters, just before the MLP that reads it.
  std::vector<const Node *> norms;
  for (const auto &n : g.nodes())
    if (n->opType == "LayerNormalization")
      norms.push_back(n.get());
  ASSERT_EQ(norms.size(), 4u);
  for (int block = 0; block < 2; ++block) {
    const Node &ln2 = *norms[2 * block + 1];
    std::string path = fmt::format("blocks.{}.ln2", block);
    EXPECT_EQ(ln2.modulePath, path);
    ASSERT_NE(ln2.metadataValue(kMergedInto), nullptr);
    EXPECT_EQ(ln2.inputs[1]->name, path + ".weight");
    EXPECT_EQ(ln2.inputs[2]->name, path + ".bias");
    ASSERT_EQ(ln2.outputs[0]->uses.size(), 1u);
    const Node &up = *ln2.outputs[0]->uses[0].user;
    EXPECT_EQ(up.modulePath, fmt::format("blocks.{}.up", block));
    EXPECT_EQ(up.index, ln2.index + 1);
  }
  for (bool train : {false, true}) {
    graphlint::Setup setup;
    setup.kernels = Kernels::Cpu;
    setup.train = train;
    setup.optimizer = Optimizer::Adam;
    AnalysisContext ctx(**m, setup);
    const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
    EXPECT_EQ(sum.paramsBytes, 2816u * 4);
    uint64_t resident = sum.paramsBytes + sum.optimizerBytes + sum.inputsBytes;
    EXPECT_EQ(sum.peakAllocatedBytes - resident, train ? 23104u : 7424u) << (train ? "training" : "inference");
  }
}

// dynamo_merges_model.py's EmptyCat (eval, batch 2): `torch.cat([q_rot * 2
// + 1, q_pass])` with an empty q_pass, which the optimizer removes. Eager's
// cat copies the rotated query into a contiguous tensor, so the attention's
// output is contiguous and its transpose back copies. Measured with
// validation/memory_matrix.py's measure() on torch 2.13: 5,120 bytes beyond the
// resident states (4,100 predicted before the cat was restored; the 4 more
// are a folded scalar).
TEST(DynamoOnnx, ACatTheOptimizerRemovedStillCopies) {
  auto m = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_empty_cat.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  const Graph &g = *(*m)->graph;
  const Node *cat = nullptr;
  for (const auto &n : g.nodes())
    if (n->metadataValue(kRestoredCopy))
      cat = n.get();
  ASSERT_NE(cat, nullptr);
  EXPECT_EQ(cat->opType, "Concat");
  ASSERT_EQ(cat->inputs.size(), 1u);
  EXPECT_EQ(cat->inputs[0]->producer->opType, "Add") << "q_rot * 2 + 1";
  EXPECT_EQ(cat->inputs[0]->uses.size(), 1u) << "the sum is a temporary of the cat's statement";
  EXPECT_EQ(cat->index, cat->inputs[0]->producer->index + 1);
  EXPECT_EQ(cat->outputs[0]->name, "cat");
  EXPECT_GE(cat->outputs[0]->uses.size(), 1u);
  graphlint::Setup setup;
  setup.kernels = Kernels::Cpu;
  AnalysisContext ctx(**m, setup);
  const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
  EXPECT_EQ(sum.peakAllocatedBytes - sum.paramsBytes - sum.inputsBytes, 5124u);
}


// dynamo_bert_mask_b{2,8}.onnx (make_dynamo.py --masks): a one-layer
// transformers BertModel called without a padding mask. Eager's mask helper
// returns None; torch.export builds the bidirectional mask (`kv_index >= 0`
// everywhere, so every element 0) and the optimizer folds it: at batch 2
// into a float initializer `where` [2, 1, 64, 64] that the scores' Add
// reads, at batch 8 only its bool condition `expand_2`, which a Where
// reads. Both payloads are over the 1 KiB the importer keeps, so their
// bytes are read back. Eager builds neither the mask nor scores + mask.
TEST(DynamoOnnx, AnAttentionMaskEagerSkipsIsNeitherBuiltNorAdded) {
  for (int batch : {2, 8}) {
    SCOPED_TRACE(batch);
    auto m = importModelFile(sourcePath(fmt::format("tests/fixtures/dynamo/dynamo_bert_mask_b{}.onnx", batch)), {});
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    const Graph &g = *(*m)->graph;
    const Value *mask = nullptr;
    const Node *scoresPlusMask = nullptr;
    for (const auto &n : g.nodes())
      for (const Value *in : n->inputs)
        if (n->opType == "Add" && in && in->name == "where") {
          mask = in;
          scoresPlusMask = n.get();
        }
    ASSERT_NE(scoresPlusMask, nullptr);
    if (batch == 2) {
      ASSERT_EQ(mask->kind, Value::Kind::Param);
      EXPECT_TRUE(mask->param->computed);
      EXPECT_EQ(mask->param->tensor.uniformByte, std::optional<uint8_t>(0));
    } else {
      ASSERT_NE(mask->producer, nullptr);
      EXPECT_EQ(mask->producer->opType, "Where");
      const Value *cond = mask->producer->inputs[0];
      EXPECT_EQ(cond->param->tensor.uniformByte, std::optional<uint8_t>(1)) << "every element true";
    }
    EXPECT_TRUE(isAllPassMask(mask));
    SkippedMaskAdd skipped = skippedMaskAdd(*scoresPlusMask);
    EXPECT_EQ(skipped.mask, mask);
    EXPECT_EQ(skipped.kept, scoresPlusMask->inputs[0]);
    graphlint::Setup setup;
    AnalysisContext ctx(**m, setup);
    const MemoryPlan &plan = ctx.get<MemoryPlan>();
    for (const MemoryPlan::Contributor &c : plan.atPeak()) {
      EXPECT_NE(c.value, mask);
      EXPECT_NE(c.value, scoresPlusMask->outputs[0]) << "the add returns the scores themselves";
    }
    // The peak is at the softmax, where eager holds the scaled scores and
    // the probabilities: 2 x [b, 2 heads, 64, 64] fp32, not the mask too.
    int64_t scores = batch * 2 * 64 * 64 * 4;
    uint64_t big = 0;
    for (const MemoryPlan::Contributor &c : plan.atPeak())
      if (c.kind == MemoryKind::Activation && c.bytes >= static_cast<uint64_t>(scores) / 2)
        big += c.bytes;
    EXPECT_EQ(big, 2u * static_cast<uint64_t>(scores));
  }
}


// dynamo_llama_causal_b{2,8}.onnx (make_dynamo.py --causal): a one-layer
// transformers LlamaModel with SDPA attention, 2 query heads over 1
// key/value head, no padding mask. Eager passes is_causal=True and
// enable_gqa=True; torch.export builds the causal mask and repeat_kv copies
// the value head (`view_4`). The optimizer folds the additive mask into a
// float initializer at batch 2; at batch 8 a Where reads the folded bool
// terms. The importer reads those payloads back (TensorLiteral::causalMask),
// and the plan allocates neither the mask nor the copy.
TEST(DynamoOnnx, ACausalMaskAndAHeadRepeatEagerSkipsAreNotAllocated) {
  for (int batch : {2, 8}) {
    SCOPED_TRACE(batch);
    auto m = importModelFile(sourcePath(fmt::format("tests/fixtures/dynamo/dynamo_llama_causal_b{}.onnx", batch)), {});
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    const Graph &g = *(*m)->graph;
    const Value *mask = nullptr, *repeat = nullptr;
    for (const auto &n : g.nodes()) {
      if (n->opType == "Add" && decomposedAttentionCall(*n) && n->inputs.size() == 2)
        mask = n->inputs[1];
      for (const Value *o : n->outputs)
        if (o && o->name == "view_4")
          repeat = o;
    }
    ASSERT_NE(mask, nullptr);
    ASSERT_NE(repeat, nullptr);
    EXPECT_TRUE(isCausalMask(mask));
    if (batch == 2) {
      ASSERT_EQ(mask->kind, Value::Kind::Param);
      EXPECT_TRUE(mask->param->tensor.causalMask) << "read back from the stripped payload";
    }
    graphlint::Setup setup;
    setup.kernels = Kernels::Cpu;
    AnalysisContext ctx(**m, setup);
    const MemoryPlan &plan = ctx.get<MemoryPlan>();
    bool sawMask = false, sawRepeat = false;
    for (const MemoryPlan::Contributor &c : plan.atPeak()) {
      sawMask |= c.value == mask;
      sawRepeat |= c.value == repeat;
    }
    EXPECT_FALSE(sawMask);
    EXPECT_FALSE(sawRepeat);
    // The same file with the mask's fold read as unknown keeps both: more
    // is live at the attention (the model's peak is elsewhere).
    if (batch == 2) {
      std::set<std::string> attention;
      for (const auto &n : g.nodes())
        if (decomposedAttentionCall(*n))
          attention.insert(n->name);
      auto liveAtAttention = [&](const MemorySummary &sum) {
        uint64_t most = 0;
        for (const MemorySummary::Point &p : sum.timeline)
          if (attention.count(p.node))
            most = std::max(most, p.liveBytes);
        return most;
      };
      uint64_t skipped = liveAtAttention(plan.summary());
      const_cast<Value *>(mask)->param->tensor.causalMask = false;
      AnalysisContext unknown(**m, setup);
      EXPECT_GT(liveAtAttention(unknown.get<MemoryPlan>().summary()), skipped);
    }
  }
}

// dynamo_sdpa.onnx (make_dynamo.py, dynamo_sdpa_model.py): the exporter
// writes F.scaled_dot_product_attention as its math decomposition (q and k
// scaled, MatMul, Softmax, MatMul). In inference eager runs one fused flash
// kernel: its [2, 4, 64, 64] scores and probabilities (128 KiB each) never
// exist; it writes its output as [b, s, h, d], so the caller's transpose
// and reshape back to [b, s, h * d] are views. A training step keeps the
// decomposition (docs/memory.md).
TEST(DynamoOnnx, ScaledDotProductAttentionRunsAsOneKernel) {
  auto m = importModelFile(sourcePath("tests/fixtures/dynamo/dynamo_sdpa.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  const uint64_t scores = 2 * 4 * 64 * 64 * 4;
  auto largest = [&](const graphlint::Setup &setup) {
    AnalysisContext ctx(**m, setup);
    uint64_t big = 0;
    for (const MemoryPlan::Contributor &c : ctx.get<MemoryPlan>().atPeak())
      big = std::max(big, c.bytes);
    return std::make_pair(big, ctx.get<MemoryPlan>().summary());
  };
  graphlint::Setup inference;
  inference.kernels = Kernels::Cpu;
  auto [big, sum] = largest(inference);
  EXPECT_LT(big, scores) << "no scores nor probabilities";
  // The peak, at the output projection: x (16 KiB, the caller's), the
  // packed projection (48 KiB, which the q, k, v locals view), the kernel's
  // output `o` (16 KiB) and the projection's output (16 KiB). The reshape
  // of o's transpose is a view: out's input is no copy.
  EXPECT_EQ(sum.peakAllocatedBytes - sum.paramsBytes, 16384u + 49152u + 16384u + 16384u);
  bool caveat = false;
  for (const std::string &c : sum.caveats)
    caveat |= c.find("decomposed each into MatMul and Softmax, costed as the fused kernel") != std::string::npos;
  EXPECT_TRUE(caveat);
  graphlint::Setup training = inference;
  training.train = true;
  training.optimizer = Optimizer::Adam;
  auto [trainBig, trainSum] = largest(training);
  EXPECT_LT(trainBig, scores) << "the fused kernel in training too: no scores nor probabilities saved";
  EXPECT_GT(trainSum.activationsBytes, 0u);
}


// pt2_models.AutocastMlp (tests/fixtures/pt2) through the dynamo exporter in
// train(): a torch.no_grad and a torch.autocast region, whose nodes the
// exporter gives neither the model's frames nor module scopes (only the
// generated code's frame), and whose weight casts its optimizer folds into
// bfloat16 initializers. The weights are float32 parameters again, each
// with its Cast; the plan says what it cannot see. Measured with
// validation/memory_matrix.py's measure() on torch 2.13 (batch 4), an Adam step:
// 21,760 bytes beyond the resident states before the optimizer step.
TEST(DynamoOnnx, AnAutocastModelsFoldedWeightCastsAreCastsAgain) {
  auto m = importModelFile(sourcePath("tests/fixtures/pt2/autocast_mlp.onnx"), {});
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  const Graph &g = *(*m)->graph;
  for (const char *name : {"fc1.weight", "fc2.weight"}) {
    const Value *w = g.findLocal(name);
    ASSERT_NE(w, nullptr) << name;
    EXPECT_EQ(w->kind, Value::Kind::Param);
    EXPECT_EQ(w->type.dtype, DType::Float) << name;
    ASSERT_EQ(w->uses.size(), 1u) << name;
    const Node &cast = *w->uses[0].user;
    EXPECT_EQ(cast.opType, "Cast");
    ASSERT_NE(cast.metadataValue(kRestoredCopy), nullptr);
    EXPECT_EQ(*cast.metadataValue(kRestoredCopy), name);
    EXPECT_EQ(cast.outputs[0]->type.dtype, DType::BFloat16);
  }
  graphlint::Setup setup;
  setup.kernels = Kernels::Cpu;
  setup.train = true;
  setup.optimizer = Optimizer::Adam;
  AnalysisContext ctx(**m, setup);
  const MemorySummary &sum = ctx.get<MemoryPlan>().summary();
  uint64_t resident = sum.paramsBytes + sum.optimizerBytes + sum.inputsBytes;
  EXPECT_EQ(test::forwardBackwardPeak(sum) - resident, 21760u);
  EXPECT_TRUE(llvm::any_of(sum.caveats, [](const std::string &c) {
    return c.find("9 nodes of this file carry neither a frame") != std::string::npos;
  }));
}

}  // namespace
}  // namespace graphlint
