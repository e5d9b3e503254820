#include "graphlint/report/Pickle.h"

#include <cassert>
#include <cstring>

namespace graphlint {

namespace {
// Opcodes of Lib/pickletools.py used here.
constexpr uint8_t PROTO = 0x80, STOP = '.', MARK = '(', EMPTY_DICT = '}', EMPTY_LIST = ']', SETITEMS = 'u',
                  APPENDS = 'e', TUPLE = 't', BININT = 'J', BININT1 = 'K', BININT2 = 'M', LONG1 = 0x8a,
                  BINUNICODE = 'X', BINFLOAT = 'G', NEWTRUE = 0x88, NEWFALSE = 0x89, NONE = 'N';
}  // namespace

PickleWriter::PickleWriter(llvm::raw_ostream &os) : os_(os) {
  byte(PROTO);
  byte(2);
}

void PickleWriter::beginDict() {
  byte(EMPTY_DICT);
  byte(MARK);
  open_.push_back(Open::Dict);
}

void PickleWriter::beginList() {
  byte(EMPTY_LIST);
  byte(MARK);
  open_.push_back(Open::List);
}

void PickleWriter::beginTuple() {
  byte(MARK);
  open_.push_back(Open::Tuple);
}

void PickleWriter::end() {
  assert(!open_.empty() && "end() without an open container");
  switch (open_.back()) {
  case Open::Dict: byte(SETITEMS); break;
  case Open::List: byte(APPENDS); break;
  case Open::Tuple: byte(TUPLE); break;
  }
  open_.pop_back();
}

void PickleWriter::str(llvm::StringRef s) {
  byte(BINUNICODE);
  auto n = static_cast<uint32_t>(s.size());
  for (int i = 0; i < 4; ++i)
    byte(static_cast<uint8_t>(n >> (8 * i)));
  os_ << s;
}

void PickleWriter::long1(int64_t v, bool negative) {
  // Two's complement, little endian, as few bytes as keep the sign.
  uint8_t bytes[9];
  auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<uint8_t>(u >> (8 * i));
  int n = 8;
  // A non-negative value whose top bit is set needs a ninth, zero byte.
  if (!negative && (bytes[7] & 0x80))
    bytes[n++] = 0;
  while (n > 1) {
    uint8_t top = bytes[n - 1], next = bytes[n - 2];
    bool redundant = negative ? (top == 0xff && (next & 0x80)) : (top == 0 && !(next & 0x80));
    if (!redundant)
      break;
    --n;
  }
  byte(LONG1);
  byte(static_cast<uint8_t>(n));
  for (int i = 0; i < n; ++i)
    byte(bytes[i]);
}

void PickleWriter::integer(int64_t v) {
  if (v >= 0 && v < 256) {
    byte(BININT1);
    byte(static_cast<uint8_t>(v));
  } else if (v >= 0 && v < 65536) {
    byte(BININT2);
    byte(static_cast<uint8_t>(v));
    byte(static_cast<uint8_t>(v >> 8));
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    byte(BININT);
    auto u = static_cast<uint32_t>(static_cast<int32_t>(v));
    for (int i = 0; i < 4; ++i)
      byte(static_cast<uint8_t>(u >> (8 * i)));
  } else {
    long1(v, v < 0);
  }
}

void PickleWriter::unsignedInteger(uint64_t v) {
  if (v <= static_cast<uint64_t>(INT64_MAX)) {
    integer(static_cast<int64_t>(v));
    return;
  }
  long1(static_cast<int64_t>(v), /*negative=*/false);
}

void PickleWriter::real(double v) {
  byte(BINFLOAT);
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  for (int i = 7; i >= 0; --i)  // big endian
    byte(static_cast<uint8_t>(bits >> (8 * i)));
}

void PickleWriter::boolean(bool v) { byte(v ? NEWTRUE : NEWFALSE); }

void PickleWriter::none() { byte(NONE); }

void PickleWriter::finish() {
  assert(open_.empty() && "finish() with an open container");
  byte(STOP);
}

}  // namespace graphlint
