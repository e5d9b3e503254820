// `--memory` in the text format (docs/memory.md): the per-GPU memory table of
// one model and the largest storages live at its peak.
#include "graphlint/ir/CheckedMath.h"
#include "graphlint/ir/Display.h"
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

namespace graphlint {

void renderMemoryText(const MemorySummary &s, const std::string &title, llvm::raw_ostream &os) {
  if (!s.present)
    return;
  // FSDP2 by name; a mesh beyond plain data parallelism spelled out.
  const Mesh &m = s.mesh;
  std::string sharding = m.dataParallel == DataParallel::FSDP2 ? "FSDP2" : fmt::format("ZeRO-{}", s.zero);
  bool meshBeyondDp = m.tp * m.pp * m.cp * m.ep > 1 || (m.dpReplicate > 1 && m.dpShard > 1);
  std::string ranks = meshBeyondDp ? fmt::format("world size {} ({})", s.worldSize, m.describe())
                                   : fmt::format("world size {}", s.worldSize);
  std::string setup = s.mode == "training" ? fmt::format("training, {}, {}, {}, {}, recompute {}", s.optimizer,
                                                         s.precision, sharding, ranks, s.recompute)
                                           : fmt::format("inference, {}", s.precision);
  os << fmt::format("{}: memory per GPU ({}; target {})\n", title, setup, s.target);
  // Which execution the figures assume (docs/memory.md "Compiled execution").
  if (s.execution == "compiled")
    os << fmt::format("  memory: compiled execution (torch.compile): {} fused intermediates ({}) never materialise; "
                      "the partitioner recomputes {} tensors eager saves ({})\n",
                      s.fusedAwayTensors, formatBytes(static_cast<double>(s.fusedAwayBytes)), s.recomputedTensors,
                      formatBytes(static_cast<double>(s.recomputedBytes)));
  else if (!s.executionStated)
    os << "  memory: eager execution; --backend inductor predicts torch.compile's\n";
  else
    os << "  memory: eager execution (only a stated --backend inductor or inductor-cpu models torch.compile's)\n";
  auto row = [&](std::string_view what, double bytes, std::string_view note = {}) {
    os << fmt::format("  {:<20} {:>12}{}{}\n", what, formatBytes(bytes), note.empty() ? "" : "  ", note);
  };
  row("params", static_cast<double>(s.paramsBytes));
  if (s.buffersBytes)
    row("buffers", static_cast<double>(s.buffersBytes), "registered buffers: resident, never trained");
  if (s.mode == "training") {
    row("grads", static_cast<double>(s.gradsBytes));
    row("optimizer state", static_cast<double>(s.optimizerBytes));
  }
  row("inputs", static_cast<double>(s.inputsBytes));
  row("activations", static_cast<double>(s.activationsBytes),
      s.mode == "training" ? "saved for backward" : "live at the peak");
  row("peak allocated", static_cast<double>(s.peakAllocatedBytes),
      s.peakNode.empty() ? "" : fmt::format("at {} '{}'", s.peakPhase, s.peakNode));
  row("peak reserved", static_cast<double>(s.peakReservedBytes),
      fmt::format("caching allocator: {} reserved overhead ({:.1f}%), {:.1f}% fragmentation",
                  formatBytes(static_cast<double>(s.reservedOverheadBytes())), 100 * s.reservedOverhead(),
                  100 * s.fragmentation()));
  if (s.capacityBytes > 0) {
    row("capacity", s.capacityBytes);
    double head = s.capacityBytes - static_cast<double>(s.peakReservedBytes);
    os << fmt::format("  {:<20} {:>12}\n", "headroom",
                      formatBytes(head));
  }
  if (s.mesh.tp > 1)
    os << fmt::format("  tensor parallel: tp {}, plan {}, sequence parallel {}\n", s.mesh.tp, s.tpPlan,
                      s.sequenceParallel ? "on" : "off");
  if (!s.stages.empty()) {
    os << fmt::format("  pipeline stages ({}, {} micro-batches, {} virtual stages; figures above: stage {}):\n",
                      s.ppSchedule, s.microbatches, s.virtualStages, s.stages[s.worstStage].rank);
    for (const MemorySummary::Stage &st : s.stages)
      os << fmt::format("    stage {:>2} {:>12} reserved  states {:>10}{}  activations {:>10} = {:>10} x {:.2f} "
                        "in flight  ({} .. {})\n",
                        st.rank, formatBytes(static_cast<double>(st.peakReservedBytes)),
                        formatBytes(static_cast<double>(st.paramsBytes + st.buffersBytes + st.gradsBytes + st.optimizerBytes)),
                        st.gatheredParamsBytes + st.unshardedGradsBytes
                            ? fmt::format("  unsharded {:>10}", formatBytes(static_cast<double>(
                                                                    st.gatheredParamsBytes + st.unshardedGradsBytes)))
                            : std::string(),
                        formatBytes(static_cast<double>(st.activationsBytes)),
                        formatBytes(static_cast<double>(st.activationsPerMicrobatch)), st.inFlightMicrobatches,
                        st.firstModule, st.lastModule);
  }
  if (!s.assumedDims.empty()) {
    std::string dims;
    for (const std::string &d : s.assumedDims)
      dims += (dims.empty() ? "" : ", ") + d;
    os << fmt::format("  assumed (bind with --dim): {}\n", dims);
  }
  os << fmt::format("  provenance: {} of {} tensors of unknown size (counted as 0 bytes)", s.unsizedTensors, s.tensors);
  if (s.saturatedTensors)
    os << fmt::format(", {} larger than {} (counted as {})", s.saturatedTensors, formatBytes(kMaxTensorBytes),
                      formatBytes(kMaxTensorBytes));
  os << "\n";
  for (const std::string &c : s.caveats)
    os << fmt::format("  caveat: {}\n", c);
  if (s.lowerBound())
    os << fmt::format("  LOWER BOUNDS: {:.1f}% of the tensors have no size and count as 0 bytes, so the true "
                      "figures are at least those above (bind symbolic dims with --dim)\n",
                      100.0 * static_cast<double>(s.unsizedTensors) / static_cast<double>(s.tensors));
  if (s.topAtPeak.empty())
    return;
  os << "  top at the peak:\n";
  for (const MemorySummary::Contributor &c : s.topAtPeak) {
    double share = s.peakAllocatedBytes ? 100.0 * static_cast<double>(c.bytes) / static_cast<double>(s.peakAllocatedBytes)
                                        : 0;
    std::string what = !c.tensor.empty() ? c.tensor
                       : c.kind == "saved"  ? "(state saved for backward)"
                                            : "(" + c.kind + ")";
    os << fmt::format("    {:>12} {:5.1f}%  {:<16} {}{}\n", formatBytes(static_cast<double>(c.bytes)), share, c.kind,
                      what, c.node.empty() ? "" : " from '" + c.node + "'");
  }
}

}  // namespace graphlint
