#include "graphlint/onnx/ExternalData.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace graphlint {

namespace {

llvm::Error refuse(std::string why) { return llvm::createStringError(llvm::inconvertibleErrorCode(), why); }

}  // namespace

llvm::Expected<std::string> resolveExternalData(const std::string &modelPath, const std::string &loc) {
  std::string shown = escapedForMessage(loc);
  if (loc.empty())
    return refuse("has an empty external data location");
  if (loc.find('\0') != std::string::npos)
    return refuse(fmt::format("external data path '{}' contains a NUL byte; refused", shown));
  if (llvm::sys::path::is_absolute(loc) || llvm::sys::path::is_absolute(loc, llvm::sys::path::Style::windows) ||
      loc.find(':') != std::string::npos)
    return refuse(fmt::format("names an absolute external data path '{}'; refused", shown));
  int depth = 0;
  for (auto it = llvm::sys::path::begin(loc), e = llvm::sys::path::end(loc); it != e; ++it) {
    if (*it == "..")
      --depth;
    else if (*it != ".")
      ++depth;
    if (depth < 0)
      return refuse(fmt::format("external data path '{}' escapes the model's directory; refused", shown));
  }
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(modelPath));
  if (dir.empty())
    dir = ".";
  llvm::SmallString<256> full(dir);
  llvm::sys::path::append(full, loc);
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(full, st))
    return full.str().str();  // absent: reported as missing weights
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return refuse(fmt::format("external data path '{}' is not a regular file; refused", shown));
  llvm::SmallString<256> realDir, realFile;
  if (!llvm::sys::fs::real_path(dir, realDir) && !llvm::sys::fs::real_path(full, realFile) &&
      !llvm::StringRef(realFile).startswith((realDir + "/").str()))
    return refuse(
        fmt::format("external data path '{}' resolves outside the model's directory (symlink); refused", shown));
  return full.str().str();
}

llvm::Expected<std::string> readExternalData(const std::string &modelPath, const std::string &location,
                                             uint64_t offset, uint64_t length) {
  auto path = resolveExternalData(modelPath, location);
  if (!path)
    return path.takeError();
  auto file = InputFile::open(*path);
  if (!file)
    return refuse(fmt::format("external data '{}': {}", escapedForMessage(location), llvm::toString(file.takeError())));
  auto bytes = file->read(offset, length);
  if (!bytes)
    return refuse(
        fmt::format("external data '{}': {}", escapedForMessage(location), llvm::toString(bytes.takeError())));
  return bytes;
}

}  // namespace graphlint
