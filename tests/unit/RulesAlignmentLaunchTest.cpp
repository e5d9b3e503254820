// GL141 tensor-core-alignment, GL142 launch-bound and the hardware profiles
// they read (built-in table, data/hardware.yaml, roofline-lite estimates).
#include "IrBuilder.h"
#include "TestSupport.h"

#include "graphlint/import/Importer.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/analyses/OpFlops.h"

#include <gtest/gtest.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

#define EXPECT_HAS(text, part) EXPECT_TRUE(contains(text, part)) << "missing '" << (part) << "' in: " << (text)

LintOptions onTarget(const std::string &target) {
  LintOptions o;
  o.setup.target = target;
  return o;
}

// The fusion group id a diagnostic should carry: the plan's group of the node.
unsigned groupIdOf(const std::string &text, std::optional<unsigned> nodeIndex) {
  auto m = importText(text);
  FusionPlan plan(*m, FusionBackend::Inductor);
  if (!nodeIndex || *nodeIndex >= m->graph->nodes().size()) {
    ADD_FAILURE() << "no such node";
    return ~0u;
  }
  return plan.groupOf(*m->graph->nodes()[*nodeIndex]).id;
}

}  // namespace

// ---- hardware profiles ----------------------------------------------------

TEST(HardwareProfile, BuiltinTableHasTheBriefsGpus) {
  HardwareCatalog c = HardwareCatalog::builtin();
  for (const char *name : {"V100", "A100-40GB", "A100-80GB", "H100-SXM", "H100-96GB-HBM2e", "H200", "L4", "RTX-4090"})
    EXPECT_TRUE(c.find(name)) << name;
  EXPECT_EQ(c.find("h100")->name, "H100-SXM");  // the 96GB HBM2e part never takes the plain name
  const HardwareProfile &h100 = *c.find("H100-SXM");
  EXPECT_EQ(h100.smCount, 132u);
  EXPECT_EQ(h100.computeCapability, 90u);
  EXPECT_DOUBLE_EQ(h100.memoryBytes, 80.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(h100.memoryBandwidth, 3.35e12);
  EXPECT_DOUBLE_EQ(h100.peakFor(MathPrecision::BF16), 989.4e12);
  EXPECT_DOUBLE_EQ(h100.peakFor(MathPrecision::FP8), 1978.9e12);
  EXPECT_DOUBLE_EQ(h100.launchOverhead, 4e-6);
  EXPECT_TRUE(h100.supportsTf32());
  // Volta: fp16 tensor cores, no TF32, no bf16.
  const HardwareProfile &v100 = *c.find("V100");
  EXPECT_FALSE(v100.supportsTf32());
  EXPECT_FALSE(v100.supports(MathPrecision::BF16));
  EXPECT_DOUBLE_EQ(v100.peakFor(MathPrecision::FP16), 125e12);
  // The datasheets' sparse tensor rates are halved to the dense ones.
  const HardwareProfile &b200 = *c.find("hgx-b200"), &pcie = *c.find("H100-PCIe"), &mi = *c.find("mi300x");
  EXPECT_DOUBLE_EQ(b200.peakFor(MathPrecision::BF16), 2250e12);
  EXPECT_DOUBLE_EQ(b200.memoryBytes, 180.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(pcie.peakFor(MathPrecision::FP8), 1513e12);
  EXPECT_DOUBLE_EQ(pcie.memoryBandwidth, 2e12);
  EXPECT_DOUBLE_EQ(mi.peakFor(MathPrecision::BF16), 1307.4e12);
  EXPECT_EQ(mi.computeCapability, 0u);  // not a CUDA device
}

TEST(HardwareProfile, LookupIsCaseInsensitiveWithAliases) {
  HardwareCatalog c = HardwareCatalog::builtin();
  EXPECT_EQ(c.find("h100")->name, "H100-SXM");
  EXPECT_EQ(c.find("H100_SXM")->name, "H100-SXM");
  EXPECT_EQ(c.find("h200")->name, "H200");
  // Ambiguous "a100" names the smaller-memory part, so fit checks stay safe.
  EXPECT_EQ(c.find("A100")->name, "A100-40GB");
  EXPECT_EQ(c.find("a100-80gb")->name, "A100-80GB");
  EXPECT_EQ(c.find("rtx 4090")->name, "RTX-4090");
  EXPECT_EQ(c.find("4090")->name, "RTX-4090");
  EXPECT_EQ(c.find("tpu-v5"), nullptr);
}

TEST(HardwareProfile, DefaultTargetResolvesAndUnknownOnesListTheNames) {
  auto ok = resolveHardwareTarget(graphlint::Setup{}.target);
  ASSERT_TRUE(bool(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->name, "H100-SXM");
  auto bad = resolveHardwareTarget("TPU-v5p");
  ASSERT_FALSE(bool(bad));
  std::string msg = llvm::toString(bad.takeError());
  EXPECT_HAS(msg, "unknown target 'TPU-v5p'");
  EXPECT_HAS(msg, "H100-SXM");
}

// The shipped data file and the compiled-in table must say the same thing.
TEST(HardwareProfile, ShippedYamlMatchesBuiltinTable) {
  std::string text = readFile(sourcePath("data/hardware.yaml"));
  auto parsed = parseHardwareYaml(text, "hardware.yaml");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  HardwareCatalog builtin = HardwareCatalog::builtin();
  ASSERT_EQ(parsed->size(), builtin.profiles().size());
  for (size_t i = 0; i < parsed->size(); ++i) {
    const HardwareProfile &y = (*parsed)[i], &b = builtin.profiles()[i];
    SCOPED_TRACE(b.name);
    EXPECT_EQ(y.name, b.name);
    EXPECT_EQ(y.aliases, b.aliases);
    EXPECT_EQ(y.description, b.description);
    EXPECT_EQ(y.architecture, b.architecture);
    EXPECT_EQ(y.computeCapability, b.computeCapability);
    EXPECT_EQ(y.smCount, b.smCount);
    EXPECT_DOUBLE_EQ(y.memoryBytes, b.memoryBytes);
    EXPECT_DOUBLE_EQ(y.memoryBandwidth, b.memoryBandwidth);
    EXPECT_DOUBLE_EQ(y.launchOverhead, b.launchOverhead);
    for (unsigned p = 0; p < kNumMathPrecisions; ++p)
      EXPECT_DOUBLE_EQ(y.peak[p], b.peak[p]) << mathPrecisionName(static_cast<MathPrecision>(p));
    EXPECT_EQ(y.source, b.source);
    EXPECT_DOUBLE_EQ(y.computeEfficiency, b.computeEfficiency);
    EXPECT_DOUBLE_EQ(y.memoryEfficiency, b.memoryEfficiency);
    EXPECT_EQ(y.intraNode, b.intraNode);
    EXPECT_EQ(y.interNode, b.interNode);
  }
  // The catalog the rules use loaded it from the source tree.
  EXPECT_TRUE(HardwareCatalog::instance().loadError().empty()) << HardwareCatalog::instance().loadError();
}

TEST(HardwareProfile, UserFileAddsAndOverridesProfiles) {
  auto parsed = parseHardwareYaml(R"(
profiles:
  - name: MI325X
    aliases: [mi325]
    compute_capability: "9.4"
    sm_count: 304
    memory_gib: 256
    memory_bandwidth_gb_per_s: 6000
    peak_tflops: { fp32: 163.4, fp16: 1307.4 }
    interconnects: { xgmi: 896 }   # a key from a newer schema: ignored
  - name: h100-sxm
    aliases: [h100]
    sm_count: 132
    memory_gib: 80
    memory_bandwidth_gb_per_s: 3000
    launch_overhead_us: 6
    peak_tflops: { fp32: 67 }
)",
                                   "user.yaml");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  HardwareCatalog c = HardwareCatalog::builtin();
  size_t builtin = c.profiles().size();
  c.merge(std::move(*parsed));
  EXPECT_EQ(c.profiles().size(), builtin + 1);  // MI325X added, h100-sxm replaced
  const HardwareProfile *mi = c.find("MI325");
  ASSERT_TRUE(mi);
  EXPECT_EQ(mi->computeCapability, 94u);
  EXPECT_DOUBLE_EQ(mi->launchOverhead, 4e-6);  // default when absent
  EXPECT_FALSE(mi->supportsTf32());
  const HardwareProfile *h = c.find("H100-SXM");
  ASSERT_TRUE(h);
  EXPECT_DOUBLE_EQ(h->memoryBandwidth, 3e12);
  EXPECT_DOUBLE_EQ(h->launchOverhead, 6e-6);
  EXPECT_EQ(c.find("h100"), h);
}

// attention_efficiency: a user file sets it on a new profile, overrides the
// built-in H100's measured 0.297, and a profile without it falls back to its
// own tensor_core_efficiency; out of (0, 1] is rejected.
TEST(HardwareProfile, UserFileSetsAndOverridesAttentionEfficiency) {
  HardwareCatalog c = HardwareCatalog::builtin();
  EXPECT_DOUBLE_EQ(c.find("H100-SXM")->attentionEfficiencyFor(MathPrecision::BF16), 0.297);
  EXPECT_DOUBLE_EQ(c.find("A100-80GB")->attentionEfficiencyFor(MathPrecision::BF16), 0.5) << "no measurement: unset";
  auto parsed = parseHardwareYaml(R"(
profiles:
  - name: MI300X
    sm_count: 304
    memory_gib: 192
    memory_bandwidth_gb_per_s: 5300
    peak_tflops: { fp32: 163.4, bf16: 1307.4 }
    attention_efficiency: 0.4
  - name: h100-sxm
    sm_count: 132
    memory_gib: 80
    memory_bandwidth_gb_per_s: 3350
    peak_tflops: { fp32: 67, bf16: 989.4 }
    attention_efficiency: 0.35
  - name: A100-80GB
    sm_count: 108
    memory_gib: 80
    memory_bandwidth_gb_per_s: 2039
    peak_tflops: { fp32: 19.5, bf16: 312 }
    tensor_core_efficiency: 0.6
)",
                                   "user.yaml");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  c.merge(std::move(*parsed));
  EXPECT_DOUBLE_EQ(c.find("MI300X")->attentionEfficiencyFor(MathPrecision::BF16), 0.4);
  EXPECT_DOUBLE_EQ(c.find("H100-SXM")->attentionEfficiencyFor(MathPrecision::BF16), 0.35);
  EXPECT_DOUBLE_EQ(c.find("A100-80GB")->attentionEfficiencyFor(MathPrecision::BF16), 0.6);
  EXPECT_DOUBLE_EQ(c.find("A100-80GB")->attentionEfficiencyFor(MathPrecision::FP32), 0.7) << "CUDA cores";

  auto bad = parseHardwareYaml("profiles:\n  - name: X\n    sm_count: 1\n    memory_gib: 1\n"
                               "    memory_bandwidth_gb_per_s: 1\n    peak_tflops: { fp32: 1 }\n"
                               "    attention_efficiency: 0\n",
                               "bad.yaml");
  ASSERT_FALSE(bool(bad));
  EXPECT_HAS(llvm::toString(bad.takeError()), "attention_efficiency must be in (0, 1]");
}

TEST(HardwareProfile, MalformedFilesSayWhereAndWhy) {
  auto missing = parseHardwareYaml("profiles:\n  - name: X\n    sm_count: 1\n", "bad.yaml");
  ASSERT_FALSE(bool(missing));
  std::string msg = llvm::toString(missing.takeError());
  EXPECT_HAS(msg, "bad.yaml");
  EXPECT_HAS(msg, "memory_gib");

  auto negative = parseHardwareYaml(
      "profiles:\n  - name: X\n    sm_count: 1\n    memory_gib: 1\n    memory_bandwidth_gb_per_s: 1\n"
      "    peak_tflops: { fp32: -1 }\n",
      "neg.yaml");
  ASSERT_FALSE(bool(negative));
  EXPECT_HAS(llvm::toString(negative.takeError()), "profile 'X'");

  auto notYaml = parseHardwareYaml("- just\n- a list\n", "list.yaml");
  EXPECT_FALSE(bool(notYaml));
  llvm::consumeError(notYaml.takeError());
}

TEST(HardwareProfile, RooflineIsTheSlowerOfMathAndMemory) {
  HardwareCatalog c = HardwareCatalog::builtin();
  const HardwareProfile &h = *c.find("H100-SXM");
  // 3.35 MB at 3.35 TB/s: 1 us, memory-bound.
  EXPECT_NEAR(rooflineSeconds(h, 1e6, MathPrecision::FP16, 3.35e6), 1e-6, 1e-12);
  // 989.4 GFLOP in bf16: 1 ms, compute-bound.
  EXPECT_NEAR(rooflineSeconds(h, 989.4e9, MathPrecision::BF16, 1e3), 1e-3, 1e-9);
  // V100 has no bf16: its fp32 rate stands in.
  const HardwareProfile &v = *c.find("V100");
  EXPECT_NEAR(rooflineSeconds(v, 15.7e9, MathPrecision::BF16, 0), 1e-3, 1e-9);
}

TEST(ComputeModel, GroupReadsInputsAndWritesOutputsOnce) {
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[64, 128] x, float16[128, 256] w) => (float16[64, 256] y) {
      h = MatMul(x, w)
      y = Relu(h)
    })");
  graphlint::Setup setup;
  AnalysisContext ctx(*m, setup);
  const ComputeModel &cm = ctx.get<ComputeModel>();
  const FusionPlan &plan = ctx.get<FusionPlan>();
  const FusionGroup &grp = plan.groupOf(*m->graph->nodes()[0]);
  ASSERT_EQ(grp.nodes.size(), 2u);  // Relu is the MatMul's epilogue
  const GroupCost &c = cm.groups()[grp.id];
  ASSERT_TRUE(c.known);
  EXPECT_DOUBLE_EQ(c.forward.bytes, (64 * 128 + 128 * 256 + 64 * 256) * 2.0);
  EXPECT_DOUBLE_EQ(c.forward.matmulFlops, 2.0 * 64 * 128 * 256);
  EXPECT_DOUBLE_EQ(c.forward.flops, 2.0 * 64 * 128 * 256 + 64 * 256);  // + one per Relu output
  EXPECT_EQ(c.precision, MathPrecision::FP16);
  // Memory-bound: bytes / (3.35 TB/s x 0.8); the launch (4 us) is longer still.
  EXPECT_DOUBLE_EQ(c.forward.gpuSeconds, c.forward.bytes / (3.35e12 * 0.8));
  EXPECT_DOUBLE_EQ(c.forward.seconds, 4e-6);
  EXPECT_DOUBLE_EQ(c.backward.flops, 0);  // inference: no backward
}

TEST(ComputeModel, ConvFlopsAndUnknownSizes) {
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 16, 8, 8] x, float[32, 8, 3, 3] w, float[N, 4] z) => (float[2, 32, 8, 8] y, float[N, 4] r) {
      y = Conv <group = 2, pads = [1, 1, 1, 1]> (x, w)
      r = Relu(z)
    })");
  const Node &conv = *m->graph->nodes()[0];
  auto f = contractionFlops(conv);
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(*f, 2.0 * (2 * 32 * 8 * 8) * (8 * 3 * 3));
  graphlint::Setup setup;
  AnalysisContext ctx(*m, setup);
  const ComputeModel &cm = ctx.get<ComputeModel>();
  EXPECT_FALSE(cm.groups()[ctx.get<FusionPlan>().groupOf(*m->graph->nodes()[1]).id].known);
  EXPECT_EQ(cm.unknownGroups(), 1u);
}

// aten::_grouped_mm (MoE experts, docs/fx-format.md "Mixture of experts"):
// every expert in one kernel, however the rows split among them.
TEST(ComputeModel, GroupedMmFlopsAreTheRowsTimesKTimesN) {
  test::IrBuilder g;
  Value *rows = g.input("rows", f32({512, 256}));
  Value *w = g.param("experts.gate_up_proj", f32({4, 256, 1024}));
  Value *offs = g.input("offs", Type::tensor(DType::Int32, Shape::of({4})));
  // Forward: [S, K] x [G, K, N] -> [S, N].
  Node *fwd = g.node("aten::_grouped_mm", {rows, w, offs}, {"up"}, {f32({512, 1024})});
  EXPECT_EQ(contractionFlops(*fwd), 2.0 * 512 * 256 * 1024);
  // Weight gradient: [K, S] x [S, N] -> [G, K, N], the reduction over S split by offs.
  Value *xt = g.input("rows_t", f32({256, 512}));
  Value *grad = g.input("grad", f32({512, 1024}));
  Node *wgrad = g.node("aten::_grouped_mm", {xt, grad, offs}, {"wgrad"}, {f32({4, 256, 1024})});
  EXPECT_EQ(contractionFlops(*wgrad), 2.0 * 256 * 1024 * 512);
}

// ---- GL141 tensor-core-alignment ------------------------------------------

TEST(RulesTensorCoreAlignment, VocabularyNotAMultipleOf8InHalfPrecision) {
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[64, 100] x, float16[100, 50257] w) => (float16[64, 50257] y) {
      y = MatMul(x, w)
    })";
  FileReport r = lintText(text);
  auto d = withCode(r, "GL141");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.opType, "MatMul");
  EXPECT_EQ(d[0]->severity, Severity::Warning);
  EXPECT_HAS(d[0]->message, "MatMul '");
  EXPECT_HAS(d[0]->message, "K = 100, N = 50257");
  EXPECT_HAS(d[0]->message, "not multiples of 8, the f16 tensor-core alignment");
  EXPECT_HAS(d[0]->message, "pad K to 104, N to 50264");
  ASSERT_TRUE(d[0]->fusionId);
  EXPECT_EQ(*d[0]->fusionId, groupIdOf(text, d[0]->location.nodeIndex));
  EXPECT_FALSE(d[0]->reason);  // a performance finding, not a fusion breaker
}

// The LM head of a GPT as graphlint-export records it: aten::mm [120, 2048] x
// [2048, 50257]. Contraction geometry is shared with the FLOP formulas, so the
// FX graph gets the finding the same ONNX MatMul gets.
std::string lmHeadFx(const char *dtype) {
  std::string t = R"({"format": "graphlint-fx", "version": 1, "mode": "forward",
    "producer": {"name": "graphlint-export", "version": "1.0", "torch": "2.13.0", "capture": "fake"},
    "model": {"file": "gpt.py", "class": "GPT"},
    "params": [{"name": "lm_head.weight", "kind": "parameter", "shape": [50257, 2048], "dtype": "DT",
                "device": "cuda:0", "requires_grad": true, "strides": [2048, 1]}],
    "inputs": [{"name": "h", "shape": [120, 2048], "dtype": "DT", "device": "cuda:0", "requires_grad": false,
                "strides": [2048, 1]}],
    "nodes": [
      {"name": "t", "op": "aten::t", "overload": "", "inputs": ["lm_head.weight"], "aliases": [0],
       "outputs": [{"name": "t", "shape": [2048, 50257], "dtype": "DT", "device": "cuda:0", "strides": [1, 2048]}],
       "source": {"file": "gpt.py", "line": 40, "col": 16, "function": "forward"}, "module": "lm_head"},
      {"name": "mm", "op": "aten::mm", "overload": "", "inputs": ["h", "t"],
       "outputs": [{"name": "mm", "shape": [120, 50257], "dtype": "DT", "device": "cuda:0", "strides": [50257, 1]}],
       "source": {"file": "gpt.py", "line": 40, "col": 16, "function": "forward"}, "module": "lm_head"}],
    "outputs": ["mm"]})";
  for (size_t at; (at = t.find("DT")) != std::string::npos;)
    t.replace(at, 2, dtype);
  return t;
}

std::string writeFx(const std::string &json) {
  std::string path = tempDir() + "/gpt.fx.json";
  writeFile(path, json);
  return path;
}

TEST(RulesTensorCoreAlignment, FxMatmulIsCheckedLikeTheOnnxOne) {
  std::string path = writeFx(lmHeadFx("bfloat16"));
  FileReport r = lintFile(path, onTarget("A100-80GB"));
  auto d = withCode(r, "GL141");
  ASSERT_EQ(d.size(), 1u) << "aten::mm [120,2048] x [2048,50257] went unreported";
  EXPECT_HAS(d[0]->message, "aten::mm 'mm' has N = 50257, not a multiple of 8, the bf16 tensor-core alignment");
  EXPECT_HAS(d[0]->message, "pad N to 50264");
  // The FLOP formula reads the same geometry: 2 x M x N x K.
  auto m = importModelFile(path, {});
  ASSERT_TRUE(bool(m)) << llvm::toString(m.takeError());
  const Node &mm = *(*m)->graph->nodes().back();
  ASSERT_EQ(mm.atenName(), "mm");
  EXPECT_EQ(contractionFlops(mm), 2.0 * 120 * 50257 * 2048);
}

// fp32 tensors under --precision bf16-mixed are multiplied in bf16: the
// alignment is 8, not TF32's 4.
TEST(RulesTensorCoreAlignment, MixedPrecisionAsksForTheSixteenBitMultiple) {
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[64, 128] x, float[128, 100] w) => (float[64, 100] y) {
      y = MatMul(x, w)
    })";
  // fp32 as TF32: 100 is a multiple of 4, nothing to say.
  EXPECT_TRUE(withCode(lintText(text, onTarget("A100-80GB")), "GL141").empty());
  LintOptions mixed = onTarget("A100-80GB");
  mixed.setup.precision = Precision::BF16Mixed;
  FileReport r = lintText(text, mixed);  // withCode points into it
  auto d = withCode(r, "GL141");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_HAS(d[0]->message, "N = 100, not a multiple of 8, the bf16 (--precision bf16-mixed) tensor-core alignment");
  EXPECT_FALSE(contains(d[0]->message, "TF32"));
}

TEST(RulesTensorCoreAlignment, AlignedAndSymbolicDimsAreClean) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (bfloat16[B, 128] x, bfloat16[128, 256] w, float16[B, D] a, float16[D, 100] b) => (bfloat16[B, 256] y, float16[B, 100] z) {
      y = MatMul(x, w)
      z = MatMul(a, b)
    })");
  // z's N = 100 is static and misaligned, its K is symbolic: only N is reported.
  auto d = withCode(r, "GL141");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_HAS(d[0]->message, "N = 100, not a multiple of 8");
  EXPECT_FALSE(contains(d[0]->message, "K ="));
}

TEST(RulesTensorCoreAlignment, EightBitNeedsSixteen) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int8[256, 40] x, int8[40, 64] w) => (int32[256, 64] y) {
      y = MatMulInteger(x, w)
    })");
  auto d = withCode(r, "GL141");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_HAS(d[0]->message, "MatMulInteger");
  EXPECT_HAS(d[0]->message, "K = 40, not a multiple of 16, the i8 tensor-core alignment");
  EXPECT_HAS(d[0]->message, "pad K to 48");
}

TEST(RulesTensorCoreAlignment, MatrixVectorProductsAreNotReported) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[1, 100] x, float16[100, 50257] w, float16[64, 100] a, float16[100, 2] b) => (float16[1, 50257] y, float16[64, 2] z) {
      y = MatMul(x, w)
      z = MatMul(a, b)
    })");
  EXPECT_TRUE(withCode(r, "GL141").empty());
}

TEST(RulesTensorCoreAlignment, ConvChannelsButNotTheRgbStem) {
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[8, 3, 64, 64] x, float16[24, 3, 3, 3] w1, float16[30, 24, 3, 3] w2, float16[30, 1, 3, 3] w3) => (float16[8, 30, 64, 64] y) {
      a = Conv <pads = [1, 1, 1, 1]> (x, w1)
      b = Conv <pads = [1, 1, 1, 1]> (a, w2)
      y = Conv <pads = [1, 1, 1, 1], group = 30> (b, w3)
    })";
  FileReport r = lintText(text);
  auto d = withCode(r, "GL141");
  // The stem's C_in = 3 and the depthwise conv are below the tile: not reported.
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.nodeIndex, 1u);
  EXPECT_HAS(d[0]->message, "Conv '");
  EXPECT_HAS(d[0]->message, "C_out = 30, not a multiple of 8");
  EXPECT_HAS(d[0]->message, "pad C_out to 32");
  EXPECT_HAS(d[0]->message, "zero channels");
  EXPECT_EQ(*d[0]->fusionId, groupIdOf(text, d[0]->location.nodeIndex));
}

TEST(RulesTensorCoreAlignment, Fp32DependsOnTf32Support) {
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8, 6, 32, 32] x, float[16, 6, 3, 3] w) => (float[8, 16, 32, 32] y) {
      y = Conv <pads = [1, 1, 1, 1]> (x, w)
    })";
  FileReport onH100 = lintText(text);
  auto h100 = withCode(onH100, "GL141");
  ASSERT_EQ(h100.size(), 1u);
  EXPECT_HAS(h100[0]->message, "C_in = 6, not a multiple of 4, the f32 (run as TF32) tensor-core alignment");
  ASSERT_EQ(h100[0]->notes.size(), 1u);
  EXPECT_HAS(h100[0]->notes[0].message, "only as TF32");
  EXPECT_HAS(h100[0]->notes[0].message, "set_float32_matmul_precision");
  // Volta has no TF32: fp32 never runs on tensor cores there.
  EXPECT_TRUE(withCode(lintText(text, onTarget("V100")), "GL141").empty());
  // An unknown target yields nothing rather than guesses.
  EXPECT_TRUE(withCode(lintText(text, onTarget("no-such-gpu")), "GL141").empty());
}

TEST(RulesTensorCoreAlignment, GemmTransposedWeightAndRepeatedLayers) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[32, 100] x, float16[200, 100] w1, float16[200] b1, float16[100, 200] w2, float16[32, 100] x2) => (float16[32, 200] y, float16[32, 200] y2) {
      h = Gemm <transB = 1> (x, w1, b1)
      y = Relu(h)
      h2 = Gemm <transB = 1> (x2, w1, b1)
      y2 = Relu(h2)
    })");
  auto d = withCode(r, "GL141");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_HAS(d[0]->message, "Gemm");
  EXPECT_HAS(d[0]->message, "K = 100, not a multiple of 8");
  ASSERT_GE(d[0]->notes.size(), 1u);
  EXPECT_HAS(d[0]->notes[0].message, "1 more node(s) have the same Gemm shape");
}

TEST(RulesTensorCoreAlignment, WrittenOutAttentionChecksOnlyTheHeadDim) {
  // ViT-style: 197 tokens (patches + class token), head dim 64 then 20.
  const char *attention = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[2, 4, 197, HD] q, float16[2, 4, HD, 197] kt, float16[2, 4, 197, HD] v, float16[1] scale) => (float16[2, 4, 197, HD] o) {
      s = MatMul(q, kt)
      t = Div(s, scale)
      p = Softmax <axis = -1> (t)
      o = MatMul(p, v)
    })";
  std::string aligned = attention, odd = attention;
  for (std::string *s : {&aligned, &odd}) {
    const std::string size = s == &aligned ? "64" : "20";
    for (size_t at; (at = s->find("HD")) != std::string::npos;)
      s->replace(at, 2, size);
  }
  EXPECT_TRUE(withCode(lintText(aligned), "GL141").empty());
  FileReport r = lintText(odd);
  auto d = withCode(r, "GL141");
  ASSERT_EQ(d.size(), 2u);
  EXPECT_HAS(d[0]->message, "K = 20");  // Q.K^T reduces over the head dim
  EXPECT_HAS(d[1]->message, "N = 20");  // P.V produces it
  EXPECT_HAS(d[0]->message, "head dim");
  for (const Diagnostic *x : d)
    EXPECT_FALSE(contains(x->message, "197"));
}

TEST(RulesTensorCoreAlignment, EinsumAsBatchedMatmul) {
  FileReport r = lintText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float16[8, 64, 100] a, float16[8, 100, 64] b) => (float16[8, 64, 64] y) {
      y = Einsum <equation = "bij,bjk->bik"> (a, b)
    })");
  auto d = withCode(r, "GL141");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_HAS(d[0]->message, "Einsum");
  EXPECT_HAS(d[0]->message, "K = 100");
}

TEST(RulesTensorCoreAlignment, BundledFp32ModelsAreClean) {
  for (const char *model : {"models/resnet18.onnx", "models/mobilenet_v3_small.onnx", "models/gpt_tiny.onnx"}) {
    LintOptions o;
    o.setup.dims = {{"batch", 8}, {"seq", 32}};
    FileReport r = lintFile(sourcePath(model), o);
    EXPECT_TRUE(withCode(r, "GL141").empty()) << model << ": " << withCode(r, "GL141")[0]->message;
  }
}

// ---- GL142 launch-bound ----------------------------------------------------

namespace {

// `tiny` small matmuls (one kernel each: a contraction never absorbs its
// producer), optionally with a large one in the middle.
std::string matmulChain(unsigned tiny, bool bigInMiddle, const std::string &rows = "8") {
  std::string sig = "g (float[" + rows + ", 16] x0, float[16, 16] w, float[4096, 4096] big) => (float[" + rows +
                    ", 16] out) {\n";
  std::string body;
  unsigned i = 0;
  auto step = [&] {
    body += "  x" + std::to_string(i + 1) + " = MatMul(x" + std::to_string(i) + ", w)\n";
    ++i;
  };
  for (unsigned k = 0; k < tiny / 2; ++k) step();
  if (bigInMiddle) {
    body += "  bb = MatMul(big, big)\n  bs = ReduceSum <keepdims = 0> (bb)\n";
    body += "  x" + std::to_string(i + 1) + " = Add(x" + std::to_string(i) + ", bs)\n";
    ++i;
  }
  for (unsigned k = tiny / 2; k < tiny; ++k) step();
  body += "  out = Identity(x" + std::to_string(i) + ")\n}";
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n" + sig + body;
}

}  // namespace

TEST(RulesLaunchBound, RunOfTinyKernelsIsOneDiagnostic) {
  const std::string text = matmulChain(5, false);
  FileReport r = lintText(text);
  auto d = withCode(r, "GL142");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.nodeIndex, 0u);  // the first kernel of the run
  EXPECT_EQ(d[0]->location.opType, "MatMul");
  EXPECT_HAS(d[0]->message, "5 consecutive kernels");
  EXPECT_HAS(d[0]->message, "launch-bound on H100-SXM");
  EXPECT_HAS(d[0]->message, "20.0 us of launch overhead");
  EXPECT_LT(d[0]->message.size(), 120u) << "details go to notes";
  ASSERT_TRUE(d[0]->fusionId);
  EXPECT_EQ(*d[0]->fusionId, groupIdOf(text, d[0]->location.nodeIndex));
  EXPECT_FALSE(d[0]->reason);
  ASSERT_EQ(d[0]->notes.size(), 4u);
  EXPECT_HAS(d[0]->notes[0].message, "from MatMul");
  EXPECT_HAS(d[0]->notes[0].message, "4.0 us per launch");
  EXPECT_HAS(d[0]->notes[1].message, "CUDA graph");
  EXPECT_HAS(d[0]->notes[1].message, "reduce-overhead");
  EXPECT_HAS(d[0]->notes[1].message, "batch size");
  EXPECT_HAS(d[0]->notes[2].message, "predicted kernel times: MatMul");
}

TEST(RulesLaunchBound, ShortRunsAndBigKernelsAreNotReported) {
  EXPECT_TRUE(withCode(lintText(matmulChain(3, false)), "GL142").empty());
  // 2 + big + 2: the big matmul (~2 ms) splits the tiny ones into short runs.
  EXPECT_TRUE(withCode(lintText(matmulChain(4, true)), "GL142").empty());
  // 4 + big + 4: two runs.
  FileReport r = lintText(matmulChain(8, true));
  auto two = withCode(r, "GL142");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_HAS(two[0]->message, "4 consecutive kernels");
  EXPECT_HAS(two[1]->message, "4 consecutive kernels");
}

TEST(RulesLaunchBound, UnknownSizesAreNotGuessed) {
  EXPECT_TRUE(withCode(lintText(matmulChain(6, false, "N")), "GL142").empty());
}

TEST(RulesLaunchBound, TheTargetDecidesWhatIsTiny) {
  // Each MatMul reads two 4 MiB fp32 operands: ~2.5 us on H100 (tiny), ~28 us
  // on an L4's 300 GB/s (not tiny).
  const std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8, 131072] x, float[131072, 8] w) => (float[8, 8] y) {
      a = MatMul(x, w)
      b = MatMul(x, w)
      c = MatMul(x, w)
      d = MatMul(x, w)
      y = Sum(a, b, c, d)
    })";
  EXPECT_EQ(withCode(lintText(text), "GL142").size(), 1u);
  EXPECT_TRUE(withCode(lintText(text, onTarget("L4")), "GL142").empty());
}

TEST(RulesLaunchBound, BundledModelsAtBatchOneAreLaunchBoundButNotAtBatch64) {
  LintOptions one;
  one.setup.dims = {{"batch", 1}};
  FileReport r = lintFile(sourcePath("models/mobilenet_v3_small.onnx"), one);
  auto d = withCode(r, "GL142");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0]->location.nodeName, "/features/features.0/features.0.0/Conv");
  LintOptions big;
  big.setup.dims = {{"batch", 64}};
  EXPECT_TRUE(withCode(lintFile(sourcePath("models/resnet18.onnx"), big), "GL142").empty());
  // Symbolic batch: sizes unknown, nothing reported.
  EXPECT_TRUE(withCode(lintFile(sourcePath("models/resnet18.onnx"), {}), "GL142").empty());
}
