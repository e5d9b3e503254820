// GL301 exposed-communication: in a data-parallel training step, the share of
// the predicted step time during which the GPU only communicates (gradient
// reductions no backward compute hides, ZeRO parameter gathers a kernel
// waits for) exceeds a threshold. One file-level diagnostic from the step
// timeline (StepTimeline.h), with the numbers behind it as notes.
#include "graphlint/analyses/ComputeModel.h"
#include "graphlint/rules/Rule.h"
#include "graphlint/analyses/StepTimeline.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

struct ExposedCommunicationOptions {
  double threshold = 0.1;
};

std::string ms(double s) { return fmt::format("{:.2f} ms", s * 1e3); }

class ExposedCommunication final : public Rule {
public:
  static constexpr RuleOption<ExposedCommunicationOptions> kOptions[] = {
      {"threshold", &ExposedCommunicationOptions::threshold, 0, 1,
       "exposed communication as a share of step time that is reported"},
  };
  static constexpr RuleInfo kInfo{"GL301", "exposed-communication", Severity::Warning,
      "predicted non-overlapped communication exceeds a share of step time", ruleOptionInfos<kOptions>};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const StepTimeline &st = ctx.get<StepTimeline>();
    if (!st.active() || st.strategy() == ParallelStrategy::Single || !(st.stepSeconds() > 0))
      return;
    double threshold = ruleOptions<ExposedCommunication>(ctx).threshold;
    double share = st.exposedSeconds() / st.stepSeconds();
    if (share <= threshold)
      return;
    const Topology &t = st.topology();
    const ComputeModel &cm = ctx.get<ComputeModel>();
    if (cm.lowerBound()) {
      // Compute is a lower bound, so the exposed share is only an upper bound:
      // say so as a note, not as a finding.
      Diagnostic &d = sink.reportFile(fmt::format(
          "at most {:.0f}% of the predicted training step is exposed communication; not a conclusion: {} of {} "
          "kernels have unknown cost, so compute time (and the overlap) is a lower bound",
          share * 100, cm.unknownGroups(), cm.schedule().size()));
      d.severity = Severity::Note;
      d.note("bind symbolic dims with --dim (or export with static sizes) to cost every kernel");
      return;
    }
    Diagnostic &d = sink.reportFile(fmt::format(
        "{:.0f}% of the predicted {} training step is exposed communication: {} of {} communication on {} ranks "
        "({}, {} inside a node, {} between nodes) is not hidden behind compute (threshold {:.0f}%)",
        share * 100, ms(st.stepSeconds()), ms(st.exposedSeconds()), ms(st.commSeconds()), t.ranks,
        strategyName(st.strategy()), t.intra.name, t.nodes() > 1 ? t.inter.name : "none", threshold * 100));
    d.note(fmt::format("step: forward {}, backward {}, optimizer {}; {:.1f} MB sent per rank; overlap "
                       "ratio {:.2f}; MFU {:.1f}%",
                       ms(st.forwardSeconds()), ms(st.backwardSeconds()), ms(st.optimizerSeconds()),
                       st.bytesPerRank() / 1e6, st.overlapRatio(), st.mfu() * 100));
    // The collective that ends last after compute is idle says where the time goes.
    const CollectiveCall *tail = nullptr;
    for (const CollectiveCall &c : st.collectives())
      if (!tail || c.endSeconds > tail->endSeconds)
        tail = &c;
    if (tail)
      d.note(fmt::format("the last collective ({} of {:.1f} MB, {} algorithm, {}) ends at {} of the step",
                         collectiveKindName(tail->kind), tail->bytes / 1e6, collectiveAlgoName(tail->algo),
                         tail->phase, ms(tail->endSeconds)));
    // The knobs of the strategy in use: no DDP advice under FSDP.
    if (gathersUnits(st.strategy()))
      d.note("raise the per-GPU batch (more compute per gathered byte), shard within a node and replicate "
             "across nodes (HSDP: --dp-replicate with --dp-shard), reduce-scatter in bf16 (FSDP2's "
             "MixedPrecisionPolicy reduce_dtype), a faster interconnect, or a lower ZeRO stage; see "
             "docs/cost-model.md");
    else
      d.note("raise the per-GPU batch (more compute per byte), use bf16 gradients (DDP comm hook "
             "bf16_compress_hook), a faster interconnect or fewer nodes; see docs/cost-model.md");
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(ExposedCommunication)

}  // namespace graphlint
