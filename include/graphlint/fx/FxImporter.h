// The FX frontend (src/fx): the JSON FX graph that graphlint-export writes
// (docs/fx-format.md) into the IR. torch.export's .pt2 archives, read into
// the same IR: graphlint/pt2/Pt2Importer.h.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/ImportOptions.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <string>

namespace graphlint {

/// The graphlint-fx versions importFxBytes reads (docs/fx-format.md): version
/// 2 adds size expressions and the `symbols` table; 1 is read as before.
/// `graphlint --version` prints them, so the Python package can check its
/// exporter against the binary.
inline constexpr int64_t kFxFormatOldest = 1;
inline constexpr int64_t kFxFormatNewest = 2;

/// Imports an FX graph (graphlint-export JSON) already in memory; `path`
/// names it in messages.
llvm::Expected<std::unique_ptr<Model>> importFxBytes(llvm::StringRef bytes, const std::string &path,
                                                     const ImportOptions &opts);

}  // namespace graphlint
