// The glob patterns of per-file-ignores and per-node-ignores
// (docs/configuration.md#glob-patterns): `*` any run of characters ('/'
// included), `?` any one character, `[abc]` / `[a-z]` a class, `[!x]` or
// `[^x]` its complement, `\` escapes the next character. The stars cut the
// pattern into segments; the first must match the start of the text, the
// last its end, and each one between is matched at its leftmost occurrence
// after the previous one (leftmost is always safe: a later occurrence leaves
// less text for the rest). A segment of plain bytes is found with KMP, one
// with `?` or classes bit-parallel (Shift-And), so a match takes
// O(pattern + text) steps when the inner segments are plain bytes (always
// with one star or none), and O(text x segment/64) otherwise: neither a
// pattern of many stars nor one long segment can stall the run.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <bitset>
#include <vector>

namespace graphlint {

class Glob {
public:
  /// Compiles `pattern`; an unterminated `[`, an empty or reversed range
  /// (`[z-a]`) or a trailing `\` is an error naming the problem.
  static llvm::Expected<Glob> compile(llvm::StringRef pattern);
  bool matches(llvm::StringRef text) const;

private:
  struct Token {
    bool star = false;
    std::bitset<256> chars;  // the bytes one position accepts (not star)
    int byte = -1;           // the one byte `chars` holds, when it holds one
  };
  /// Tokens [begin, end) between two stars (or an end of the pattern).
  struct Segment {
    size_t begin, end;
    size_t size() const { return end - begin; }
  };
  bool matchesAt(Segment s, llvm::StringRef text, size_t at) const;
  size_t find(Segment s, llvm::StringRef text, size_t from, size_t to) const;
  std::vector<Token> tokens_;
};

}  // namespace graphlint
