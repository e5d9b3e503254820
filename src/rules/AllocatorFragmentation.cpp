// GL203 allocator-fragmentation: replaying the memory plan's alloc/free trace
// through the caching-allocator simulation, the allocator has to reserve new
// segments while enough bytes sit free in its pool, split into blocks too
// small for the request (fragmentation, 1 - largest free block / free bytes,
// at the reserved peak). Reserved overhead that is only segment rounding is
// not fragmentation and is not reported. One diagnostic per model.
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
       "fragmentation at the reserved peak: 1 - largest free block / free bytes"},
      {"min-waste-mib", &AllocatorFragmentationOptions::minWasteMib, 0, 1 << 30,
       "segments reserved only because of fragmentation: fewer MiB are not reported"},
  };
  static constexpr RuleInfo kInfo{"GL203", "allocator-fragmentation", Severity::Warning,
      "the simulated caching allocator reserves segments because its free memory is fragmented",
      ruleOptionInfos<kOptions>};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const MemorySummary &s = ctx.get<MemoryPlan>().summary();
    const AllocatorFragmentationOptions &o = ruleOptions<AllocatorFragmentation>(ctx);
    double waste = static_cast<double>(s.fragmentedGrowthBytes);
    if (s.fragmentation() < o.threshold || waste < o.minWasteMib * (1 << 20) || waste == 0)
      return;
    Diagnostic &d = sink.reportFile(fmt::format(
        "PyTorch's caching allocator is predicted to reserve {} for a peak of {} allocated, {} of it in segments it "
        "needed only because its free blocks were too small or split wrongly for the request ({:.0f}% "
        "fragmentation)",
        formatBytes(static_cast<double>(s.peakReservedBytes)),
        formatBytes(static_cast<double>(s.allocatorPeakAllocatedBytes)), formatBytes(waste),
        100 * s.fragmentation()));
    d.note(fmt::format("as it grew to its peak it held {} free, the largest block {}: fragmentation is 1 - largest "
                       "free block / free bytes",
                       formatBytes(static_cast<double>(s.allocatorFreeAtPeakBytes)),
                       formatBytes(static_cast<double>(s.allocatorLargestFreeAtPeakBytes))));
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
