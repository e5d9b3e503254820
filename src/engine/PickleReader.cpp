#include "PickleReader.h"

#include <cstring>

namespace graphlint {

const PyValue *PyValue::get(llvm::StringRef key) const {
  for (const auto &[k, v] : dict)
    if (k && k->kind == Kind::Str && k->s == key)
      return v.get();
  return nullptr;
}

namespace {

llvm::Error bad(const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "not a pickle of plain values: %s", why.c_str());
}

}  // namespace

llvm::Expected<std::shared_ptr<PyValue>> readPickle(llvm::StringRef in) {
  using P = std::shared_ptr<PyValue>;
  std::vector<P> stack;
  std::vector<size_t> marks;
  std::vector<P> memo;
  size_t at = 0;
  auto need = [&](size_t n) { return at + n <= in.size(); };
  auto le = [&](size_t n) {
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k)
      v |= static_cast<uint64_t>(static_cast<uint8_t>(in[at + k])) << (8 * k);
    at += n;
    return v;
  };
  auto make = [](PyValue::Kind k) {
    auto v = std::make_shared<PyValue>();
    v->kind = k;
    return v;
  };
  auto popMark = [&]() -> llvm::Expected<std::vector<P>> {
    if (marks.empty())
      return bad("no MARK");
    size_t m = marks.back();
    marks.pop_back();
    std::vector<P> items(stack.begin() + static_cast<long>(m), stack.end());
    stack.resize(m);
    return items;
  };
  auto str = [&](size_t n, PyValue::Kind k) -> llvm::Error {
    if (!need(n))
      return bad("truncated string");
    P v = make(k);
    v->s = in.substr(at, n).str();
    at += n;
    stack.push_back(v);
    return llvm::Error::success();
  };
  auto longInt = [&](size_t n) -> llvm::Error {
    if (!need(n) || n > 8)
      return bad("integer wider than 64 bits");
    P v = make(PyValue::Kind::Int);
    uint64_t u = le(n);
    if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1)
      u |= ~uint64_t(0) << (8 * n);  // sign-extend
    v->i = static_cast<int64_t>(u);
    stack.push_back(v);
    return llvm::Error::success();
  };
  while (at < in.size()) {
    auto op = static_cast<uint8_t>(in[at++]);
    switch (op) {
    case 0x80: at += 1; break;                        // PROTO
    case 0x95: if (!need(8)) return bad("truncated FRAME"); at += 8; break;  // FRAME
    case '}': stack.push_back(make(PyValue::Kind::Dict)); break;
    case ']': stack.push_back(make(PyValue::Kind::List)); break;
    case ')': stack.push_back(make(PyValue::Kind::Tuple)); break;
    case '(': marks.push_back(stack.size()); break;
    case 'N': stack.push_back(make(PyValue::Kind::None)); break;
    case 0x88: case 0x89: {
      P v = make(PyValue::Kind::Bool);
      v->i = op == 0x88;
      stack.push_back(v);
      break;
    }
    case 'J': { if (!need(4)) return bad("truncated"); P v = make(PyValue::Kind::Int); v->i = static_cast<int32_t>(le(4)); stack.push_back(v); break; }
    case 'K': { if (!need(1)) return bad("truncated"); P v = make(PyValue::Kind::Int); v->i = static_cast<int64_t>(le(1)); stack.push_back(v); break; }
    case 'M': { if (!need(2)) return bad("truncated"); P v = make(PyValue::Kind::Int); v->i = static_cast<int64_t>(le(2)); stack.push_back(v); break; }
    case 0x8a: { if (!need(1)) return bad("truncated"); size_t n = le(1); if (auto e = longInt(n)) return e; break; }
    case 0x8b: { if (!need(4)) return bad("truncated"); size_t n = le(4); if (auto e = longInt(n)) return e; break; }
    case 'G': {
      if (!need(8))
        return bad("truncated float");
      uint64_t bits = 0;
      for (int k = 0; k < 8; ++k)
        bits = (bits << 8) | static_cast<uint8_t>(in[at + k]);
      at += 8;
      P v = make(PyValue::Kind::Float);
      std::memcpy(&v->f, &bits, 8);
      stack.push_back(v);
      break;
    }
    case 'X': { if (!need(4)) return bad("truncated"); size_t n = le(4); if (auto e = str(n, PyValue::Kind::Str)) return e; break; }
    case 0x8c: { if (!need(1)) return bad("truncated"); size_t n = le(1); if (auto e = str(n, PyValue::Kind::Str)) return e; break; }
    case 0x8d: { if (!need(8)) return bad("truncated"); size_t n = le(8); if (auto e = str(n, PyValue::Kind::Str)) return e; break; }
    case 'C': { if (!need(1)) return bad("truncated"); size_t n = le(1); if (auto e = str(n, PyValue::Kind::Bytes)) return e; break; }
    case 'B': { if (!need(4)) return bad("truncated"); size_t n = le(4); if (auto e = str(n, PyValue::Kind::Bytes)) return e; break; }
    case 0x94: if (stack.empty()) return bad("MEMOIZE on an empty stack"); memo.push_back(stack.back()); break;
    case 'q': case 'r': {                              // BINPUT, LONG_BINPUT
      if (!need(op == 'q' ? 1 : 4) || stack.empty())
        return bad("bad PUT");
      size_t idx = le(op == 'q' ? 1 : 4);
      if (memo.size() <= idx)
        memo.resize(idx + 1);
      memo[idx] = stack.back();
      break;
    }
    case 'h': case 'j': {                              // BINGET, LONG_BINGET
      if (!need(op == 'h' ? 1 : 4))
        return bad("bad GET");
      size_t idx = le(op == 'h' ? 1 : 4);
      if (idx >= memo.size() || !memo[idx])
        return bad("GET of an unknown memo entry");
      stack.push_back(memo[idx]);
      break;
    }
    case 0x85: case 0x86: case 0x87: {                 // TUPLE1..3
      size_t n = op - 0x84u;
      if (stack.size() < n)
        return bad("short stack");
      P t = make(PyValue::Kind::Tuple);
      t->items.assign(stack.end() - static_cast<long>(n), stack.end());
      stack.resize(stack.size() - n);
      stack.push_back(t);
      break;
    }
    case 't': {
      auto items = popMark();
      if (!items)
        return items.takeError();
      P t = make(PyValue::Kind::Tuple);
      t->items = std::move(*items);
      stack.push_back(t);
      break;
    }
    case 'a': case 'e': {                              // APPEND, APPENDS
      std::vector<P> items;
      if (op == 'a') {
        if (stack.size() < 2)
          return bad("short stack");
        items.push_back(stack.back());
        stack.pop_back();
      } else {
        auto got = popMark();
        if (!got)
          return got.takeError();
        items = std::move(*got);
      }
      if (stack.empty() || stack.back()->kind != PyValue::Kind::List)
        return bad("APPEND to a non-list");
      for (P &v : items)
        stack.back()->items.push_back(std::move(v));
      break;
    }
    case 's': case 'u': {                              // SETITEM, SETITEMS
      std::vector<P> items;
      if (op == 's') {
        if (stack.size() < 3)
          return bad("short stack");
        items.assign(stack.end() - 2, stack.end());
        stack.resize(stack.size() - 2);
      } else {
        auto got = popMark();
        if (!got)
          return got.takeError();
        items = std::move(*got);
      }
      if (stack.empty() || stack.back()->kind != PyValue::Kind::Dict || items.size() % 2)
        return bad("SETITEMS to a non-dict");
      for (size_t k = 0; k + 1 < items.size(); k += 2)
        stack.back()->dict.push_back({items[k], items[k + 1]});
      break;
    }
    case '.':
      if (stack.size() != 1)
        return bad("STOP with a stack of " + std::to_string(stack.size()));
      return stack.back();
    default:
      return bad("unsupported opcode 0x" + llvm::utohexstr(op) + " at byte " + std::to_string(at - 1));
    }
  }
  return bad("no STOP");
}

}  // namespace graphlint
