#include "graphlint/engine/OutputFiles.h"

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

void OutputGuard::addInput(const std::string &path, const std::string &role) {
  llvm::sys::fs::UniqueID id;
  if (path.empty() || path == "-" || llvm::sys::fs::getUniqueID(path, id))
    return;
  inputs_.push_back({path, role, id});
}

llvm::Error OutputGuard::check(const std::string &path, llvm::StringRef flag, llvm::StringRef allowedRole) const {
  llvm::sys::fs::UniqueID id;
  // getUniqueID follows symlinks: an output that does not exist yet cannot be
  // an input, and one that is a link to an input resolves to it.
  if (path.empty() || path == "-" || llvm::sys::fs::getUniqueID(path, id))
    return llvm::Error::success();
  for (const Input &in : inputs_)
    if (in.id == id && in.role != allowedRole)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "refusing to write %s '%s': it is the %s '%s' this run reads (the output would overwrite it)",
          flag.str().c_str(), path.c_str(), in.role.c_str(), in.path.c_str());
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
