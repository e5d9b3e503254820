// importModelFile: the one entry point that takes a path. It refuses what is
// clearly not a model (a directory, a Git LFS pointer, Python source), then
// picks the frontend from the content: a zip is a .pt2 archive, JSON an FX
// graph, anything else ONNX protobuf.
#include "graphlint/ir/Display.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/import/Importer.h"
#include "graphlint/ir/InputFile.h"
#include "graphlint/pt2/Pt2Importer.h"

#include <fmt/format.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace graphlint {
namespace {

// Python source: the model's code rather than an export of it (a user's
// first try is often `graphlint model.py`).
bool looksLikePython(llvm::StringRef path, llvm::StringRef head) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".py" || ext == ".pyw")
    return true;
  return (head.startswith("#!") && head.take_until([](char c) { return c == '\n'; }).contains("python")) ||
         head.startswith("import ") || head.startswith("from ") || head.startswith("# -*- coding");
}

// Refuses files that are clearly not models before parsing them.
llvm::Error sniff(llvm::StringRef path, llvm::StringRef head) {
  if (head.startswith("version https://git-lfs.github.com/spec/"))
    return stringError("is a Git LFS pointer file, not the model itself (run `git lfs pull` to fetch it)");
  if (looksLikePython(path, head))
    return stringError(fmt::format("is Python source, not a model: export it first with `graphlint-export {} -o {}.fx.json "
                            "[--train]` and lint the .fx.json (docs/fx-format.md)",
                            llvm::sys::path::filename(path).str(), llvm::sys::path::stem(path).str()));
  return llvm::Error::success();
}

// JSON is the FX frontend's format (graphlint-export); ONNX is protobuf.
bool looksLikeJson(llvm::StringRef head) {
  llvm::StringRef t = head.ltrim();
  return t.startswith("{") || t.startswith("[");
}

}  // namespace

llvm::Expected<std::unique_ptr<Model>> importModelFile(const std::string &path, const ImportOptions &opts) {
  llvm::sys::fs::file_status st;
  if (std::error_code ec = llvm::sys::fs::status(path, st))
    return stringError(ec == std::errc::no_such_file_or_directory ? "no such file" : ec.message());
  if (st.type() == llvm::sys::fs::file_type::directory_file)
    return stringError("is a directory, not a model file");
  if (st.type() != llvm::sys::fs::file_type::regular_file)
    return stringError("is not a regular file");
  // Read with pread through a window, never mmap: weight pages must not
  // become part of our resident set. Small files are read whole. The open
  // does not block and re-checks the type on the descriptor (a FIFO swapped
  // in after the stat is refused, not waited on).
  auto file = InputFile::open(path);
  if (!file)
    return file.takeError();
  uint64_t size = file->size();
  char head[64];
  ssize_t got = ::pread(file->fd(), head, sizeof head, 0);
  if (got < 0)
    return stringError(fmt::format("cannot read: {}", std::strerror(errno)));
  if (llvm::Error e = sniff(path, llvm::StringRef(head, static_cast<size_t>(got))))
    return e;
  if (pt2::looksLikeZip(llvm::StringRef(head, static_cast<size_t>(got))))
    return pt2::importPt2(file->fd(), path, size, opts);  // recognised by content, whatever the extension
  constexpr uint64_t kReadWhole = 8ull << 20;
  bool json = looksLikeJson(llvm::StringRef(head, static_cast<size_t>(got)));
  if (json && size > maxInputBytes(InputKind::FxGraph))
    return stringError(fmt::format("is a {} JSON file, larger than the {} limit for FX graphs (an FX graph "
                            "holds no weights; is this really a graphlint-export file?)",
                            formatBytes(static_cast<double>(size)),
                            formatBytes(static_cast<double>(maxInputBytes(InputKind::FxGraph)))));
  if (json || size <= kReadWhole) {
    llvm::Expected<std::string> whole = [&]() -> llvm::Expected<std::string> {
      try {
        return file->read(0, size);
      } catch (const std::bad_alloc &) {
        return stringError(fmt::format("cannot hold its {} bytes in memory", size));
      }
    }();
    if (!whole)
      return whole.takeError();
    if (!json)
      return importOnnxBytes(*whole, path, opts);
    try {
      return importFxBytes(*whole, path, opts);
    } catch (const std::bad_alloc &) {
      return stringError("out of memory while reading the FX graph");
    }
  }
  return importOnnxFile(file->fd(), size, path, opts);
}

}  // namespace graphlint
