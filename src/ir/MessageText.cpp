#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <utility>

namespace graphlint {

namespace {

void appendEscaped(std::string &out, unsigned char c) {
  switch (c) {
  case '\n': out += "\\n"; break;
  case '\r': out += "\\r"; break;
  case '\t': out += "\\t"; break;
  default:
    if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
}

// The multi-byte controls a terminal or editor acts on: the C1 controls
// U+0080-U+009F (NEL U+0085, CSI U+009B, OSC U+009D), the line and paragraph
// separators U+2028/U+2029 and the bidirectional controls (ALM U+061C,
// LRM/RLM U+200E/F, LRE..RLO U+202A-E, LRI..PDI U+2066-9: "Trojan Source").
// Returns the code point at `s[i]` and its length, or length 0 for none.
std::pair<unsigned, size_t> unicodeControl(llvm::StringRef s, size_t i) {
  auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  if (b(0) == 0xC2 && b(1) >= 0x80 && b(1) <= 0x9F)
    return {b(1), 2};
  if (b(0) == 0xD8 && b(1) == 0x9C)
    return {0x061C, 2};
  if (b(0) == 0xE2 && (b(1) == 0x80 || b(1) == 0x81)) {
    unsigned cp = 0x2000 | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    bool control = (b(2) & 0xC0) == 0x80 &&
                   (cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069));
    if (control)
      return {cp, 3};
  }
  return {0, 0};
}

void appendEscaped(std::string &out, llvm::StringRef s, size_t end) {
  for (size_t i = 0; i < end;) {
    if (auto [cp, n] = unicodeControl(s, i); n) {
      out += fmt::format("\\u{:04x}", cp);
      i += n;
      continue;
    }
    appendEscaped(out, static_cast<unsigned char>(s[i]));
    ++i;
  }
}

// Length of the well-formed UTF-8 sequence at s[i] (Unicode 15, table 3-7),
// or 0 when the byte there does not start one.
size_t utf8SequenceAt(llvm::StringRef s, size_t i) {
  auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return b(k) >= lo && b(k) <= hi; };
  unsigned c = b(0);
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    return cont(1) ? 2 : 0;
  if (c == 0xE0)
    return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
    return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED)
    return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c == 0xF0)
    return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3)
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4)
    return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

}  // namespace

bool makeValidUtf8(std::string &s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t n = utf8SequenceAt(s, i);
    if (n == 0)
      break;
    i += n;
  }
  if (i == s.size())
    return false;
  std::string out(s, 0, i);
  out.reserve(s.size() + 12);
  while (i < s.size()) {
    if (size_t n = utf8SequenceAt(s, i)) {
      out.append(s, i, n);
      i += n;
    } else {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(s[i]));
      ++i;
    }
  }
  s = std::move(out);
  return true;
}

std::string escapedForMessage(llvm::StringRef s, size_t maxBytes) {
  size_t shown = s.size();
  if (shown > maxBytes) {
    shown = maxBytes;
    // Do not split a UTF-8 sequence: back up over continuation bytes.
    while (shown > 0 && (static_cast<unsigned char>(s[shown]) & 0xC0) == 0x80)
      --shown;
  }
  std::string out;
  out.reserve(shown + 16);
  appendEscaped(out, s, shown);
  if (shown < s.size())
    out += fmt::format("...({} bytes)", s.size());
  return out;
}

std::string withoutControls(llvm::StringRef s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (size_t n = unicodeControl(s, i).second) {
      i += n;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(s[i++]);
    if (c >= 0x20 && c != 0x7f)
      out += static_cast<char>(c);
  }
  return out;
}

std::string oneLine(llvm::StringRef message) {
  std::string out;
  out.reserve(message.size());
  appendEscaped(out, message, message.size());
  return out;
}

}  // namespace graphlint
