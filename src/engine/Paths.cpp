#include "graphlint/engine/Paths.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/MessageText.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace graphlint {

std::string absolutePath(llvm::StringRef path) {
  llvm::SmallString<256> a(path);
  llvm::sys::fs::make_absolute(a);
  llvm::sys::path::remove_dots(a, /*remove_dot_dot=*/true);
  return std::string(a);
}

std::string absoluteDirectoryOf(llvm::StringRef path) {
  llvm::SmallString<256> dir(absolutePath(path));
  llvm::sys::path::remove_filename(dir);
  return std::string(dir);
}

std::optional<std::string> gitTopLevelOf(llvm::StringRef path) {
  std::string dir = absoluteDirectoryOf(path);
  for (llvm::StringRef probe = dir; !probe.empty(); probe = llvm::sys::path::parent_path(probe)) {
    llvm::SmallString<256> git(probe);
    llvm::sys::path::append(git, ".git");
    if (llvm::sys::fs::exists(git))
      return probe.str();
    if (probe == llvm::sys::path::root_path(probe))
      break;
  }
  return std::nullopt;
}

std::string repositoryRootOf(llvm::StringRef modelPath) {
  return gitTopLevelOf(modelPath).value_or(absoluteDirectoryOf(modelPath));
}

llvm::Expected<std::string> readFileUnder(llvm::StringRef root, llvm::StringRef relative) {
  bool climbs = false;
  for (auto it = llvm::sys::path::begin(relative), e = llvm::sys::path::end(relative); it != e; ++it)
    climbs |= *it == "..";
  if (relative.empty() || llvm::sys::path::is_absolute(relative) || climbs)
    return stringError("'" + escapedForMessage(relative) + "' is not a path inside '" + escapedForMessage(root) + "'");
  llvm::SmallString<256> path(root), real, realRoot;
  llvm::sys::path::append(path, relative);
  if (llvm::sys::fs::real_path(root, realRoot) || llvm::sys::fs::real_path(path, real) || !pathUnder(real, realRoot))
    return stringError("'" + escapedForMessage(path) + "' does not resolve inside '" + escapedForMessage(root) + "'");
  // The resolved path is what is opened: a link swapped in between cannot
  // point the read elsewhere than the check saw.
  return readInputFile(std::string(real), InputKind::SourceFile);
}

std::optional<std::string> pathUnder(llvm::StringRef path, llvm::StringRef dir) {
  if (dir.empty())
    return std::nullopt;
  std::string prefix = dir.endswith("/") ? dir.str() : dir.str() + "/";
  if (!path.startswith(prefix))
    return std::nullopt;
  return path.drop_front(prefix.size()).str();
}

std::string storedPathKey(const std::string &path, const std::string &dir) {
  std::string abs = absolutePath(path);
  return llvm::sys::path::convert_to_slash(pathUnder(abs, dir).value_or(abs));
}

}  // namespace graphlint
