// GL101 dtype-mismatch, GL102 redundant-cast, GL111 cross-device and GL112
// host-sync: each fires on the construct a user would recognise (an f32 island
// in an f16 model, a cast round trip, a tensor left on the CPU, a nonzero) and
// stays quiet on the look-alikes (input/output conversions, deliberate
// truncation, CPU scalars, shape arithmetic) and on real fp32 models.
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/analyses/FusionPlan.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace graphlint;
using namespace graphlint::test;

namespace {

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

std::string allNotes(const Diagnostic &d) {
  std::string s;
  for (const Note &n : d.notes)
    s += n.message + "\n";
  return s;
}

LintOptions withBackend(FusionBackend b) {
  LintOptions o;
  o.setup.backend = b;
  return o;
}

// The fusion group the planner puts node #index of the main graph in.
unsigned groupOfNode(const std::string &text, unsigned index, FusionBackend backend) {
  auto m = importText(text);
  FusionPlan plan(*m, backend);
  return plan.groupOf(*m->graph->nodes()[index]).id;
}

unsigned groupOfNode(const Model &m, const Node &n, FusionBackend backend) {
  FusionPlan plan(m, backend);
  return plan.groupOf(n).id;
}

// ---- GL101 dtype-mismatch -------------------------------------------------

// A fp16 block with the classic fp32 Softmax island between two MatMuls.
const char *kIsland = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  island (float16[2, 64] x, float16[64, 64] w) => (float16[2, 64] y) {
    h = MatMul(x, w)
    r = Add(h, x)
    r32 = Cast<to = 1>(r)
    s32 = Softmax<axis = -1>(r32)
    s16 = Cast<to = 10>(s32)
    y = MatMul(s16, w)
  })";

TEST(DtypeMismatch, ReportsBothEndsOfAMixedPrecisionIsland) {
  FileReport r = lintText(kIsland);
  auto d = withCode(r, "GL101");
  ASSERT_EQ(d.size(), 2u);
  // The upcast, node #3 (index 2).
  EXPECT_EQ(d[0]->location.opType, "Cast");
  EXPECT_EQ(d[0]->location.nodeIndex, 2u);
  EXPECT_EQ(d[0]->reason, "dtype_mismatch");
  EXPECT_EQ(d[0]->fusionId, groupOfNode(kIsland, 2, FusionBackend::Inductor));
  EXPECT_TRUE(has(d[0]->message, "changes precision f16 -> f32 between compute ops")) << d[0]->message;
  EXPECT_TRUE(has(d[0]->message, "'r' (f16) from #2 (Add)")) << d[0]->message;
  EXPECT_TRUE(has(d[0]->message, "'r32' (f32) read by #4 (Softmax)")) << d[0]->message;
  std::string notes = allNotes(*d[0]);
  EXPECT_TRUE(has(notes, "the f32 island closes at #5 (Cast), which converts back to f16")) << notes;
  EXPECT_TRUE(has(notes, "inductor keeps the cast inside fusion group")) << notes;
  EXPECT_TRUE(has(notes, "2x the bytes")) << notes;
  EXPECT_TRUE(has(notes, "#4 (Softmax) runs in f16 with f32 accumulation")) << notes;
  // The downcast, node #5 (index 4).
  EXPECT_EQ(d[1]->location.nodeIndex, 4u);
  EXPECT_TRUE(has(d[1]->message, "changes precision f32 -> f16")) << d[1]->message;
  EXPECT_TRUE(has(allNotes(*d[1]), "closes the f32 island opened by #3 (Cast)")) << allNotes(*d[1]);
  EXPECT_EQ(d[1]->fusionId, groupOfNode(kIsland, 4, FusionBackend::Inductor));
}

TEST(DtypeMismatch, TensorRtSplitsTheGroupAtTheCast) {
  FileReport r = lintText(kIsland, withBackend(FusionBackend::TensorRT));
  auto d = withCode(r, "GL101");
  ASSERT_EQ(d.size(), 2u);
  unsigned castGroup = groupOfNode(kIsland, 2, FusionBackend::TensorRT);
  unsigned addGroup = groupOfNode(kIsland, 1, FusionBackend::TensorRT);
  EXPECT_NE(castGroup, addGroup) << "tensorrt does not fuse the precision change";
  EXPECT_EQ(d[0]->fusionId, castGroup);
  EXPECT_TRUE(has(allNotes(*d[0]), "tensorrt: the fusion group splits here")) << allNotes(*d[0]);
  EXPECT_TRUE(has(allNotes(*d[0]), "(f16 -> f32)")) << allNotes(*d[0]);
}

TEST(DtypeMismatch, BoundaryConversionsAreNotIslands) {
  // Input, weight and output conversions, and int<->float casts.
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    edges (float16[2, 8] x, float16[8] w16, int64[2, 8] ids) => (float[2, 8] y, int64[2, 8] idx, float16[2, 8] z) {
      x32 = Cast<to = 1>(x)
      w32 = Cast<to = 1>(w16)
      s = Softmax<axis = -1>(x32)
      t = Add(s, w32)
      f = Cast<to = 1>(ids)
      u = Mul(t, f)
      y = Relu(u)
      idx = Cast<to = 7>(u)
      c = Constant<value = float[8] {1, 2, 3, 4, 5, 6, 7, 8}>()
      c16 = Cast<to = 10>(c)
      z = Mul(x, c16)
    })");
  for (const Diagnostic *d : withCode(r, "GL101"))
    ADD_FAILURE() << d->message;
}

TEST(DtypeMismatch, ImplicitPromotionInAnFxGraph) {
  IrBuilder b;
  b.model().format = ModelFormat::Fx;
  Value *x = b.input("x", tensorOf(DType::Float16, {2, 4}));
  Value *bias = b.param("bias", tensorOf(DType::Float, {2, 4}));
  Value *scale = b.input("scale", tensorOf(DType::Float, {}));
  Node *relu = b.node("aten::relu", {x}, {"h"}, {tensorOf(DType::Float16, {2, 4})});
  Node *add = b.node("aten::add", {relu->outputs[0], bias}, {"a"}, {tensorOf(DType::Float, {2, 4})});
  Node *mul = b.node("aten::mul", {relu->outputs[0], scale}, {"m"}, {tensorOf(DType::Float16, {2, 4})});
  b.output(add->outputs[0]);
  b.output(mul->outputs[0]);
  auto m = b.take();
  FileReport r = lintModel(*m, {});
  auto d = withCode(r, "GL101");
  ASSERT_EQ(d.size(), 1u) << "a 0-d f32 tensor does not promote (PyTorch scalar rule)";
  EXPECT_EQ(d[0]->location.nodeName, "a");
  EXPECT_EQ(d[0]->reason, "dtype_mismatch");
  EXPECT_EQ(d[0]->fusionId, groupOfNode(*m, *add, FusionBackend::Inductor));
  EXPECT_TRUE(has(d[0]->message, "reads 'h' (f16) and 'bias' (f32)")) << d[0]->message;
  EXPECT_TRUE(has(d[0]->message, "implicit promotion to f32")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "keep both operands in one precision")) << allNotes(*d[0]);
  (void)mul;
}

TEST(DtypeMismatch, OnnxOpsWithHeterogeneousTypeConstraintsAreNotPromotions) {
  // Dropout's ratio is f32 while its data is f16: the schema says so.
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    drop (float16[2, 8] x) => (float16[2, 8] y) {
      h = Relu(x)
      ratio = Constant<value = float {0.1}>()
      y = Dropout(h, ratio)
    })");
  EXPECT_TRUE(withCode(r, "GL101").empty());
}

// ---- GL102 redundant-cast -------------------------------------------------

TEST(RedundantCast, RoundTripThroughAWiderFloat) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    rt (float16[2, 8] x) => (float16[2, 8] y) {
      h = Relu(x)
      a = Cast<to = 1>(h)
      b = Cast<to = 10>(a)
      y = Relu(b)
    })");
  auto d = withCode(r, "GL102");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.nodeIndex, 2u) << "reported at the cast that closes the chain";
  EXPECT_EQ(d[0]->severity, Severity::Warning);
  EXPECT_TRUE(has(d[0]->message, "cast chain f16 -> f32 -> f16 returns 'h' to its source dtype f16 without "
                                 "changing a value")) << d[0]->message;
  EXPECT_TRUE(has(d[0]->message, "#2 (Cast), #3 (Cast) are redundant")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "remove the casts and read 'h' directly")) << allNotes(*d[0]);
  EXPECT_TRUE(withCode(r, "GL101").empty()) << "a round trip is GL102's finding, not an island";
}

TEST(RedundantCast, RoundTripAcrossViewsAndIntegers) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    rt (float16[2, 8] x, int32[2, 8] i) => (float16[16] y, int32[2, 8] j) {
      h = Relu(x)
      a = Cast<to = 1>(h)
      shape = Constant<value = int64[1] {16}>()
      v = Reshape(a, shape)
      y = Cast<to = 10>(v)
      k = Abs(i)
      w = Cast<to = 7>(k)
      j = Cast<to = 6>(w)
    })");
  auto d = withCode(r, "GL102");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_TRUE(has(d[0]->message, "f16 -> f32 -> f16 (with 1 view op(s) between)")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "the view ops between them work on 'h' as it is")) << allNotes(*d[0]);
  EXPECT_TRUE(has(d[1]->message, "i32 -> i64 -> i32")) << d[1]->message;
}

TEST(RedundantCast, CastToTheSameDtype) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    same (float[2, 8] x) => (float[2, 8] y) {
      h = Relu(x)
      y = Cast<to = 1>(h)
    })");
  auto d = withCode(r, "GL102");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.nodeIndex, 1u);
  EXPECT_TRUE(has(d[0]->message, "converts 'h' to f32, the dtype it already has")) << d[0]->message;
}

TEST(RedundantCast, LossyFloatRoundTripSaysItRounds) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    lossy (float[2, 8] x) => (float[2, 8] y) {
      h = Relu(x)
      a = Cast<to = 16>(h)
      b = Cast<to = 1>(a)
      y = Relu(b)
    })");
  auto d = withCode(r, "GL102");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_TRUE(has(d[0]->message, "f32 -> bf16 -> f32 returns 'h' to its source dtype f32, only rounding it to bf16 "
                                 "precision")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "if the rounding is not intended")) << allNotes(*d[0]);
}

TEST(RedundantCast, DeliberateTruncationShapeArithmeticAndScalarsAreQuiet) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    quiet (float[2, 8] x) => (float[2, 8] y, int64[2] s, bool[] c) {
      h = Relu(x)
      t = Cast<to = 7>(h)
      y = Cast<to = 1>(t)
      sh = Shape(x)
      s = Cast<to = 7>(sh)
      total = ReduceSum<keepdims = 0>(h)
      zero = Constant<value = float {0}>()
      g = Greater(total, zero)
      c = Cast<to = 9>(g)
    })");
  for (const Diagnostic *d : withCode(r, "GL102"))
    ADD_FAILURE() << d->message;
}

// ---- GL111 cross-device ---------------------------------------------------

Device cuda0() { return {Device::Kind::CUDA, 0}; }
Device cpu() { return {Device::Kind::CPU, -1}; }

TEST(CrossDevice, OpReadingTensorsOnTwoDevices) {
  IrBuilder b;
  b.model().format = ModelFormat::Fx;
  Value *x = b.input("x", f32({8, 16}));
  x->device = cuda0();
  Value *mask = b.param("mask", f32({8, 16}));
  mask->device = cpu();
  Value *two = b.input("two", f32({}));
  two->device = cpu();
  Node *relu = b.node("aten::relu", {x}, {"h"}, {f32({8, 16})});
  relu->outputs[0]->device = cuda0();
  Node *mul = b.node("aten::mul", {relu->outputs[0], two}, {"m"}, {f32({8, 16})});
  mul->outputs[0]->device = cuda0();
  Node *add = b.node("aten::add", {mul->outputs[0], mask}, {"a"}, {f32({8, 16})});
  add->outputs[0]->device = cuda0();
  b.output(add->outputs[0]);
  auto m = b.take();
  FileReport r = lintModel(*m, {});
  auto d = withCode(r, "GL111");
  ASSERT_EQ(d.size(), 1u) << "a CPU scalar joins a CUDA op without a copy";
  EXPECT_EQ(d[0]->location.nodeName, "a");
  EXPECT_EQ(d[0]->reason, "cross_device");
  EXPECT_EQ(d[0]->fusionId, groupOfNode(*m, *add, FusionBackend::Inductor));
  EXPECT_TRUE(has(d[0]->message, "reads tensors on different devices: 'm' (f32[8,16], 512 B) on cuda:0 and 'mask' "
                                 "(f32[8,16], 512 B) on cpu")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "create or move 'mask' on cuda:0 once")) << allNotes(*d[0]);
}

TEST(CrossDevice, CopyBetweenDevices) {
  IrBuilder b;
  b.model().format = ModelFormat::Fx;
  Value *x = b.input("x", f32({1024, 1024}));
  x->device = cuda0();
  Node *sum = b.node("aten::sum", {x}, {"s"}, {f32({1024})});
  sum->outputs[0]->device = cuda0();
  Node *copy = b.node("aten::_to_copy", {sum->outputs[0]}, {"s_cpu"}, {f32({1024})});
  copy->outputs[0]->device = cpu();
  Node *keep = b.node("aten::_to_copy", {x}, {"x2"}, {f32({1024, 1024})});
  keep->outputs[0]->device = cuda0();
  b.output(copy->outputs[0]);
  b.output(keep->outputs[0]);
  auto m = b.take();
  FileReport r = lintModel(*m, {});
  auto d = withCode(r, "GL111");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.nodeName, "s_cpu");
  EXPECT_EQ(d[0]->reason, "cross_device");
  EXPECT_EQ(d[0]->fusionId, groupOfNode(*m, *copy, FusionBackend::Inductor));
  EXPECT_TRUE(has(d[0]->message, "copies 's' (f32[1024], 4.00 KiB) from cuda:0 to cpu")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "waits for the GPU")) << allNotes(*d[0]);
}

TEST(CrossDevice, OrtMemcpyToHost) {
  const char *text = R"(
    <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
    memcpy (float[2, 1000] x) => (int64[2, 1] y) {
      h = Relu(x)
      k = Constant<value = int64[1] {1}>()
      c = com.microsoft.MemcpyToHost(h)
      vals, y = TopK(c, k)
    })";
  FileReport r = lintText(text);
  auto d = withCode(r, "GL111");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.opType, "com.microsoft::MemcpyToHost");
  EXPECT_EQ(d[0]->reason, "cross_device");
  auto m = importText(text);
  const Node *memcpy = nullptr;
  for (const auto &n : m->graph->nodes())
    if (n->opType == "MemcpyToHost")
      memcpy = n.get();
  ASSERT_TRUE(memcpy);
  EXPECT_EQ(d[0]->fusionId, groupOfNode(*m, *memcpy, FusionBackend::Inductor));
  EXPECT_TRUE(has(d[0]->message, "copies 'h' (f32[2,1000], 7.81 KiB) from GPU memory to the host")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "(TopK) reads the copy on the host")) << allNotes(*d[0]);
}

TEST(CrossDevice, OneDeviceAndOnnxWithoutDevicesAreQuiet) {
  IrBuilder b;
  b.model().format = ModelFormat::Fx;
  Value *x = b.input("x", f32({4}));
  x->device = cuda0();
  Value *w = b.param("w", f32({4}));
  w->device = cuda0();
  Node *add = b.node("aten::add", {x, w}, {"a"}, {f32({4})});
  add->outputs[0]->device = cuda0();
  b.output(add->outputs[0]);
  auto m = b.take();
  EXPECT_TRUE(withCode(lintModel(*m, {}), "GL111").empty());
  EXPECT_TRUE(withCode(lintText(kIsland), "GL111").empty());
}

// ---- GL112 host-sync ------------------------------------------------------

TEST(HostSync, NonZeroOnComputedValues) {
  const char *text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    nz (float[N, 4] x, float[1] t) => (int64[2, M] idx) {
      m = Greater(x, t)
      idx = NonZero(m)
    })";
  FileReport r = lintText(text);
  auto d = withCode(r, "GL112");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.opType, "NonZero");
  EXPECT_EQ(d[0]->location.nodeIndex, 1u);
  EXPECT_EQ(d[0]->reason, "host_sync");
  EXPECT_EQ(d[0]->fusionId, groupOfNode(text, 1, FusionBackend::Inductor));
  EXPECT_TRUE(has(d[0]->message, "#2 (NonZero) forces a device-to-host sync: the size of its output 'idx' depends "
                                 "on the values of 'm' (bool[N,4])")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "torch.where(mask, x, 0)")) << allNotes(*d[0]);
}

TEST(HostSync, UniqueCompressAndNmsButNotConstantFolding) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    syncs (float[8] x, bool[8] keep, float[1, 8, 4] boxes, float[1, 1, 8] scores) => (float[U] u, float[C] c,
                                                                                      int64[S, 3] sel, int64[2, Z] z) {
      h = Relu(x)
      u = Unique(h)
      c = Compress<axis = 0>(h, keep)
      sel = NonMaxSuppression(boxes, scores)
      k = Constant<value = int64[2, 2] {1, 0, 0, 1}>()
      z = NonZero(k)
    })");
  auto d = withCode(r, "GL112");
  ASSERT_EQ(d.size(), 3u) << "NonZero of a constant is evaluated on the host";
  EXPECT_EQ(d[0]->location.opType, "Unique");
  EXPECT_EQ(d[1]->location.opType, "Compress");
  EXPECT_EQ(d[2]->location.opType, "NonMaxSuppression");
  EXPECT_TRUE(has(allNotes(*d[2]), "static max_output_boxes_per_class")) << allNotes(*d[2]);
}

TEST(HostSync, AtenItemNonzeroAndMaskedSelectByName) {
  IrBuilder b;
  b.model().format = ModelFormat::Fx;
  Value *x = b.input("x", f32({16}));
  Node *sum = b.node("aten::sum", {x}, {"s"}, {f32({})});
  Node *item = b.node("aten::relu", {sum->outputs[0]}, {"v"});
  item->domain = "";
  item->opType = "aten::_local_scalar_dense";  // the FX frontend's spelling, no domain split
  Node *nz = b.node("aten.nonzero.default", {x}, {"i"}, {tensorOf(DType::Int64, {})});
  Node *ms = b.node("aten::masked_select", {x, x}, {"sel"}, {f32({})});
  Node *relu = b.node("aten::relu", {x}, {"r"}, {f32({16})});
  b.output(item->outputs[0]);
  b.output(nz->outputs[0]);
  b.output(ms->outputs[0]);
  b.output(relu->outputs[0]);
  auto m = b.take();
  FileReport r = lintModel(*m, {});
  auto d = withCode(r, "GL112");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0]->location.nodeName, "v");
  EXPECT_TRUE(has(d[0]->message, "copies a value of 's' (f32[]) to the host")) << d[0]->message;
  EXPECT_TRUE(has(allNotes(*d[0]), "keep the value on the device")) << allNotes(*d[0]);
  EXPECT_EQ(d[0]->fusionId, groupOfNode(*m, *item, FusionBackend::Inductor));
  EXPECT_EQ(d[1]->location.nodeName, "i");
  EXPECT_TRUE(has(d[1]->message, "the size of its output 'i' depends on the values of 'x'")) << d[1]->message;
  EXPECT_EQ(d[2]->location.nodeName, "sel");
  for (const Diagnostic *x : d)
    EXPECT_EQ(x->reason, "host_sync");
}

// ---- Real models ----------------------------------------------------------

std::vector<std::string> realModels() {
  std::vector<std::string> paths;
  for (const char *name : {"resnet18", "mobilenet_v3_small", "gpt_tiny", "control_flow"})
    paths.push_back(sourcePath(std::string("models/") + name + ".onnx"));
  std::string light = sharedPath("corpus/onnx-backend/light");
  if (std::filesystem::is_directory(light))
    for (const auto &e : std::filesystem::directory_iterator(light))
      if (e.path().extension() == ".onnx")
        paths.push_back(e.path().string());
  return paths;
}

TEST(DtypeDeviceRules, RealFp32ModelsAreClean) {
  for (const std::string &path : realModels()) {
    SCOPED_TRACE(path);
    FileReport r = lintFile(path, {});
    ASSERT_FALSE(r.fatal) << r.fatalMessage;
    for (const char *code : {"GL101", "GL102", "GL111", "GL112"})
      for (const Diagnostic *d : withCode(r, code))
        ADD_FAILURE() << code << " at " << d->location.nodeName << ": " << d->message;
  }
}

TEST(DtypeDeviceRules, OnnxBackendNonZeroExampleSyncs) {
  std::string path = sharedPath("corpus/onnx-backend/node/test_nonzero_example/model.onnx");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared corpus not available";
  FileReport r = lintFile(path, {});
  auto d = withCode(r, "GL112");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.opType, "NonZero");
  EXPECT_EQ(d[0]->reason, "host_sync");
}

}  // namespace
