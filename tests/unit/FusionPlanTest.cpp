// Structural properties every fusion plan must have, checked on real models
// for every backend: each node in exactly one group, groups within one graph,
// and a group graph without cycles (a kernel order exists).
#include "TestSupport.h"

#include "graphlint/analyses/FusionPlan.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>

#include <map>
#include <set>

using namespace graphlint;
using namespace graphlint::test;

namespace {

void expectExecutable(const Model &m, FusionBackend b, const std::string &label) {
  FusionPlan plan(m, b);
  std::map<unsigned, std::set<unsigned>> deps;
  size_t nodes = 0;
  for (const FusionGroup &grp : plan.groups()) {
    nodes += grp.nodes.size();
    for (const Node *n : grp.nodes) {
      EXPECT_EQ(n->graph, grp.graph) << label;
      EXPECT_EQ(plan.groupOf(*n).id, grp.id) << label;
      if (n->opType == "Shape" || n->opType == "Size")
        continue;  // metadata reads
      for (const Value *v : n->inputs)
        if (v && v->producer && v->producer->graph == n->graph && plan.groupOf(*v->producer).id != grp.id)
          deps[grp.id].insert(plan.groupOf(*v->producer).id);
    }
  }
  size_t total = 0;
  forEachGraph(*m.graph, [&](const Graph &g) { total += g.nodes().size(); });
  for (const auto &f : m.functions)
    if (f->body)
      forEachGraph(*f->body, [&](const Graph &g) { total += g.nodes().size(); });
  EXPECT_EQ(nodes, total) << label;
  // Depth-first search for a back edge in the group graph.
  std::map<unsigned, int> color;
  std::function<bool(unsigned)> cyclic = [&](unsigned g) {
    color[g] = 1;
    for (unsigned d : deps[g]) {
      if (color[d] == 1 || (color[d] == 0 && cyclic(d)))
        return true;
    }
    color[g] = 2;
    return false;
  };
  for (const FusionGroup &grp : plan.groups()) {
    if (color[grp.id] == 0) {
      EXPECT_FALSE(cyclic(grp.id)) << label << ": groups depend on each other (no kernel order exists)";
    }
  }
}

}  // namespace

TEST(FusionPlan, PlansOfRealModelsAreExecutableForEveryBackend) {
  std::vector<std::string> files;
  for (const char *m : {"resnet18", "mobilenet_v3_small", "gpt_tiny", "control_flow"})
    files.push_back(sourcePath(std::string("models/") + m + ".onnx"));
  if (sharedAvailable()) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(sharedPath("corpus/onnx-backend/light"), ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::StringRef(it->path()).endswith(".onnx"))
        files.push_back(it->path());
  }
  for (const std::string &f : files) {
    auto m = importModelFile(f, {});
    ASSERT_TRUE(bool(m)) << f;
    for (FusionBackend b : {FusionBackend::Inductor, FusionBackend::InductorCpu, FusionBackend::TensorRT, FusionBackend::OrtCpu, FusionBackend::OrtCuda})
      expectExecutable(**m, b, f + " (" + std::string(fusionBackendName(b)) + ")");
  }
}

TEST(FusionPlan, ResidualAddDoesNotJoinTheGroupItsOtherOperandDependsOn) {
  // ln = LayerNorm(x + e); y = MatMul(ln, w); r = (x + e) + y: r may not join
  // the group of (x + e) + ln, since y depends on it.
  auto m = importText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 64] x, float[4, 64] e, float[64] s, float[64] b, float[64, 64] w) => (float[4, 64] r) {
      h = Add(x, e)
      ln = LayerNormalization(h, s, b)
      y = MatMul(ln, w)
      r = Add(h, y)
    })");
  ASSERT_TRUE(m);
  for (FusionBackend b : {FusionBackend::Inductor, FusionBackend::InductorCpu, FusionBackend::TensorRT, FusionBackend::OrtCpu, FusionBackend::OrtCuda}) {
    FusionPlan plan(*m, b);
    const Graph &g = *m->graph;
    const Node &add = *g.nodes()[0], &residual = *g.nodes()[3];
    EXPECT_NE(plan.groupOf(add).id, plan.groupOf(residual).id) << fusionBackendName(b);
    expectExecutable(*m, b, std::string(fusionBackendName(b)));
  }
}
