#include "graphlint/rules/RuleSelectors.h"

#include "graphlint/rules/Rule.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

namespace graphlint {

std::vector<std::string> resolveRuleSelector(llvm::StringRef selector) {
  std::vector<std::string> out;
  std::string upper = selector.upper();
  for (const Rule *r : allRules()) {
    const RuleInfo &i = r->info();
    llvm::StringRef code(i.code.data(), i.code.size());
    bool prefix = upper.size() >= 2 && upper.size() <= code.size() && code.startswith(upper) &&
                  llvm::all_of(llvm::StringRef(upper).drop_front(2), llvm::isDigit);
    if (upper == "ALL" || prefix || selector == llvm::StringRef(i.name.data(), i.name.size()))
      out.emplace_back(i.code);
  }
  return out;
}

Location sourceSuppressionLocation(const std::string &modelPath, const SourceSuppression &s) {
  Location l = Location::ofFile(modelPath);
  l.source.file = s.file;
  l.source.line = s.line;
  return l;
}

std::optional<NodeSuppression> nodeSuppressionOf(const Node &n) {
  std::optional<NodeSuppression> out;
  for (const auto &[key, value] : n.metadata) {
    if (key != kIgnoreMetadataKey)
      continue;
    if (!out)
      out.emplace();
    llvm::SmallVector<llvm::StringRef, 4> parts;
    llvm::StringRef(value).split(parts, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts) {
      std::string token = part.trim().str();
      if (token.empty())
        continue;
      std::vector<std::string> codes = resolveRuleSelector(token);
      if (codes.empty())
        out->unknown.push_back(token);
      else
        out->entries.push_back({token, std::move(codes)});
    }
  }
  return out;
}

}  // namespace graphlint
