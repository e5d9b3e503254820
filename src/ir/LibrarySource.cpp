#include "graphlint/ir/LibrarySource.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <cctype>

namespace graphlint {

std::string libraryOf(std::string_view file) {
  llvm::StringRef path(file.data(), file.size());
  // A relative path is the exporter's spelling of a file inside the user's
  // repository: never a library, whatever its folders are called.
  if (!path.startswith("/") && !(path.size() > 2 && path[1] == ':'))
    return "";
  llvm::SmallVector<llvm::StringRef, 16> parts;
  path.split(parts, path.contains('\\') ? '\\' : '/', -1, false);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == "site-packages" || parts[i] == "dist-packages") {
      llvm::StringRef pkg = parts[i + 1];
      if (pkg.endswith(".py"))
        pkg = pkg.drop_back(3);
      return pkg.str();
    }
  }
  // lib/python3.11/json/decoder.py (no site-packages below it): the standard library.
  for (size_t i = 0; i + 2 < parts.size(); ++i)
    if (parts[i] == "lib" && parts[i + 1].startswith("python") && parts[i + 1].size() > 6 &&
        std::isdigit(static_cast<unsigned char>(parts[i + 1][6])))
      return "python";
  return "";
}

}  // namespace graphlint
