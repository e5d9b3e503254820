#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

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

// Unicode line breaks that some terminals and editors honour: NEL (U+0085),
// LINE SEPARATOR (U+2028), PARAGRAPH SEPARATOR (U+2029). Returns the bytes
// consumed at `s[i]` (0 when none starts there).
size_t unicodeBreak(llvm::StringRef s, size_t i, std::string &out) {
  if (s.substr(i).startswith("\xc2\x85")) {
    out += "\\u0085";
    return 2;
  }
  if (s.substr(i).startswith("\xe2\x80\xa8") || s.substr(i).startswith("\xe2\x80\xa9")) {
    out += s[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
    return 3;
  }
  return 0;
}

void appendEscaped(std::string &out, llvm::StringRef s, size_t end) {
  for (size_t i = 0; i < end;) {
    if (size_t n = unicodeBreak(s, i, out)) {
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

std::string oneLine(llvm::StringRef message) {
  std::string out;
  out.reserve(message.size());
  appendEscaped(out, message, message.size());
  return out;
}

}  // namespace graphlint
