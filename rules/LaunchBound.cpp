// GL142 launch-bound: a run of consecutive kernels (fusion groups) each
// predicted to finish faster than the target's kernel launch overhead, so the
// GPU waits on the host. One diagnostic per run, at its first node. The
// per-kernel time is the roofline-lite estimate (lint/analyses/
// KernelEstimate.cpp) until the cost model replaces it.
#include "graphlint/lint/FusionPlan.h"
#include "graphlint/lint/HardwareProfile.h"
#include "graphlint/lint/KernelEstimate.h"
#include "graphlint/lint/Rule.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphlint {
namespace {

/// Shortest run reported (option `min-kernels`). Fewer tiny kernels cost a
/// few launch overheads, which is noise next to any real step.
constexpr RuleOptionInfo kOptions[] = {
    {"min-kernels", 4, 2, 1e6, "shortest run of tiny kernels reported"},
};

std::string micros(double s) {
  return s < 1e-6 ? fmt::format("{:.2f} us", s * 1e6) : fmt::format("{:.1f} us", s * 1e6);
}

std::string nodeName(const Node &n) { return n.name.empty() ? fmt::format("#{}", n.index) : n.name; }

class LaunchBound final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL142", "launch-bound", Severity::Warning,
                            "a run of tiny kernels whose predicted time is below launch overhead", kOptions};
    return i;
  }

  void check(const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const HardwareProfile *hw = HardwareCatalog::instance().find(ctx.setup().target);
    if (!hw)
      return;
    const FusionPlan &plan = ctx.get<FusionPlan>();
    const auto minRun = static_cast<size_t>(ctx.setup().ruleOption("GL142", "min-kernels", kOptions[0].defaultValue));
    forEachGraph(*m.graph, [&](const Graph &g) {
      // The graph's kernels in execution order (of their first node).
      std::vector<const FusionGroup *> kernels;
      for (const FusionGroup &grp : plan.groups())
        if (grp.graph == &g && grp.kernels > 0 && !grp.nodes.empty())
          kernels.push_back(&grp);
      std::stable_sort(kernels.begin(), kernels.end(), [](const FusionGroup *a, const FusionGroup *b) {
        return a->nodes.front()->index < b->nodes.front()->index;
      });

      struct Tiny { const FusionGroup *grp; KernelEstimate est; };
      std::vector<Tiny> run;
      auto flush = [&] {
        if (run.size() >= minRun)
          report(run.front().grp, run, *hw, sink);
        run.clear();
      };
      for (const FusionGroup *grp : kernels) {
        // Only compute kernels are timed; collectives, host syncs and unknown
        // ops have costs this estimate cannot see, so they end a run.
        bool timed = grp->kind == GroupKind::Pointwise || grp->kind == GroupKind::Reduction ||
                     grp->kind == GroupKind::Contraction || grp->kind == GroupKind::Opaque;
        auto est = timed ? estimateGroup(*grp, *hw) : std::nullopt;
        if (est && est->seconds < hw->launchOverhead)
          run.push_back({grp, *est});
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
      work += t.est.seconds;
    double launches = hw.launchOverhead * static_cast<double>(run.size());
    const Node &start = *first->nodes.front();
    const Node &end = *run.back().grp->nodes.back();
    Diagnostic &d = sink.report(
        start, fmt::format("{} consecutive kernels from {} '{}' to {} '{}' are launch-bound on {}: together they are "
                           "predicted to run {} on the GPU but cost {} of launch overhead ({} per kernel); capture "
                           "them in a CUDA graph (torch.compile(mode=\"reduce-overhead\"), TensorRT/ONNX Runtime CUDA "
                           "graphs), raise the batch size, or fuse the ops",
                           run.size(), start.opType, nodeName(start), end.opType, nodeName(end), hw.name, micros(work),
                           micros(launches), micros(hw.launchOverhead)));
    d.fusionId = first->id;
    std::string kernels;
    for (size_t i = 0; i < run.size() && i < 6; ++i) {
      const FusionGroup &grp = *run[i].grp;
      kernels += fmt::format("{}{} '{}'{} {}", i ? ", " : "", grp.nodes.front()->opType, nodeName(*grp.nodes.front()),
                             grp.nodes.size() > 1 ? fmt::format(" (+{} fused)", grp.nodes.size() - 1) : "",
                             micros(run[i].est.seconds));
    }
    if (run.size() > 6)
      kernels += ", ...";
    d.notes.push_back({"predicted kernel times: " + kernels, std::nullopt});
    d.notes.push_back({fmt::format("estimate: bytes moved / {:.0f} GB/s vs FLOPs / datasheet peak, whichever is "
                                   "larger, from static shapes; bind symbolic dims with --dim to check other sizes",
                                   hw.memoryBandwidth / 1e9),
                       std::nullopt});
  }
};

}  // namespace

const Rule *makeLaunchBoundRule() {
  static const LaunchBound r;
  return &r;
}

}  // namespace graphlint
