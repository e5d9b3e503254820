// GL203 allocator-fragmentation: replaying the memory plan's alloc/free trace
// through the caching-allocator simulation reserves much more than it ever
// has allocated at once: cached but unusable segments. One diagnostic per
// model.
#include "graphlint/ir/Display.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

struct AllocatorFragmentationOptions {
  double threshold = 0.25;
  double minWasteMib = 512;
};

class AllocatorFragmentation final : public Rule {
public:
  static constexpr RuleOption<AllocatorFragmentationOptions> kOptions[] = {
      {"threshold", &AllocatorFragmentationOptions::threshold, 0.01, 1,
       "share of the peak reserved bytes never allocated at once"},
      {"min-waste-mib", &AllocatorFragmentationOptions::minWasteMib, 0, 1 << 30,
       "waste below this many MiB is not reported"},
  };
  static constexpr RuleInfo kInfo{"GL203", "allocator-fragmentation", Severity::Warning,
      "simulated reserved memory exceeds allocated memory by a threshold", ruleOptionInfos<kOptions>};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const MemorySummary &s = ctx.get<MemoryPlan>().summary();
    const AllocatorFragmentationOptions &o = ruleOptions<AllocatorFragmentation>(ctx);
    double waste = static_cast<double>(s.peakReservedBytes) -
                   static_cast<double>(std::min(s.allocatorPeakAllocatedBytes, s.peakReservedBytes));
    if (s.fragmentation() < o.threshold || waste < o.minWasteMib * (1 << 20))
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

GRAPHLINT_DEFINE_RULE(AllocatorFragmentation)

}  // namespace graphlint
