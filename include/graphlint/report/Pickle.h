// A streaming writer of Python's pickle format, protocol 2, for the plain
// values torch's tools read (dicts, lists, tuples, str, int, float, bool,
// None): `--emit-memory-snapshot` writes the dict torch.cuda.memory._snapshot()
// returns without a Python interpreter. Containers are written as
// EMPTY_DICT/EMPTY_LIST + MARK ... SETITEMS/APPENDS, so nothing is buffered;
// no memo is kept (pickle.load needs none for values without cycles).
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <vector>

namespace graphlint {

class PickleWriter {
public:
  /// Writes the protocol header.
  explicit PickleWriter(llvm::raw_ostream &os);

  void beginDict();   // then key/value pairs
  void beginList();
  void beginTuple();  // a tuple of any length (MARK ... TUPLE)
  void end();         // closes the innermost container
  /// A dict key: a str value.
  void key(llvm::StringRef k) { str(k); }

  void str(llvm::StringRef s);  // UTF-8 text (BINUNICODE)
  void integer(int64_t v);
  void unsignedInteger(uint64_t v);
  void real(double v);
  void boolean(bool v);
  void none();

  /// The STOP opcode; every container must be closed.
  void finish();
  /// Containers still open (0 after a well-formed value).
  size_t depth() const { return open_.size(); }

private:
  enum class Open : uint8_t { Dict, List, Tuple };
  void byte(uint8_t b) { os_ << static_cast<char>(b); }
  /// A signed integer of `n` bytes, little endian, as LONG1 carries it.
  void long1(int64_t v, bool negativeHigh);
  llvm::raw_ostream &os_;
  std::vector<Open> open_;
};

}  // namespace graphlint
