// The glob patterns of per-file-ignores and per-node-ignores
// (docs/configuration.md#glob-patterns): `*` any run of characters ('/'
// included), `?` any one character, `[abc]` / `[a-z]` a class, `[!x]` or
// `[^x]` its complement, `\` escapes the next character. Matching is
// greedy with one backtrack point (the last `*`), so it takes at most
// pattern length x text length steps: a pattern of many stars cannot make it
// exponential, as llvm::GlobPattern's recursive backtracking was.
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
  };
  std::vector<Token> tokens_;
};

}  // namespace graphlint
