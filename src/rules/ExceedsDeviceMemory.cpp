// GL201 exceeds-device-memory: the memory plan's peak reserved bytes per GPU
// plus the CUDA context (and NCCL buffers when there are several ranks) do
// not fit in the target's memory. One diagnostic per model, at the node
// running at the peak.
#include "graphlint/ir/Display.h"
#include "graphlint/analyses/MemoryPlan.h"
#include "graphlint/analyses/MeshAdvice.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

struct ExceedsDeviceMemoryOptions {
  double contextMib = 512;
  double ncclMib = 512;
};

class ExceedsDeviceMemory final : public Rule {
public:
  static constexpr RuleOption<ExceedsDeviceMemoryOptions> kOptions[] = {
      {"context-mib", &ExceedsDeviceMemoryOptions::contextMib, 0, 1 << 20,
       "MiB the CUDA context, cuBLAS and cuDNN workspaces take on each GPU"},
      {"nccl-mib", &ExceedsDeviceMemoryOptions::ncclMib, 0, 1 << 20,
       "MiB of NCCL buffers per GPU when the world size is above 1"},
  };
  static constexpr RuleInfo kInfo{"GL201", "exceeds-device-memory", Severity::Error,
      "the predicted peak memory per GPU exceeds the target device's memory", ruleOptionInfos<kOptions>};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const MemoryPlan &plan = ctx.get<MemoryPlan>();
    const MemorySummary &s = plan.summary();
    if (s.capacityBytes <= 0)
      return;
    const Setup &setup = ctx.setup();
    const ExceedsDeviceMemoryOptions &o = ruleOptions<ExceedsDeviceMemory>(ctx);
    double reserve = o.contextMib * (1 << 20);
    if (setup.mesh.worldSize() > 1)
      reserve += o.ncclMib * (1 << 20);
    double need = static_cast<double>(s.peakReservedBytes) + reserve;
    if (need <= s.capacityBytes)
      return;
    // A lower bound that exceeds the device still exceeds it: say "at least".
    std::string msg = fmt::format(
        "predicted {} memory per GPU is {}{} ({} reserved by PyTorch's caching allocator + {} CUDA/NCCL context), "
        "{} more than the {} of {}",
        s.mode, s.lowerBound() ? "at least " : "", formatBytes(need),
        formatBytes(static_cast<double>(s.peakReservedBytes)), formatBytes(reserve),
        formatBytes(need - s.capacityBytes), formatBytes(s.capacityBytes), s.target);
    Diagnostic &d = plan.peakNode() ? sink.report(*plan.peakNode(), msg) : sink.reportFile(msg);
    d.note(fmt::format("params {}{}, grads {}, optimizer state {}, inputs {}, activations {}; peak "
                       "allocated {} at {} '{}'",
                       formatBytes(static_cast<double>(s.paramsBytes)),
                       s.buffersBytes ? fmt::format(", buffers {}", formatBytes(static_cast<double>(s.buffersBytes)))
                                      : std::string(),
                       formatBytes(static_cast<double>(s.gradsBytes)),
                       formatBytes(static_cast<double>(s.optimizerBytes)),
                       formatBytes(static_cast<double>(s.inputsBytes)),
                       formatBytes(static_cast<double>(s.activationsBytes)),
                       formatBytes(static_cast<double>(s.peakAllocatedBytes)), s.peakPhase, s.peakNode));
    // Advice for what the run does not do already.
    std::vector<std::string> fixes{"reduce the batch (--dim)"};
    if (s.mode == "training") {
      // The memory plan again at a raised tp or pp: the smallest that fits.
      for (const char *knob : {"tp", "pp"})
        for (const MeshCandidate &c : ctx.get<MeshAdvice>().candidates())
          if (c.knob == knob && static_cast<double>(c.peakReservedBytes) + reserve <= s.capacityBytes) {
            fixes.push_back(fmt::format("--{} {} fits: {} ({})", c.knob, c.degree,
                                        formatBytes(static_cast<double>(c.peakReservedBytes) + reserve), c.describe()));
            break;
          }
      if (setup.mesh.zeroStage() < 3)
        fixes.push_back(setup.mesh.zeroStage() == 0 ? "shard model states (--dp-shard N, or --zero 1|2|3 with --world-size)"
                                                    : "shard more model states (--zero 3)");
      if (setup.recompute == Recompute::None)
        fixes.push_back("checkpoint activations (--recompute layer)");
      if (!precisionPolicy(setup.precision).sixteenBitActivations)
        fixes.push_back("train in bf16-mixed (--precision bf16-mixed)");
    } else if (!precisionPolicy(setup.precision).sixteenBitActivations) {
      fixes.push_back("run in 16 bits (--precision bf16)");
    }
    fixes.push_back("pick a larger --target");
    if (s.lowerBound())
      d.note(fmt::format("a lower bound: {} of {} tensors have no size and count as 0 bytes",
                         s.unsizedTensors, s.tensors));
    std::string text;
    for (size_t i = 0; i < fixes.size(); ++i)
      text += (i == 0 ? "" : i + 1 == fixes.size() ? " or " : ", ") + fixes[i];
    d.note("to fit: " + text);
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(ExceedsDeviceMemory)

}  // namespace graphlint
