// Path arithmetic shared by the config discovery, per-file ignores, the
// baseline and the SARIF reporter: absolute, normalised paths and "relative
// to a directory when under it".
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <optional>
#include <string>

namespace graphlint {

/// `path` made absolute (against the current directory) with `.` and `..`
/// components removed.
std::string absolutePath(llvm::StringRef path);
/// The directory holding `path`, absolute and normalised.
std::string absoluteDirectoryOf(llvm::StringRef path);
/// The git top-level directory holding `path` (the nearest folder above it
/// with a `.git`), absolute; nullopt outside any repository.
std::optional<std::string> gitTopLevelOf(llvm::StringRef path);
/// The model's repository: gitTopLevelOf(modelPath), else the model's own
/// folder; absolute. Snippets are read and configs discovered only inside it.
std::string repositoryRootOf(llvm::StringRef modelPath);

/// The whole of `relative` under `root`, through the checked input reader:
/// refused (an error without the file's content) when it is absolute, climbs
/// with '..', is not a regular file, or resolves (symlinks) outside `root`.
/// Never relative to the current directory.
llvm::Expected<std::string> readFileUnder(llvm::StringRef root, llvm::StringRef relative);

/// `path` with the prefix `dir` + '/' removed when `path` lies under `dir`
/// (plain string prefix: pass both in the same form); nullopt otherwise or
/// when `dir` is empty.
std::optional<std::string> pathUnder(llvm::StringRef path, llvm::StringRef dir);

/// A model path as a file beside it (a baseline, an expected-values file)
/// stores it: relative to `dir` (absolute) when under it, else absolute;
/// '/'-separated.
std::string storedPathKey(const std::string &path, const std::string &dir);

}  // namespace graphlint
