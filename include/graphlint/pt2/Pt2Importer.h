// The .pt2 frontend: reads an archive written by torch.export.save (a zip
// holding the serialized ExportedProgram in models/*.json) into the same IR
// the FX importer builds, so that every rule fires at the user's lines. What
// is read and its limits: docs/pt2.md.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/ImportOptions.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <string>

namespace graphlint::pt2 {

/// True when `head` starts with a zip signature (local file header or an
/// empty archive's end record).
bool looksLikeZip(llvm::StringRef head);

/// Imports the archive open on `fd` (not taken over); `path` names it in
/// messages and anchors relative source paths.
llvm::Expected<std::unique_ptr<Model>> importPt2(int fd, const std::string &path, uint64_t fileSize,
                                                 const ImportOptions &opts);

/// Imports the ExportedProgram JSON itself (models/model.json), for tests
/// and for archives already unpacked; `entry` names it in messages.
/// `symbolNames` is the archive's extra/graphlint_symbols.json, if any.
llvm::Expected<std::unique_ptr<Model>> importExportedProgram(llvm::StringRef json, llvm::StringRef weightsConfig,
                                                             const std::string &path, const std::string &entry,
                                                             const ImportOptions &opts,
                                                             llvm::StringRef symbolNames = {});

}  // namespace graphlint::pt2
