// A linear guard run before llvm::json::parse, which recurses once per
// nesting level: a document nested deeper than any valid file would only
// exhaust the stack. Shared by the JSON frontends (FX, .pt2).
#pragma once

#include <llvm/ADT/StringRef.h>

namespace graphlint {

inline bool jsonNestingWithin(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
    case '"':  // skip the string, escaped quotes included
      for (++i; i < text.size() && text[i] != '"'; ++i)
        i += text[i] == '\\';
      break;
    case '[':
    case '{':
      if (++depth > limit)
        return false;
      break;
    case ']':
    case '}':
      depth -= depth > 0;
      break;
    default:
      break;
    }
  }
  return true;
}

}  // namespace graphlint
