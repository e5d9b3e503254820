// The registry: src/rules/Rules.def expanded into the factories' declarations and
// the list allRules() returns, in the file's order (sorted by code).
#include "graphlint/rules/Rule.h"

#include <llvm/Support/ErrorHandling.h>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace graphlint {

#define GRAPHLINT_RULE(code, Class) const Rule *make##Class##Rule();
#include "Rules.def"
#undef GRAPHLINT_RULE

const std::vector<const Rule *> &allRules() {
  static const std::vector<const Rule *> rules = [] {
    const std::pair<std::string_view, const Rule *> listed[] = {
#define GRAPHLINT_RULE(code, Class) {#code, make##Class##Rule()},
#include "Rules.def"
#undef GRAPHLINT_RULE
    };
    // The list's code column is what keeps it sorted (and what new_rule.py
    // sorts by): a line that disagrees with its rule is a build mistake, so
    // every binary and test stops at once rather than list rules out of order.
    std::vector<const Rule *> r;
    for (const auto &[code, rule] : listed) {
      std::string_view actual = rule->info().code;
      if (actual != code)
        llvm::report_fatal_error(
            llvm::Twine(fmt::format("src/rules/Rules.def: the line of {} names the rule {}", code, actual)));
      if (!r.empty() && r.back()->info().code >= code)
        llvm::report_fatal_error(llvm::Twine(
            fmt::format("src/rules/Rules.def: {} comes after {}; keep the list sorted by code", code, r.back()->info().code)));
      r.push_back(rule);
    }
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
