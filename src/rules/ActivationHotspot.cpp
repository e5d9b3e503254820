// GL202 activation-hotspot: at the predicted memory peak, the activations one
// node produced (its outputs, what it saves for backward, their gradients)
// take at least a share of the peak. One diagnostic per model, at that node.
#include "graphlint/ir/Display.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/rules/Rule.h"

#include <llvm/ADT/MapVector.h>

#include <fmt/format.h>

namespace graphlint {
namespace {

struct ActivationHotspotOptions {
  double share = 0.25;
  double minPeakMib = 256;
};

class ActivationHotspot final : public Rule {
public:
  static constexpr RuleOption<ActivationHotspotOptions> kOptions[] = {
      {"share", &ActivationHotspotOptions::share, 0.01, 1, "share of the peak one node's activations must reach"},
      {"min-peak-mib", &ActivationHotspotOptions::minPeakMib, 0, 1 << 30, "peaks below this many MiB are not examined"},
  };
  static constexpr RuleInfo kInfo{"GL202", "activation-hotspot", Severity::Warning,
      "one node's activations dominate the predicted memory peak", ruleOptionInfos<kOptions>};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const MemoryPlan &plan = ctx.get<MemoryPlan>();
    const MemorySummary &s = plan.summary();
    const ActivationHotspotOptions &o = ruleOptions<ActivationHotspot>(ctx);
    if (s.peakAllocatedBytes == 0 || static_cast<double>(s.peakAllocatedBytes) < o.minPeakMib * (1 << 20))
      return;
    llvm::MapVector<const Node *, uint64_t> byNode;
    llvm::MapVector<const Node *, const MemoryPlan::Contributor *> largest;
    for (const MemoryPlan::Contributor &c : plan.atPeak()) {
      bool activation = c.kind == MemoryKind::Activation || c.kind == MemoryKind::Saved ||
                        c.kind == MemoryKind::Gradient;
      if (!activation || !c.producer)
        continue;
      byNode[c.producer] += c.bytes;
      if (!largest.count(c.producer))
        largest[c.producer] = &c;  // atPeak is sorted, largest first
    }
    const Node *top = nullptr;
    uint64_t topBytes = 0;
    for (const auto &[n, b] : byNode)
      if (b > topBytes) {
        top = n;
        topBytes = b;
      }
    double frac = static_cast<double>(topBytes) / static_cast<double>(s.peakAllocatedBytes);
    if (!top || frac < o.share)
      return;
    const MemoryPlan::Contributor &c = *largest[top];
    Diagnostic &d = sink.report(
        *top, fmt::format("activations of {} '{}' hold {} ({:.0f}% of the predicted {} peak of {} at {} '{}'); "
                          "the largest is '{}' ({}, {})",
                          top->opType, nodeLabel(*top),
                          formatBytes(static_cast<double>(topBytes)), 100 * frac, s.mode,
                          formatBytes(static_cast<double>(s.peakAllocatedBytes)), s.peakPhase, s.peakNode,
                          c.value ? c.value->name : "?", memoryKindName(c.kind),
                          formatBytes(static_cast<double>(c.bytes))));
    if (c.value)
      d.note(fmt::format("'{}' is {}", c.value->name, c.value->type.str()));
    d.note("to shrink it: a smaller batch or sequence (--dim), activation checkpointing around this "
           "block (--recompute layer), a fused kernel that does not materialise it (e.g. "
           "FlashAttention for an attention score matrix), or 16-bit activations");
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(ActivationHotspot)

}  // namespace graphlint
