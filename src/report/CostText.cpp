// `--cost` in the text format: one model's predicted training (or inference)
// step as a table -- forward, backward, optimizer, communication, step --
// then the collectives and gradient buckets (docs/output-formats.md).
#include "graphlint/ir/Display.h"
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

namespace graphlint {
namespace {

std::string ms(double s) { return fmt::format("{:.3f}", s * 1e3); }

}  // namespace

void renderCostText(const CostSummary &s, const std::string &title, llvm::raw_ostream &os) {
  if (!s.present)
    return;
  os << fmt::format("cost of {} on {} (precision {}, contractions in {}; {:.2f} M parameters):\n", title,
                    s.target.empty() ? "an unknown target" : s.target, s.precision, s.matmulMath, s.params / 1e6);
  os << fmt::format("  {:<14} {:>8} {:>12} {:>10} {:>11}\n", "phase", "kernels", "GFLOP", "GB", "time (ms)");
  auto row = [&](const char *phase, unsigned kernels, double flops, double bytes, double seconds) {
    os << fmt::format("  {:<14} {:>8} {:>12.3f} {:>10.3f} {:>11}\n", phase, kernels, flops / 1e9, bytes / 1e9,
                      ms(seconds));
  };
  const CostSummary::Communication &c = s.communication;
  row("forward", s.kernelsForward, s.flopsForward, s.bytesForward, c.present ? c.forwardSeconds : s.secondsForward);
  if (s.train) {
    row("backward", s.kernelsBackward, s.flopsBackward, s.bytesBackward,
        c.present ? c.backwardSeconds : s.secondsBackward);
    os << fmt::format("  {:<14} {:>8} {:>12} {:>10} {:>11}\n", "optimizer", "", "", "", ms(c.optimizerSeconds));
  }
  const bool meshComm = c.present && (!c.mesh.collectives.empty() || c.mesh.pipeline);
  if (c.present && c.mesh.pipeline)
    os << fmt::format("  {:<14} {:>8} {:>12} {:>10} {:>11}  ({}, {} micro-batches, {} virtual stages: {:.3f} of "
                      "the stage's compute)\n",
                      "bubble", "", "", "", ms(c.bubbleSeconds), c.mesh.schedule, c.mesh.microbatches,
                      c.mesh.virtualStages, c.mesh.bubbleFraction);
  if (c.present && (c.strategy != "single" || meshComm))
    os << fmt::format("  {:<14} {:>8} {:>12} {:>10.3f} {:>11}  ({} busy, {} exposed, overlap {:.2f})\n",
                      "communication", "", "", c.bytesPerRank / 1e9, ms(c.exposedSeconds), ms(c.commSeconds),
                      ms(c.exposedSeconds), c.overlapRatio);
  if (c.present)
    os << fmt::format("  {:<14} {:>8} {:>12} {:>10} {:>11}  MFU {:.1f}%\n", "step", "", "", "", ms(c.stepSeconds),
                      c.mfu * 100);
  os << fmt::format("  provenance: {} of {} kernels of unknown cost{}\n", s.unknownGroups, s.scheduledGroups,
                    s.unknownGroups ? " left out (a symbolic size: bind it with --dim; an op without a FLOP formula; "
                                      "control flow)"
                                    : "");
  if (s.lowerBound())
    os << "  LOWER BOUNDS: more than a few percent of the kernels have unknown cost and count as 0, so the true "
          "FLOPs and times are at least those above\n";
  if (s.float8.present) {
    const CostSummary::Float8 &f = s.float8;
    std::string skipped;
    for (const auto &[name, why] : f.skipped)
      if (skipped.size() < 200)
        skipped += fmt::format("{}{}: {}", skipped.empty() ? "" : "; ", name, why);
    os << fmt::format("  float8 {}: {} linears converted ({:.2f} M weight elements), {} left in {}{}{}\n", f.recipe,
                      f.converted, f.weightElements / 1e6, f.skipped.size(), s.matmulMath,
                      skipped.empty() ? "" : ": ", skipped);
    os << fmt::format("  float8 GEMMs at the fp8 peak: {:.3f} GFLOP forward, {:.3f} backward\n",
                      f.fp8FlopsForward / 1e9, f.fp8FlopsBackward / 1e9);
    os << fmt::format("  float8 amax + cast kernels: forward {} kernels, {:.3f} GB, {} ms; backward {} kernels, "
                      "{:.3f} GB, {} ms\n",
                      f.castKernelsForward, f.castBytesForward / 1e9, ms(f.castSecondsForward), f.castKernelsBackward,
                      f.castBytesBackward / 1e9, ms(f.castSecondsBackward));
    if (f.allGather)
      os << "  float8 all-gather: converted weights gathered in fp8, 1 byte per element\n";
  }
  // Per mesh dimension: which collective, on which link, bytes, time, hidden.
  for (const MeshCollective &x : c.mesh.collectives)
    os << fmt::format("  {:<3} {:<8} {} x{} on {} ({} ranks{}): {} each, {} in {} ms, {} ms hidden ({})\n", x.dim,
                      x.phase, x.collective, x.calls, x.link, x.ranks, x.interNode ? ", between nodes" : "",
                      formatBytes(x.bytesPerCall), formatBytes(x.bytesPerRank), ms(x.seconds), ms(x.hiddenSeconds),
                      x.what);
  if (!c.present || c.strategy == "single") {
    for (const std::string &n : c.notes)
      os << "  note: " << n << "\n";
    return;
  }
  os << fmt::format("  {} on {} ranks ({} per node, {} inside a node, {} between nodes), {}-byte elements\n",
                    c.strategy, c.worldSize, c.gpusPerNode, c.intra, c.inter, c.elementBytes);
  for (const CostSummary::Collective &x : c.collectives)
    os << fmt::format("  {:<8} {} x{} ({}): {} in {} ms\n", x.phase == "after optimizer" ? "step" : x.phase, x.kind,
                      x.count, x.algorithm, formatBytes(x.bytes), ms(x.seconds));
  for (const CostSummary::Bucket &b : c.buckets)
    os << fmt::format("  bucket {:>3}: {:>10}, {:>4} params, ready {} ms, reduced {}-{} ms\n", b.index, formatBytes(b.bytes),
                      b.params, ms(b.ready), ms(b.start), ms(b.end));
  for (const CostSummary::Communication::Unit &u : c.units)
    os << fmt::format("  unit   {:>3}: {:>10}, {:>4} params, reduce-scatter ready {} ms, {}-{} ms  {}\n", u.index,
                      formatBytes(u.bytes), u.params, ms(u.ready), ms(u.start), ms(u.end), u.name);
  for (const std::string &n : c.notes)
    os << "  note: " << n << "\n";
}

}  // namespace graphlint
