// What a rule selector names (a code, a name, a code prefix, ALL), and the
// suppressions a model carries with it. Here, beside the registry, because
// both the config (src/engine/Config.cpp, src/engine/Suppressions.cpp) and GL005, a rule,
// read them: docs/configuration.md#suppressions.
#pragma once

#include "graphlint/base/Diagnostic.h"

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>
#include <vector>

namespace graphlint {

/// Rule codes a selector names: a code (GL101), a name (dtype-mismatch), a
/// code prefix (GL1) or ALL; empty when it names nothing.
std::vector<std::string> resolveRuleSelector(llvm::StringRef selector);

/// The ONNX node metadata_props key of a suppression that travels with the
/// model: `graphlint.ignore` = "GL101,GL131" (codes, names, prefixes, ALL).
inline constexpr const char *kIgnoreMetadataKey = "graphlint.ignore";

/// What a node's graphlint.ignore metadata names.
struct NodeSuppression {
  struct Entry {
    std::string token;               // as written
    std::vector<std::string> codes;  // the rule codes it names
  };
  std::vector<Entry> entries;         // entries that name rules
  std::vector<std::string> unknown;   // entries that name no rule
};
/// nullopt when the node has no graphlint.ignore metadata.
std::optional<NodeSuppression> nodeSuppressionOf(const Node &n);

/// Where GL005 points for a suppression comment in the user's source: that
/// file:line, the model file as the graph location.
Location sourceSuppressionLocation(const std::string &modelPath, const SourceSuppression &s);

}  // namespace graphlint
