// Read-only access to the zip container of a torch.export `.pt2` archive,
// through libzip. Entry names are only ever compared as strings, never used
// as filesystem paths; every read is capped (a zip bomb's declared sizes are
// not trusted: reading stops at the cap); weight entries are never read.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <memory>
#include <string>
#include <vector>

namespace graphlint::pt2 {

class Pt2Archive {
public:
  /// Opens the zip on a duplicate of `fd` (the caller keeps its own). The
  /// error is one line: not a zip, truncated, corrupt.
  static llvm::Expected<Pt2Archive> open(int fd);
  Pt2Archive(Pt2Archive &&) noexcept;
  ~Pt2Archive();

  const std::vector<std::string> &names() const { return names_; }
  /// The uncompressed bytes of entry `name`, refusing more than `cap` bytes.
  llvm::Expected<std::string> read(llvm::StringRef name, uint64_t cap) const;

private:
  struct Handle;
  explicit Pt2Archive(std::unique_ptr<Handle> h, std::vector<std::string> names);
  std::unique_ptr<Handle> h_;
  std::vector<std::string> names_;
};

}  // namespace graphlint::pt2
