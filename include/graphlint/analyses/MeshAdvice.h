// What a larger tensor- or pipeline-parallel degree would make of the peak
// (GL201's advice, "tp 8 fits: 71 GiB"): the memory plan run again, whole,
// under the setup with that one degree raised (the other degrees kept, so
// the world grows by the factor). Computed only when a rule asks.
#pragma once

#include "graphlint/analyses/Analysis.h"

#include <string>
#include <vector>

namespace graphlint {

struct MeshCandidate {
  std::string knob;       // "tp", "pp"
  unsigned degree = 1;
  unsigned worldSize = 1;
  uint64_t peakReservedBytes = 0;
  std::string describe() const;  // "tp 8 (world size 64)"
};

class MeshAdvice {
public:
  MeshAdvice(const Model &m, AnalysisContext &ctx);
  /// tp 2, 4, ... up to the GPUs of a node, above the current degree; pp 2,
  /// 4, 8, 16 above the current one while the graph has layers to cut; in
  /// increasing degree per knob.
  const std::vector<MeshCandidate> &candidates() const { return candidates_; }

private:
  std::vector<MeshCandidate> candidates_;
};

}  // namespace graphlint
