// The bounded JSON reader (JsonInput.h).
#include "graphlint/ir/JsonInput.h"
#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallString.h>

#include <cstdlib>
#include <deque>
#include <type_traits>
#include <vector>

namespace graphlint {

namespace {

namespace json = llvm::json;

// json::Object is one DenseMap and nothing else: a standard-layout class is
// pointer-interconvertible with its first member, so a table built with the
// right size can be moved in (json::Object has no reserve of its own).
using ObjectStorage = llvm::DenseMap<json::ObjectKey, json::Value, llvm::DenseMapInfo<llvm::StringRef>>;
static_assert(std::is_standard_layout_v<json::Object> && sizeof(json::Object) == sizeof(ObjectStorage),
              "json::Object is expected to hold exactly one DenseMap");

// One linear pass: nesting depth and an upper bound on the number of values
// (each '{', '[' and ',' outside strings starts at most one more value).
llvm::Error prescan(llvm::StringRef t, const std::string &name, JsonLimits limits) {
  if (llvm::Error e = checkNestingDepth(t, TextSyntax::Json, name, limits.depth))
    return e;
  uint64_t values = 1;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (c == '"') {
      for (++i; i < t.size() && t[i] != '"'; ++i)
        i += t[i] == '\\';
    } else if (c == '{' || c == '[' || c == ',') {
      if (++values > limits.values)
        return stringError(fmt::format("{}holds more than {} JSON values; refused (each costs memory: a real graph "
                                       "of 1M nodes holds about 60M)",
                                       name.empty() ? std::string() : name + ": ", limits.values));
    }
  }
  return llvm::Error::success();
}

class CompactParser {
public:
  explicit CompactParser(llvm::StringRef t) : start_(t.begin()), p_(t.begin()), end_(t.end()) {}

  bool parseDocument(json::Value &out) {
    size_t bad = 0;
    if (!json::isUTF8(llvm::StringRef(start_, end_ - start_), &bad)) {
      p_ = start_ + bad;
      return error("Invalid UTF-8 sequence");
    }
    ws();
    if (!value(out))
      return false;
    ws();
    return p_ == end_ || error("Text after end of document");
  }

  std::string message() const { return message_; }

private:
  bool error(const char *msg) {
    unsigned line = 1;
    const char *lineStart = start_;
    for (const char *x = start_; x < p_; ++x)
      if (*x == '\n')
        ++line, lineStart = x + 1;
    message_ = fmt::format("[{}:{}, byte={}]: {}", line, p_ - lineStart, p_ - start_, msg);
    return false;
  }
  // llvm::json reports a wrong character just after it.
  bool unexpected(const char *msg) {
    if (p_ != end_)
      ++p_;
    return error(msg);
  }
  void ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r' || *p_ == '\n'))
      ++p_;
  }
  bool literal(llvm::StringRef word) {
    if (static_cast<size_t>(end_ - p_) >= word.size() && llvm::StringRef(p_, word.size()) == word) {
      p_ += word.size();
      return true;
    }
    return false;
  }
  static bool numberChar(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == 'E' || c == '.';
  }

  bool value(json::Value &out) {
    if (p_ == end_)
      return error("Unexpected EOF");
    switch (*p_) {
    case 'n':
      out = nullptr;
      return literal("null") || error("Invalid JSON value (null?)");
    case 't':
      out = true;
      return literal("true") || error("Invalid JSON value (true?)");
    case 'f':
      out = false;
      return literal("false") || error("Invalid JSON value (false?)");
    case '"': {
      std::string s;
      if (!string(s))
        return false;
      out = std::move(s);
      return true;
    }
    case '[': return array(out);
    case '{': return object(out);
    default:
      if (numberChar(*p_))
        return number(out);
      ++p_;
      return error("Invalid JSON value");
    }
  }

  // As llvm::json 14 reads numbers: an int64 when the text is all digits
  // (clamped to INT64_MIN..INT64_MAX, as strtoll clamps), else a double.
  bool number(json::Value &out) {
    llvm::SmallString<24> s;
    while (p_ != end_ && numberChar(*p_))
      s.push_back(*p_++);
    const char *text = s.c_str();
    char *stop;
    long long i = std::strtoll(text, &stop, 10);
    if (stop == text + s.size()) {
      out = static_cast<int64_t>(i);
      return true;
    }
    out = std::strtod(text, &stop);
    return stop == text + s.size() || error("Invalid JSON value (number?)");
  }

  static void utf8(uint32_t cp, std::string &out) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  bool hex4(uint16_t &out) {
    if (end_ - p_ < 4)
      return error("Invalid \\u escape sequence");
    out = 0;
    for (int k = 0; k < 4; ++k) {
      char c = *p_++;
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= c - '0';
      else if (c >= 'a' && c <= 'f')
        out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        out |= c - 'A' + 10;
      else
        return error("Invalid \\u escape sequence");
    }
    return true;
  }

  // \uXXXX, with a surrogate pair joined; a lone surrogate becomes U+FFFD.
  bool unicode(std::string &out) {
    uint16_t first;
    if (!hex4(first))
      return false;
    while (true) {
      if (first < 0xD800 || first >= 0xE000) {
        utf8(first, out);
        return true;
      }
      if (first >= 0xDC00 || end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
        utf8(0xFFFD, out);
        return true;
      }
      p_ += 2;
      uint16_t second;
      if (!hex4(second))
        return false;
      if (second >= 0xDC00 && second < 0xE000) {
        utf8(0x10000 + ((uint32_t(first) - 0xD800) << 10) + (second - 0xDC00), out);
        return true;
      }
      utf8(0xFFFD, out);  // the high half alone; the next escape starts over
      first = second;
    }
  }

  bool string(std::string &out) {
    ++p_;  // the opening quote
    while (true) {
      if (p_ == end_)
        return error("Unterminated string");
      char c = *p_++;
      if (c == '"')
        return true;
      if ((c & 0x1f) == c)
        return error("Control character in string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (p_ == end_)
        return error("Unterminated string");
      switch (*p_++) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u':
        if (!unicode(out))
          return false;
        break;
      default: return error("Invalid escape sequence");
      }
    }
  }

  // Elements and members are gathered on shared stacks and moved into a
  // container sized to them once the closing bracket is read.
  bool array(json::Value &out) {
    ++p_;
    ws();
    size_t base = elements_.size();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      out = json::Array();
      return true;
    }
    while (true) {
      json::Value v = nullptr;  // not into the stack: the recursion may grow it
      if (!value(v))
        return false;
      elements_.push_back(std::move(v));
      ws();
      if (p_ != end_ && *p_ == ']') {
        ++p_;
        break;
      }
      if (p_ == end_ || *p_ != ',')
        return unexpected("Expected , or ] after array element");
      ++p_;
      ws();
    }
    json::Array a;
    a.reserve(elements_.size() - base);
    for (size_t k = base; k < elements_.size(); ++k)
      a.push_back(std::move(elements_[k]));
    elements_.erase(elements_.begin() + static_cast<ptrdiff_t>(base), elements_.end());
    out = std::move(a);
    return true;
  }

  bool object(json::Value &out) {
    ++p_;
    ws();
    size_t base = members_.size();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      out = json::Object();
      return true;
    }
    while (true) {
      if (p_ == end_ || *p_ != '"')
        return unexpected("Expected object key");
      std::string key;
      if (!string(key))
        return false;
      ws();
      if (p_ == end_ || *p_ != ':')
        return unexpected("Expected : after object key");
      ++p_;
      ws();
      json::Value v = nullptr;
      if (!value(v))
        return false;
      members_.emplace_back(std::move(key), std::move(v));
      ws();
      if (p_ != end_ && *p_ == '}') {
        ++p_;
        break;
      }
      if (p_ == end_ || *p_ != ',')
        return unexpected("Expected , or } after object property");
      ++p_;
      ws();
    }
    ObjectStorage table(static_cast<unsigned>(members_.size() - base));
    for (size_t k = base; k < members_.size(); ++k) {
      // A repeated key keeps its last value, as llvm::json::parse does.
      auto it = table.try_emplace(json::ObjectKey(std::move(members_[k].first)), nullptr).first;
      it->second = std::move(members_[k].second);
    }
    members_.erase(members_.begin() + static_cast<ptrdiff_t>(base), members_.end());
    json::Object o;
    *reinterpret_cast<ObjectStorage *>(&o) = std::move(table);
    out = std::move(o);
    return true;
  }

  const char *start_;
  const char *p_;
  const char *end_;
  std::string message_;
  // Deques: json::Value's move is not noexcept, so a growing vector would
  // copy every element (the document copy, json::Value::copyFrom, that made
  // parsing quadratic in memory traffic); a deque never relocates.
  std::deque<json::Value> elements_;
  std::deque<std::pair<std::string, json::Value>> members_;
};

}  // namespace

llvm::Expected<llvm::json::Value> parseJsonInput(llvm::StringRef text, const std::string &name, JsonLimits limits,
                                                 JsonRefusal *why) {
  if (why)
    *why = JsonRefusal::None;
  if (llvm::Error e = prescan(text, name, limits)) {
    if (why)
      *why = JsonRefusal::Limit;
    return e;
  }
  CompactParser parser(text);
  json::Value doc = nullptr;
  if (!parser.parseDocument(doc)) {
    if (why)
      *why = JsonRefusal::Syntax;
    return stringError(parser.message());
  }
  return doc;
}

}  // namespace graphlint
