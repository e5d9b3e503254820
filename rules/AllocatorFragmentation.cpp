// GL203 allocator-fragmentation: replaying the memory plan's alloc/free trace
// through the caching-allocator simulation reserves much more than it ever
// has allocated at once: cached but unusable segments. One diagnostic per
// model.
#include "graphlint/ir/Display.h"
#include "graphlint/lint/MemoryPlan.h"
#include "graphlint/lint/Rule.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

constexpr RuleOptionInfo kOptions[] = {
    {"threshold", 0.25, 0.01, 1, "share of the peak reserved bytes never allocated at once"},
    {"min-waste-mib", 512, 0, 1 << 30, "waste below this many MiB is not reported"},
};

class AllocatorFragmentation final : public Rule {
public:
  const RuleInfo &info() const override {
    static const RuleInfo i{"GL203", "allocator-fragmentation", Severity::Warning,
                            "simulated reserved memory exceeds allocated memory by a threshold", kOptions};
    return i;
  }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const MemorySummary &s = ctx.get<MemoryPlan>().summary();
    const Setup &setup = ctx.setup();
    double threshold = setup.ruleOption("GL203", "threshold", kOptions[0].defaultValue);
    double minWaste = setup.ruleOption("GL203", "min-waste-mib", kOptions[1].defaultValue) * (1 << 20);
    double waste = static_cast<double>(s.peakReservedBytes) -
                   static_cast<double>(std::min(s.allocatorPeakAllocatedBytes, s.peakReservedBytes));
    if (s.fragmentation() < threshold || waste < minWaste)
      return;
    Diagnostic &d = sink.reportFile(fmt::format(
        "PyTorch's caching allocator is predicted to reserve {} for a peak of {} allocated: {} ({:.0f}%) sits in "
        "cached blocks too small or split wrongly for the later requests",
        formatBytes(static_cast<double>(s.peakReservedBytes)),
        formatBytes(static_cast<double>(s.allocatorPeakAllocatedBytes)), formatBytes(waste),
        100 * s.fragmentation()));
    d.note(fmt::format("{} segments reserved; simulated with 512 B rounding, 2 MiB small and 20 MiB large "
                       "segments, best fit and PyTorch's splitting rules",
                       s.segments));
    d.note("to reduce it: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch >= 2.1) or "
           "max_split_size_mb:N, or allocate the largest buffers first (static shapes, CUDA graphs)");
  }
};

}  // namespace

const Rule *makeAllocatorFragmentationRule() {
  static const AllocatorFragmentation r;
  return &r;
}

}  // namespace graphlint
