// The one sorted list of rules. Adding a rule: one file in rules/, one page in
// docs/rules/, one line here (keep it sorted by code).
#include "graphlint/lint/Rule.h"

#include <algorithm>
#include <utility>

namespace graphlint {

const Rule *makeInvalidModelRule();
const Rule *makeUnknownOperatorRule();
const Rule *makeUnresolvedShapeRule();
const Rule *makeMissingWeightsRule();
const Rule *makeUnusedSuppressionRule();
const Rule *makeDtypeMismatchRule();
const Rule *makeRedundantCastRule();
const Rule *makeCrossDeviceRule();
const Rule *makeHostSyncRule();
const Rule *makeDynamicControlFlowRule();
const Rule *makeBranchMismatchRule();
const Rule *makeDataDependentShapeRule();
const Rule *makeInplaceAliasRule();
const Rule *makeInplaceOnSavedTensorRule();
const Rule *makeTensorCoreAlignmentRule();
const Rule *makeLaunchBoundRule();
const Rule *makeExposedCommunicationRule();
const Rule *makeOversizedParameterRule();
const Rule *makeExceedsDeviceMemoryRule();
const Rule *makeActivationHotspotRule();
const Rule *makeAllocatorFragmentationRule();

const std::vector<const Rule *> &allRules() {
  static const std::vector<const Rule *> rules = [] {
    std::vector<const Rule *> r{
        makeInvalidModelRule(),      // GL001
        makeUnknownOperatorRule(),   // GL002
        makeUnresolvedShapeRule(),   // GL003
        makeMissingWeightsRule(),    // GL004
        makeUnusedSuppressionRule(), // GL005
        makeDtypeMismatchRule(),         // GL101
        makeRedundantCastRule(),         // GL102
        makeCrossDeviceRule(),           // GL111
        makeHostSyncRule(),              // GL112
        makeDynamicControlFlowRule(),    // GL121
        makeBranchMismatchRule(),        // GL122
        makeDataDependentShapeRule(),    // GL123
        makeInplaceAliasRule(),          // GL131
        makeInplaceOnSavedTensorRule(),  // GL132
        makeTensorCoreAlignmentRule(),   // GL141
        makeLaunchBoundRule(),           // GL142
        makeExceedsDeviceMemoryRule(),     // GL201
        makeActivationHotspotRule(),       // GL202
        makeAllocatorFragmentationRule(),  // GL203
        makeExposedCommunicationRule(),    // GL301
        makeOversizedParameterRule(),      // GL302
    };
    std::sort(r.begin(), r.end(), [](const Rule *a, const Rule *b) { return a->info().code < b->info().code; });
    return r;
  }();
  return rules;
}

const Rule *findRule(std::string_view codeOrName) {
  for (const Rule *r : allRules()) {
    const RuleInfo &i = r->info();
    if (i.code == codeOrName || i.name == codeOrName)
      return r;
    std::string lower(codeOrName);
    std::transform(lower.begin(), lower.end(), lower.begin(), ::toupper);
    if (i.code == lower)
      return r;
  }
  return nullptr;
}

namespace {
const std::pair<std::string_view, std::string_view> kDocs[] = {
#include "RuleDocs.inc"
};
}  // namespace

std::string_view ruleDoc(std::string_view code) {
  for (const auto &[c, doc] : kDocs)
    if (c == code)
      return doc;
  return {};
}

}  // namespace graphlint
