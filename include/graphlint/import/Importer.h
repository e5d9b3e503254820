// Importers turn a model file into the IR. `importModelFile` picks the
// frontend from the file's content: ONNX protobuf, the JSON FX graph that
// graphlint-export writes (docs/fx-format.md), or a zip: a torch.export.save
// archive (docs/pt2.md). A file that cannot be linted at all yields
// an llvm::Error whose message is one line naming the problem (the caller adds
// the path); everything else becomes an ImportProblem and the lint goes on.
#pragma once

#include "graphlint/fx/FxImporter.h"
#include "graphlint/ir/ImportOptions.h"
#include "graphlint/onnx/OnnxImporter.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <string>

namespace graphlint {

llvm::Expected<std::unique_ptr<Model>> importModelFile(const std::string &path, const ImportOptions &opts);

}  // namespace graphlint
