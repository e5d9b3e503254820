#include "graphlint/engine/Glob.h"

#include <fmt/format.h>

#include <cstdint>

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
    if (!t.star && t.chars.count() == 1)
      for (int c = 0; c < 256; ++c)
        if (t.chars.test(static_cast<size_t>(c)))
          t.byte = c;
    g.tokens_.push_back(t);
  }
  return g;
}

bool Glob::matchesAt(Segment s, llvm::StringRef text, size_t at) const {
  for (size_t k = 0; k < s.size(); ++k)
    if (!tokens_[s.begin + k].chars.test(static_cast<unsigned char>(text[at + k])))
      return false;
  return true;
}

// The leftmost position in [from, to - |s|] where `s` matches, or npos.
size_t Glob::find(Segment s, llvm::StringRef text, size_t from, size_t to) const {
  const size_t m = s.size();
  if (m == 0)
    return from;
  if (to < from || to - from < m)
    return llvm::StringRef::npos;
  bool plain = true;
  for (size_t k = s.begin; k < s.end && plain; ++k)
    plain = tokens_[k].byte >= 0;
  if (plain) {  // KMP: O(m + window)
    auto at = [&](size_t k) { return static_cast<char>(tokens_[s.begin + k].byte); };
    std::vector<size_t> fail(m, 0);
    for (size_t k = 1, j = 0; k < m; ++k) {
      while (j > 0 && at(k) != at(j))
        j = fail[j - 1];
      if (at(k) == at(j))
        ++j;
      fail[k] = j;
    }
    for (size_t i = from, j = 0; i < to; ++i) {
      while (j > 0 && text[i] != at(j))
        j = fail[j - 1];
      if (text[i] == at(j) && ++j == m)
        return i + 1 - m;
    }
    return llvm::StringRef::npos;
  }
  // Shift-And: bit k of `state` says tokens [0, k] match the text ending here.
  const size_t words = (m + 63) / 64;
  std::vector<uint64_t> accepts(256 * words, 0);
  for (size_t k = 0; k < m; ++k)
    for (unsigned c = 0; c < 256; ++c)
      if (tokens_[s.begin + k].chars.test(c))
        accepts[c * words + k / 64] |= uint64_t(1) << (k % 64);
  std::vector<uint64_t> state(words, 0);
  const uint64_t last = uint64_t(1) << ((m - 1) % 64);
  for (size_t i = from; i < to; ++i) {
    const uint64_t *a = &accepts[static_cast<unsigned char>(text[i]) * words];
    uint64_t carry = 1;
    for (size_t w = 0; w < words; ++w) {
      uint64_t next = state[w] >> 63;
      state[w] = ((state[w] << 1) | carry) & a[w];
      carry = next;
    }
    if (state[words - 1] & last)
      return i + 1 - m;
  }
  return llvm::StringRef::npos;
}

bool Glob::matches(llvm::StringRef text) const {
  std::vector<Segment> segments;
  size_t begin = 0;
  for (size_t k = 0; k <= tokens_.size(); ++k)
    if (k == tokens_.size() || tokens_[k].star) {
      segments.push_back({begin, k});
      begin = k + 1;
    }
  const Segment first = segments.front(), last = segments.back();
  if (segments.size() == 1)  // no star
    return text.size() == first.size() && matchesAt(first, text, 0);
  if (first.size() + last.size() > text.size() || !matchesAt(first, text, 0) ||
      !matchesAt(last, text, text.size() - last.size()))
    return false;
  size_t pos = first.size();
  const size_t end = text.size() - last.size();
  for (size_t k = 1; k + 1 < segments.size(); ++k) {
    size_t at = find(segments[k], text, pos, end);
    if (at == llvm::StringRef::npos)
      return false;
    pos = at + segments[k].size();
  }
  return true;
}

}  // namespace graphlint
