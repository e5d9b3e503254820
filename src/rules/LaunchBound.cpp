// GL142 launch-bound: a run of consecutive kernels (fusion groups) each
// predicted to finish faster than the target's kernel launch overhead, so the
// GPU waits on the host. One diagnostic per run, at its first node. The
// per-kernel GPU time is the compute model's roofline (ComputeModel.h).
#include "graphlint/ir/Display.h"
#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphlint {
namespace {

struct LaunchBoundOptions {
  /// Shortest run reported (option `min-kernels`). Fewer tiny kernels cost a
  /// few launch overheads, which is noise next to any real step.
  double minKernels = 4;
};

std::string micros(double s) {
  return s < 1e-6 ? fmt::format("{:.2f} us", s * 1e6) : fmt::format("{:.1f} us", s * 1e6);
}

class LaunchBound final : public Rule {
public:
  static constexpr RuleOption<LaunchBoundOptions> kOptions[] = {
      {"min-kernels", &LaunchBoundOptions::minKernels, 2, 1e6, "shortest run of tiny kernels reported"},
  };
  static constexpr RuleInfo kInfo{"GL142", "launch-bound", Severity::Warning,
      "a run of tiny kernels whose predicted time is below launch overhead", ruleOptionInfos<kOptions>};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const ComputeModel &cost = ctx.get<ComputeModel>();
    const HardwareProfile *hw = cost.hardware();
    if (!hw)
      return;
    const auto minRun = static_cast<size_t>(ruleOptions<LaunchBound>(ctx).minKernels);
    forEachGraph(*m.graph, [&](const Graph &g) {
      // The graph's kernels in execution order (of their first node).
      std::vector<const GroupCost *> kernels;
      // A joint graph's backward runs only under --train (ComputeModel's
      // schedule); without it, its backward-led groups launch nothing.
      for (const GroupCost &c : cost.groups())
        if (c.group->graph == &g && c.group->kernels > 0 && !c.group->nodes.empty() &&
            (cost.joint() || !c.group->nodes.front()->backwardPhase))
          kernels.push_back(&c);
      std::stable_sort(kernels.begin(), kernels.end(), [](const GroupCost *a, const GroupCost *b) {
        return a->group->nodes.front()->index < b->group->nodes.front()->index;
      });

      struct Tiny { const FusionGroup *grp; double seconds; };
      std::vector<Tiny> run;
      auto flush = [&] {
        if (run.size() >= minRun)
          report(run.front().grp, run, *hw, sink);
        run.clear();
      };
      for (const GroupCost *c : kernels) {
        // Only compute kernels are timed; collectives, host syncs and unknown
        // ops have costs the model cannot see, so they end a run.
        GroupKind kind = c->group->kind;
        bool timed = c->known && (kind == GroupKind::Pointwise || kind == GroupKind::Reduction ||
                                  kind == GroupKind::Contraction || kind == GroupKind::Opaque);
        // One kernel's GPU time against one launch (a multi-kernel group
        // averages over its kernels).
        // A joint graph costs its backward nodes in `backward` (a group may
        // hold both phases), so a kernel's time is both parts; a synthesised
        // backward has no groups of its own and is not checked.
        double seconds = c->forward.gpuSeconds + (cost.joint() ? c->backward.gpuSeconds : 0);
        double perKernel = seconds / std::max(1u, c->group->kernels);
        if (timed && perKernel < hw->launchOverhead)
          run.push_back({c->group, seconds});
        else
          flush();
      }
      flush();
    });
  }

private:
  template <typename Run>
  static void report(const FusionGroup *first, const Run &run, const HardwareProfile &hw, DiagnosticSink &sink) {
    double work = 0;
    for (const auto &t : run)
      work += t.seconds;
    double launches = hw.launchOverhead * static_cast<double>(run.size());
    const Node &start = *first->nodes.front();
    const Node &end = *run.back().grp->nodes.back();
    // The first line stays short (the names of FX nodes are long): where the
    // run starts and ends, and what to do, are notes.
    Diagnostic &d = sink.report(
        start, fmt::format("{} consecutive kernels are launch-bound on {}: {} of GPU work, {} of launch overhead",
                           run.size(), hw.name, micros(work), micros(launches)));
    d.note(fmt::format("from {} '{}' to {} '{}', {} per launch", start.opType, nodeLabel(start), end.opType,
                       nodeLabel(end), micros(hw.launchOverhead)));
    d.note("capture them in a CUDA graph (torch.compile(mode=\"reduce-overhead\"), TensorRT/ONNX Runtime "
           "CUDA graphs), raise the batch size, or fuse the ops");
    d.fusionId = first->id;
    std::string kernels;
    for (size_t i = 0; i < run.size() && i < 6; ++i) {
      const FusionGroup &grp = *run[i].grp;
      kernels += fmt::format("{}{} '{}'{} {}", i ? ", " : "", grp.nodes.front()->opType, nodeLabel(*grp.nodes.front()),
                             grp.nodes.size() > 1 ? fmt::format(" (+{} fused)", grp.nodes.size() - 1) : "",
                             micros(run[i].seconds));
    }
    if (run.size() > 6)
      kernels += ", ...";
    d.note("predicted kernel times: " + kernels);
    d.note(fmt::format("estimate: bytes moved / ({:.0f} GB/s x {:g}) vs FLOPs / (peak x {:g} on CUDA cores, x {:g} "
                       "on tensor cores), whichever is larger, from static shapes (docs/cost-model.md); bind "
                       "symbolic dims with --dim to check other sizes",
                       hw.memoryBandwidth / 1e9, hw.memoryEfficiency, hw.computeEfficiency,
                       hw.tensorCoreEfficiency));
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(LaunchBound)

}  // namespace graphlint
