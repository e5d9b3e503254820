// GL302 oversized-parameter: in a data-parallel training step whose
// gradients are bucketed (DDP, ZeRO-1/2; not ZeRO-3/FSDP2's per-unit
// reduction), parameters whose gradient is larger than the 25 MiB bucket. Each fills a
// bucket alone, its reduction cannot start before its whole gradient is
// computed, and the reduction is too large to hide behind the little backward
// work left. One diagnostic per model (the fix is one setting or one design
// change for all of them), at the first reader of the largest parameter,
// listing every parameter; the advice names the knob of the strategy in use.
#include "graphlint/ir/Display.h"
#include "graphlint/rules/Rule.h"
#include "graphlint/analyses/StepTimeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace graphlint {
namespace {


const Node *firstReader(const Value &v) {
  const Node *reader = nullptr;
  for (const Use &u : v.uses)
    if (!reader || u.user->index < reader->index)
      reader = u.user;
  return reader;
}

// "transformer.h.{0..23}.mlp.c_fc.weight (24 x 64.0 MiB)": parameters of one
// template (layer indices folded) as one entry, in first-seen order.
std::string parameterList(const std::vector<std::pair<std::string, double>> &params) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<std::string, double>>> byTemplate;
  for (const auto &p : params) {
    std::string t = moduleTemplate(p.first);
    if (!byTemplate.count(t))
      order.push_back(t);
    byTemplate[t].push_back(p);
  }
  std::string out;
  for (const std::string &t : order) {
    const auto &members = byTemplate[t];
    double largest = 0;
    for (const auto &m : members)
      largest = std::max(largest, m.second);
    std::string entry = members.size() == 1
                            ? fmt::format("{} ({})", members[0].first, formatBytes(members[0].second))
                            : fmt::format("{} ({} x up to {})", t, members.size(), formatBytes(largest));
    out += (out.empty() ? "" : ", ") + entry;
  }
  return out;
}

class OversizedParameter final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL302", "oversized-parameter", Severity::Warning,
      "one parameter exceeds the gradient bucket size (poor overlap)"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const StepTimeline &st = ctx.get<StepTimeline>();
    // ZeRO-3 and FSDP2 reduce per unit (a block), not in gradient buckets:
    // there is no bucket for one parameter to outgrow (GL301 reports a unit
    // whose collectives the compute does not hide).
    if (!st.active() || st.strategy() == ParallelStrategy::Single || gathersUnits(st.strategy()))
      return;
    const ComputeModel &cm = ctx.get<ComputeModel>();
    std::vector<std::pair<std::string, double>> over;  // name, gradient bytes
    const TrainableParam *largest = nullptr;
    double total = 0;
    for (const TrainableParam &p : cm.params()) {
      double bytes = p.elements * st.commElementBytes();
      if (bytes <= kBucketBytes)
        continue;
      over.push_back({p.value->name, bytes});
      total += bytes;
      if (!largest || p.elements > largest->elements)
        largest = &p;
    }
    if (over.empty())
      return;
    bool ddp = st.strategy() == ParallelStrategy::DDP;
    std::string message =
        over.size() == 1
            ? fmt::format("parameter '{}' ({} of gradient) is larger than the {} gradient bucket", over[0].first,
                          formatBytes(over[0].second), formatBytes(kBucketBytes))
            : fmt::format("{} parameters ({} of gradient) are each larger than the {} gradient bucket", over.size(),
                          formatBytes(total), formatBytes(kBucketBytes));
    const Node *reader = firstReader(*largest->value);
    Diagnostic &d = reader ? sink.report(*reader, message) : sink.reportFile(message);
    d.note(fmt::format("each is reduced alone, only after its whole gradient is computed, and its {} "
                       "cannot overlap much backward compute",
                       ddp ? "all-reduce" : "reduce-scatter"));
    if (over.size() > 1)
      d.note("parameters: " + parameterList(over));
    // The knob that sets the bucket depends on who buckets the gradients.
    std::string knob;
    switch (st.strategy()) {
    case ParallelStrategy::DDP: knob = "raise DDP's bucket_cap_mb above the largest so neighbours share a bucket"; break;
    case ParallelStrategy::ZeRO1:
    case ParallelStrategy::ZeRO2:
      knob = "raise DeepSpeed's reduce_bucket_size (elements) above the largest so neighbours share a bucket";
      break;
    case ParallelStrategy::ZeRO3:
    case ParallelStrategy::FSDP2:
    case ParallelStrategy::Single: break;
    }
    d.note("split them (e.g. shard a large embedding or LM head over the vocabulary), tie them to other "
           "weights, or " + knob);
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(OversizedParameter)

}  // namespace graphlint
