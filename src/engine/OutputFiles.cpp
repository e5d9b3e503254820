#include "graphlint/engine/OutputFiles.h"

#include "graphlint/engine/Paths.h"
#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Signals.h>

namespace graphlint {

namespace {

llvm::Error cannotWrite(const std::string &path, const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot write '%s': %s", path.c_str(), why.c_str());
}

}  // namespace

namespace {

// The absolute path with its folder resolved (symlinks, '..'): two spellings
// of one file that does not exist yet compare equal.
std::string normalizedPath(const std::string &path) {
  std::string abs = absolutePath(path);
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(abs)), real;
  if (!llvm::sys::fs::real_path(dir, real))
    dir = real;
  llvm::sys::path::append(dir, llvm::sys::path::filename(abs));
  return std::string(dir);
}

}  // namespace

void OutputGuard::addInput(const std::string &path, const std::string &role) {
  llvm::sys::fs::UniqueID id;
  if (path.empty() || path == "-" || llvm::sys::fs::getUniqueID(path, id))
    return;
  inputs_.push_back({path, role, id, normalizedPath(path)});
}

llvm::Error OutputGuard::addOutput(const std::string &path, llvm::StringRef flag, llvm::StringRef allowedRole) {
  if (path.empty() || path == "-")
    return llvm::Error::success();
  // stdout, /dev/null, a FIFO: written in place, nothing is replaced.
  llvm::sys::fs::file_status st;
  if (!llvm::sys::fs::status(path, st) && st.type() != llvm::sys::fs::file_type::regular_file)
    return llvm::Error::success();
  File out{path, flag.str(), std::nullopt, normalizedPath(path)};
  // getUniqueID follows symlinks: a link to an input resolves to it.
  llvm::sys::fs::UniqueID id;
  if (!llvm::sys::fs::getUniqueID(path, id))
    out.id = id;
  auto same = [&](const File &f) { return (out.id && f.id && *out.id == *f.id) || out.normalized == f.normalized; };
  for (const File &in : inputs_)
    if (in.role != allowedRole && same(in))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "refusing to write %s '%s': it is the %s '%s' this run reads (the output would overwrite it)",
          flag.str().c_str(), oneLine(path).c_str(), in.role.c_str(), oneLine(in.path).c_str());
  for (const File &o : outputs_)
    if (same(o))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "refusing to write %s '%s': %s writes the same file '%s' (one output would "
                                     "replace the other)",
                                     flag.str().c_str(), oneLine(path).c_str(), o.role.c_str(),
                                     oneLine(o.path).c_str());
  outputs_.push_back(std::move(out));
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<AtomicOutput>> AtomicOutput::create(const std::string &path) {
  std::unique_ptr<AtomicOutput> out(new AtomicOutput());
  out->path_ = out->target_ = path;
  std::error_code ec;
  llvm::sys::fs::file_status st;
  bool exists = !llvm::sys::fs::status(path, st);
  if (path == "-" || (exists && st.type() != llvm::sys::fs::file_type::regular_file)) {
    // stdout, /dev/null, a FIFO: nothing to replace, written in place.
    out->os_ = std::make_unique<llvm::raw_fd_ostream>(path, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return cannotWrite(path, ec.message());
    out->committed_ = true;  // nothing to rename
    return std::move(out);
  }
  // Replace the file a symlink points at, not the link.
  llvm::SmallString<256> real;
  if (exists && !llvm::sys::fs::real_path(path, real))
    out->target_ = std::string(real);
  llvm::SmallString<256> model(llvm::sys::path::parent_path(out->target_));
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(out->target_).str() + ".graphlint-%%%%%%.tmp");
  int fd = -1;
  llvm::SmallString<256> temp;
  if (std::error_code e = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return cannotWrite(path, e.message());
  out->temp_ = std::string(temp);
  llvm::sys::RemoveFileOnSignal(out->temp_);
  out->os_ = std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
  return std::move(out);
}

AtomicOutput::~AtomicOutput() {
  if (committed_ || temp_.empty())
    return;
  os_.reset();
  llvm::sys::fs::remove(temp_);
  llvm::sys::DontRemoveFileOnSignal(temp_);
}

llvm::Error AtomicOutput::commit() {
  os_->flush();
  if (committed_) {  // written in place
    if (std::error_code ec = os_->error()) {
      os_->clear_error();
      return cannotWrite(path_, ec.message());
    }
    return llvm::Error::success();
  }
  os_->close();
  if (std::error_code ec = os_->error()) {
    os_->clear_error();
    return cannotWrite(path_, ec.message());
  }
  // Keep the permissions of the file being replaced.
  if (auto perms = llvm::sys::fs::getPermissions(target_))
    (void)llvm::sys::fs::setPermissions(temp_, *perms);
  if (std::error_code ec = llvm::sys::fs::rename(temp_, target_))
    return cannotWrite(path_, ec.message());
  llvm::sys::DontRemoveFileOnSignal(temp_);
  committed_ = true;
  return llvm::Error::success();
}

llvm::Error writeOutputAtomically(const std::string &path, llvm::function_ref<void(llvm::raw_ostream &)> render) {
  auto out = AtomicOutput::create(path);
  if (!out)
    return out.takeError();
  render((*out)->os());
  return (*out)->commit();
}

}  // namespace graphlint
