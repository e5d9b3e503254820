#include "graphlint/engine/Glob.h"

#include <fmt/format.h>

namespace graphlint {

namespace {

llvm::Error bad(const std::string &why) { return llvm::createStringError(llvm::inconvertibleErrorCode(), why); }

// The body of a class between '[' and ']': single bytes and X-Y ranges.
llvm::Expected<std::bitset<256>> classOf(llvm::StringRef body) {
  std::bitset<256> set;
  while (!body.empty()) {
    if (body.size() >= 3 && body[1] == '-') {
      unsigned char lo = static_cast<unsigned char>(body[0]), hi = static_cast<unsigned char>(body[2]);
      if (lo > hi)
        return bad(fmt::format("reversed range '{}-{}' in a [...] class", body[0], body[2]));
      for (unsigned c = lo; c <= hi; ++c)
        set.set(c);
      body = body.drop_front(3);
    } else {
      set.set(static_cast<unsigned char>(body[0]));
      body = body.drop_front(1);
    }
  }
  return set;
}

}  // namespace

llvm::Expected<Glob> Glob::compile(llvm::StringRef p) {
  Glob g;
  while (!p.empty()) {
    Token t;
    switch (p[0]) {
    case '*':
      t.star = true;
      p = p.drop_front(1);
      if (!g.tokens_.empty() && g.tokens_.back().star)
        continue;  // "**" is "*"
      break;
    case '?':
      t.chars.set();
      p = p.drop_front(1);
      break;
    case '[': {
      // ']' right after '[' (or "[!" / "[^") is a member, not the end.
      size_t end = p.find(']', 2);
      if (end == llvm::StringRef::npos)
        return bad("unterminated '[' class");
      llvm::StringRef body = p.substr(1, end - 1);
      bool negate = body.startswith("!") || body.startswith("^");
      auto set = classOf(negate ? body.drop_front(1) : body);
      if (!set)
        return set.takeError();
      t.chars = negate ? ~*set : *set;
      p = p.drop_front(end + 1);
      break;
    }
    case '\\':
      if (p.size() < 2)
        return bad("ends with a lone '\\'");
      t.chars.set(static_cast<unsigned char>(p[1]));
      p = p.drop_front(2);
      break;
    default:
      t.chars.set(static_cast<unsigned char>(p[0]));
      p = p.drop_front(1);
      break;
    }
    g.tokens_.push_back(t);
  }
  return g;
}

bool Glob::matches(llvm::StringRef text) const {
  // Every non-star token consumes exactly one byte, so on a mismatch only the
  // most recent star needs to take one more byte: earlier stars can never do
  // better (the classic wildcard two-pointer walk).
  const size_t none = static_cast<size_t>(-1);
  size_t p = 0, t = 0, starP = none, starT = 0;
  while (t < text.size()) {
    if (p < tokens_.size() && tokens_[p].star) {
      starP = p++;
      starT = t;
    } else if (p < tokens_.size() && tokens_[p].chars.test(static_cast<unsigned char>(text[t]))) {
      ++p;
      ++t;
    } else if (starP != none) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < tokens_.size() && tokens_[p].star)
    ++p;
  return p == tokens_.size();
}

}  // namespace graphlint
