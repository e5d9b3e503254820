// Importers turn a model file into the IR. `importModelFile` picks the
// frontend from the file's content: ONNX protobuf, the JSON FX graph that
// graphlint-export writes (docs/fx-format.md), or a zip: a torch.export.save
// archive (docs/pt2.md). A file that cannot be linted at all yields
// an llvm::Error whose message is one line naming the problem (the caller adds
// the path); everything else becomes an ImportProblem and the lint goes on.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/Support/Error.h>

#include <map>
#include <memory>
#include <string>

namespace graphlint {

struct ImportOptions {
  /// Binds size symbols by name (--dim batch=8), before shape completion;
  /// every importer applies them through SymbolBinder.
  std::map<std::string, int64_t> dims;
  /// Forget the declared types of graph outputs and intermediate values, so
  /// that shape completion alone determines them (used to validate inference).
  bool dropDeclaredTypes = false;
};

llvm::Expected<std::unique_ptr<Model>> importModelFile(const std::string &path, const ImportOptions &opts);

/// Imports ONNX bytes already in memory; `path` names them in messages and
/// locates external data.
llvm::Expected<std::unique_ptr<Model>> importOnnxBytes(llvm::StringRef bytes, const std::string &path,
                                                       const ImportOptions &opts);

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
