// GL302 oversized-parameter: in a data-parallel training step, a parameter
// whose gradient is larger than DDP's 25 MiB bucket. It fills a bucket alone,
// its reduction cannot start before its whole gradient is computed, and the
// reduction is too large to hide behind the little backward work left. One
// diagnostic per parameter, at the node that first reads it.
#include "graphlint/lint/Rule.h"
#include "graphlint/lint/StepTimeline.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

std::string mib(double b) { return fmt::format("{:.1f} MiB", b / (1024.0 * 1024.0)); }

class OversizedParameter final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL302", "oversized-parameter", Severity::Warning,
                            "one parameter exceeds the gradient bucket size (poor overlap)"};
    return i;
  }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const StepTimeline &st = ctx.get<StepTimeline>();
    if (!st.active() || st.strategy() == ParallelStrategy::Single)
      return;
    const ComputeModel &cm = ctx.get<ComputeModel>();
    for (const TrainableParam &p : cm.params()) {
      double bytes = p.elements * st.commElementBytes();
      if (bytes <= kBucketBytes)
        continue;
      const Value &v = *p.value;
      const Node *reader = nullptr;
      for (const Use &u : v.uses)
        if (!reader || u.user->index < reader->index)
          reader = u.user;
      std::string message = fmt::format(
          "parameter '{}' ({} elements, {} of gradient) is larger than the {} gradient bucket: it is reduced "
          "alone, only after its whole gradient is computed, and its {} cannot overlap much backward compute",
          v.name, static_cast<int64_t>(p.elements), mib(bytes), mib(kBucketBytes),
          st.strategy() == ParallelStrategy::DDP ? "all-reduce" : "reduce-scatter");
      Diagnostic &d = reader ? sink.report(*reader, message) : sink.reportFile(message);
      d.notes.push_back({"split it (e.g. shard a large embedding or LM head over the vocabulary), tie it to another "
                         "weight, or raise DDP's bucket_cap_mb above its size so neighbours share its bucket",
                         std::nullopt});
    }
  }
};

}  // namespace

const Rule *makeOversizedParameterRule() {
  static const OversizedParameter r;
  return &r;
}

}  // namespace graphlint
