// A reader of Python pickles of plain values (protocols 2-5: dict, list,
// tuple, str, bytes, int, float, bool, None, with the memo), enough for
// torch.cuda.memory._dump_snapshot()'s file; anything else (a class, a
// reduce) is an error naming the opcode. Private to the engine: graphlint
// compare --snapshot reads measured snapshots with it.
#pragma once

#include <llvm/Support/Error.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace graphlint {

struct PyValue {
  enum class Kind : uint8_t { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict } kind = Kind::None;
  int64_t i = 0;   // Int, Bool
  double f = 0;
  std::string s;   // Str, Bytes
  std::vector<std::shared_ptr<PyValue>> items;  // List, Tuple
  std::vector<std::pair<std::shared_ptr<PyValue>, std::shared_ptr<PyValue>>> dict;

  /// The dict value under a str key, or null.
  const PyValue *get(llvm::StringRef key) const;
  /// A number as int64 (Int, Bool, Float), 0 otherwise.
  int64_t asInt() const { return kind == Kind::Float ? static_cast<int64_t>(f) : i; }
};

llvm::Expected<std::shared_ptr<PyValue>> readPickle(llvm::StringRef bytes);

}  // namespace graphlint
