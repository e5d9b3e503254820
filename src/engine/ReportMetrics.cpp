#include "graphlint/engine/ReportMetrics.h"

namespace graphlint {

std::vector<MetricValue> reportMetrics(const FileReport &r) {
  std::vector<MetricValue> out;
  if (r.fatal)
    return out;
  auto add = [&](std::string name, double v, bool bytes = false) {
    MetricSense sense = metricSense(name);
    out.push_back({std::move(name), v, sense, bytes});
  };
  const MemorySummary &m = r.memory;
  if (m.present) {
    add("peak_allocated_bytes", static_cast<double>(m.peakAllocatedBytes), true);
    add("peak_reserved_bytes", static_cast<double>(m.peakReservedBytes), true);
    add("activations_bytes", static_cast<double>(m.activationsBytes), true);
    add("params_bytes", static_cast<double>(m.paramsBytes), true);
    add("grads_bytes", static_cast<double>(m.gradsBytes), true);
    add("optimizer_bytes", static_cast<double>(m.optimizerBytes), true);
  }
  const CostSummary &c = r.cost;
  if (c.present) {
    const CostSummary::Communication &s = c.communication;
    add("params", c.params);
    add("flops", c.flopsForward + c.flopsBackward);
    add("flops_forward", c.flopsForward);
    add("flops_backward", c.flopsBackward);
    add("kernels", c.kernelsForward + c.kernelsBackward);
    // Inference has no step: the forward pass is the step.
    add("step_time_s", s.present ? s.stepSeconds : c.secondsForward);
    add("forward_s", s.present ? s.forwardSeconds : c.secondsForward);
    add("backward_s", s.present ? s.backwardSeconds : c.secondsBackward);
    if (s.present) {
      add("optimizer_s", s.optimizerSeconds);
      add("mfu", s.mfu);
      add("communication_bytes", s.bytesPerRank + s.mesh.bytesPerRank(), true);
      add("comm_s", s.commSeconds);
      add("exposed_comm_s", s.exposedSeconds);
      for (const CostSummary::Collective &x : s.collectives) {
        add("collective." + x.kind + ".bytes", x.bytes, true);
        add("collective." + x.kind + ".s", x.seconds);
      }
      for (const MeshCollective &x : s.mesh.collectives) {
        std::string name = "collective." + x.dim + "." + x.collective;
        add(name + ".bytes", x.bytesPerRank, true);
        add(name + ".exposed_s", x.seconds - x.hiddenSeconds);
      }
    }
  }
  return out;
}

std::string metricAlias(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kAliases[] = {
      {"peak", "peak_allocated_bytes"},   {"reserved", "peak_reserved_bytes"},
      {"step", "step_time_s"},            {"comm", "communication_bytes"},
      {"activations", "activations_bytes"}, {"exposed", "exposed_comm_s"},
  };
  for (const auto &[alias, full] : kAliases)
    if (name == alias)
      return std::string(full);
  return std::string(name);
}

MetricSense metricSense(std::string_view name) {
  return name == "mfu" ? MetricSense::LowerIsWorse : MetricSense::HigherIsWorse;
}

}  // namespace graphlint
