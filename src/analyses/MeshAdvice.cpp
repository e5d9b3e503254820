// GL201's what-if (MeshAdvice.h): the memory plan under a raised tp or pp.
#include "graphlint/analyses/MeshAdvice.h"

#include "graphlint/analyses/MemoryPlan.h"

#include <fmt/format.h>

namespace graphlint {

std::string MeshCandidate::describe() const { return fmt::format("{} {} (world size {})", knob, degree, worldSize); }

MeshAdvice::MeshAdvice(const Model &m, AnalysisContext &ctx) {
  const Setup &s = ctx.setup();
  if (!s.train || !m.graph)
    return;
  auto tryDegree = [&](const char *knob, unsigned degree) {
    Setup what = s;
    what.worldSize = 0;
    what.dpReplicate = s.mesh.dpReplicate;
    what.dpShard = s.mesh.dpShard;
    what.tp = s.mesh.tp;
    what.pp = s.mesh.pp;
    what.cp = s.mesh.cp;
    what.ep = s.mesh.ep;
    what.ppSplitPoints.clear();
    (std::string(knob) == "tp" ? what.tp : what.pp) = degree;
    if (std::string(knob) == "pp" && what.microbatches && what.microbatches < degree)
      what.microbatches = degree;
    if (what.resolveMesh())
      return false;
    AnalysisContext again(m, what);
    const MemorySummary &sum = again.get<MemoryPlan>().summary();
    if (std::string(knob) == "pp" && sum.stages.empty())
      return false;  // too few layers to cut
    candidates_.push_back({knob, degree, what.mesh.worldSize(), sum.peakReservedBytes});
    return true;
  };
  for (unsigned tp = s.mesh.tp * 2; tp <= std::max(1u, s.gpusPerNode); tp *= 2)
    tryDegree("tp", tp);
  for (unsigned pp = s.mesh.pp * 2; pp <= 16; pp *= 2)
    if (!tryDegree("pp", pp))
      break;
}

}  // namespace graphlint
