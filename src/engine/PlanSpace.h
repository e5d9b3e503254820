// The space `graphlint plan` searches (Plan.h): the model's facts that bound
// it and the enumeration of candidate setups, private to the engine.
#pragma once

#include "graphlint/engine/Plan.h"
#include "graphlint/ir/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace graphlint {

/// --fix KEY=VALUE, checked and canonical (checkPlanFix), by key.
using PlanFixes = std::map<std::string, std::string>;

/// Heads, layers, experts and tokens per sample of `m`, imported with the
/// per-rank batch `batch`.
PlanModelFacts planModelFacts(const Model &m, int64_t batch);

struct PlanSpace {
  std::vector<PlanSetup> setups;    // in enumeration order
  std::vector<std::string> notes;   // limits of the space, stated
};

/// Every candidate on req.targets x req.gpus that the model and the
/// topology allow and `fix` keeps, for a global batch of `globalBatch`
/// samples.
PlanSpace enumeratePlanSpace(const PlanRequest &req, const PlanModelFacts &f, uint64_t globalBatch,
                             const PlanFixes &fix);

}  // namespace graphlint
