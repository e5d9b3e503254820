// Path arithmetic shared by the config discovery, per-file ignores, the
// baseline and the SARIF reporter: absolute, normalised paths and "relative
// to a directory when under it".
#pragma once

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>

namespace graphlint {

/// `path` made absolute (against the current directory) with `.` and `..`
/// components removed.
std::string absolutePath(llvm::StringRef path);
/// The directory holding `path`, absolute and normalised.
std::string absoluteDirectoryOf(llvm::StringRef path);
/// `path` with the prefix `dir` + '/' removed when `path` lies under `dir`
/// (plain string prefix: pass both in the same form); nullopt otherwise or
/// when `dir` is empty.
std::optional<std::string> pathUnder(llvm::StringRef path, llvm::StringRef dir);

}  // namespace graphlint
