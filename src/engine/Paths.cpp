#include "graphlint/engine/Paths.h"

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

std::optional<std::string> pathUnder(llvm::StringRef path, llvm::StringRef dir) {
  if (dir.empty())
    return std::nullopt;
  std::string prefix = dir.endswith("/") ? dir.str() : dir.str() + "/";
  if (!path.startswith(prefix))
    return std::nullopt;
  return path.drop_front(prefix.size()).str();
}

}  // namespace graphlint
