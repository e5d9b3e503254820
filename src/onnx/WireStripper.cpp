#include "WireStripper.h"

#include <onnx/onnx_pb.h>

#include <google/protobuf/unknown_field_set.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace graphlint::onnxio {
namespace {

// Field number of the marker appended to a stripped TensorProto. It is far
// from every ONNX field and below protobuf's reserved 19000-19999 range.
constexpr uint32_t kMarkerField = 8011;

enum class Msg : uint8_t { Other, Model, Graph, Node, Attribute, Tensor, SparseTensor, Function, TrainingInfo };

// The messages that can (transitively) hold tensors, by (parent, field).
Msg childKind(Msg parent, uint32_t field) {
  switch (parent) {
  case Msg::Model:
    if (field == 7) return Msg::Graph;
    if (field == 25) return Msg::Function;
    if (field == 20) return Msg::TrainingInfo;
    break;
  case Msg::TrainingInfo:
    if (field == 1 || field == 2) return Msg::Graph;
    break;
  case Msg::Graph:
    if (field == 1) return Msg::Node;
    if (field == 5) return Msg::Tensor;
    if (field == 15) return Msg::SparseTensor;
    break;
  case Msg::Function:
    if (field == 7) return Msg::Node;
    if (field == 11) return Msg::Attribute;
    break;
  case Msg::Node:
    if (field == 5) return Msg::Attribute;
    break;
  case Msg::Attribute:
    if (field == 5 || field == 10) return Msg::Tensor;
    if (field == 6 || field == 11) return Msg::Graph;
    if (field == 22 || field == 23) return Msg::SparseTensor;
    break;
  case Msg::SparseTensor:
    if (field == 1 || field == 2) return Msg::Tensor;
    break;
  default:
    break;
  }
  return Msg::Other;
}

bool isPayloadField(uint32_t f) {
  return f == 4 || f == 5 || f == 6 || f == 7 || f == 9 || f == 10 || f == 11;
}

void putVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

class Stripper {
public:
  explicit Stripper(ByteWindow &bytes) : bytes_(bytes) {}

  bool run(std::string &out) { return message(0, bytes_.size(), Msg::Model, 0, out); }
  std::string error;
  uint64_t strippedTensors = 0, strippedBytes = 0;

private:
  bool fail(uint64_t at, const char *what) {
    if (error.empty())
      error = fmt::format("malformed protobuf at byte {}: {}", at, what);
    return false;
  }

  bool varint(uint64_t &pos, uint64_t end, uint64_t &v) {
    v = 0;
    if (pos >= end)
      return fail(pos, "truncated varint");
    const uint8_t *p = bytes_.at(pos, std::min<uint64_t>(10, end - pos));
    if (!p)
      return fail(pos, "read error");
    uint64_t avail = std::min<uint64_t>(10, end - pos);
    for (int shift = 0, i = 0; shift < 64; shift += 7, ++i) {
      if (static_cast<uint64_t>(i) >= avail)
        return fail(pos, "truncated varint");
      uint8_t b = p[i];
      ++pos;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80))
        return true;
    }
    return fail(pos, "varint longer than 10 bytes");
  }

  // Advances pos past one field value of wire type wt; sets [vbeg, vend).
  bool skipValue(uint64_t &pos, uint64_t end, uint32_t wt, uint64_t &vbeg, uint64_t &vend) {
    vbeg = pos;
    uint64_t v;
    switch (wt) {
    case 0:
      if (!varint(pos, end, v)) return false;
      break;
    case 1:
      if (end - pos < 8) return fail(pos, "truncated fixed64");
      pos += 8;
      break;
    case 5:
      if (end - pos < 4) return fail(pos, "truncated fixed32");
      pos += 4;
      break;
    case 2:
      if (!varint(pos, end, v)) return false;
      if (v > end - pos) return fail(pos, "length-delimited field runs past its message");
      vbeg = pos;
      pos += v;
      break;
    default:
      return fail(pos, "unsupported wire type (groups or garbage)");
    }
    vend = pos;
    return true;
  }

  // Sums the payload bytes of a TensorProto body without touching them.
  bool tensorPayload(uint64_t pos, uint64_t end, uint64_t &bytes, uint64_t &first, uint32_t &field) {
    bytes = 0;
    first = UINT64_MAX;
    field = 0;
    while (pos < end) {
      uint64_t tag, vb, ve;
      if (!varint(pos, end, tag)) return false;
      uint32_t f = static_cast<uint32_t>(tag >> 3), wt = tag & 7;
      if (f == 0) return fail(pos, "field number 0");
      if (!skipValue(pos, end, wt, vb, ve)) return false;
      if (isPayloadField(f)) {
        bytes += ve - vb;
        if (first == UINT64_MAX) {
          first = vb;
          field = f;
        }
      }
    }
    return true;
  }

  bool message(uint64_t pos, uint64_t end, Msg kind, int depth, std::string &out) {
    if (depth > kMaxMessageDepth)
      return fail(pos, "nesting exceeds the depth limit (subgraphs nested more than 32 levels)");
    bool strip = false;
    uint64_t payloadBytes = 0, payloadFirst = 0;
    uint32_t payloadField = 0;
    if (kind == Msg::Tensor) {
      if (!tensorPayload(pos, end, payloadBytes, payloadFirst, payloadField))
        return false;
      strip = payloadBytes > kKeepPayloadBytes;
    }
    while (pos < end) {
      uint64_t tagBeg = pos, tag, vb, ve;
      if (!varint(pos, end, tag)) return false;
      uint32_t f = static_cast<uint32_t>(tag >> 3), wt = tag & 7;
      if (f == 0) return fail(tagBeg, "field number 0");
      if (!skipValue(pos, end, wt, vb, ve)) return false;
      if (strip && isPayloadField(f))
        continue;
      Msg child = wt == 2 ? childKind(kind, f) : Msg::Other;
      if (child == Msg::Other) {
        const uint8_t *raw = bytes_.at(tagBeg, pos - tagBeg);
        if (!raw)
          return fail(tagBeg, "read error");
        out.append(reinterpret_cast<const char *>(raw), pos - tagBeg);
        continue;
      }
      std::string body;
      if (!message(vb, ve, child, depth + 1, body))
        return false;
      putVarint(out, tag);
      putVarint(out, body.size());
      out += body;
    }
    if (strip) {
      std::string marker;
      putVarint(marker, payloadFirst);
      putVarint(marker, payloadBytes);
      putVarint(marker, payloadField);
      putVarint(out, (static_cast<uint64_t>(kMarkerField) << 3) | 2);
      putVarint(out, marker.size());
      out += marker;
      ++strippedTensors;
      strippedBytes += payloadBytes;
    }
    return true;
  }

  ByteWindow &bytes_;
};

}  // namespace

const uint8_t *ByteWindow::refill(uint64_t off, uint64_t len) {
  if (fd_ < 0 || off > size_ || len > size_ - off)
    return nullptr;
  // Windows of 256 KiB: headers are read in few syscalls, weights never.
  uint64_t want = std::max<uint64_t>(len, 256 * 1024);
  want = std::min(want, size_ - off);
  buf_.resize(want);
  uint64_t done = 0;
  while (done < want) {
    ssize_t got = ::pread(fd_, buf_.data() + done, want - done, static_cast<off_t>(off + done));
    if (got <= 0) {
      if (got < 0 && errno == EINTR)
        continue;
      return nullptr;
    }
    done += static_cast<uint64_t>(got);
  }
  ptr_ = reinterpret_cast<const uint8_t *>(buf_.data());
  start_ = off;
  len_ = want;
  return ptr_;
}

PayloadPattern strippedPayloadPattern(const onnx::TensorProto &t, ByteWindow &bytes) {
  PayloadRef ref = payloadRef(t);
  if (!ref.stripped || ref.field != 9 || ref.bytes == 0)
    return {};
  // A causal mask is [..., s, s] of bool or a float type, every byte there.
  int rank = t.dims_size();
  unsigned width = 0;
  switch (t.data_type()) {
  case onnx::TensorProto::BOOL: width = 1; break;
  case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: width = 2; break;
  case onnx::TensorProto::FLOAT: width = 4; break;
  default: break;
  }
  bool causal = width && rank >= 2 && t.dims(rank - 1) == t.dims(rank - 2) && t.dims(rank - 1) > 0;
  uint64_t n = 1;
  for (int d = 0; causal && d < rank; ++d)
    causal = t.dims(d) >= 0 && !__builtin_mul_overflow(n, static_cast<uint64_t>(t.dims(d)), &n);
  causal = causal && n * width == ref.bytes;
  const uint64_t s = causal ? static_cast<uint64_t>(t.dims(rank - 1)) : 1;
  std::optional<uint32_t> masked;  // the float mask's one value where j > i
  std::optional<uint8_t> value;
  bool uniform = true;
  constexpr uint64_t kChunk = 1 << 20;  // a whole number of elements of any width
  uint64_t e = 0;
  for (uint64_t done = 0; done < ref.bytes && (uniform || causal);) {
    uint64_t len = std::min(kChunk, ref.bytes - done);
    const uint8_t *p = bytes.at(ref.offset + done, len);
    if (!p)
      return {};
    if (!value)
      value = p[0];
    for (uint64_t i = 0; uniform && i < len; ++i)
      uniform = p[i] == *value;
    for (uint64_t k = 0; causal && k < len; k += width, ++e) {
      uint32_t x = 0;
      std::memcpy(&x, p + k, width);
      bool allowed = e % s <= (e / s) % s;
      if (width == 1) {
        causal = x == (allowed ? 1u : 0u);
      } else if (allowed) {
        causal = x == 0;
      } else {
        uint32_t sign = width == 2 ? 0x8000u : 0x80000000u;
        causal = (x & sign) && (!masked || *masked == x);
        masked = x;
      }
    }
    done += len;
  }
  PayloadPattern out;
  if (uniform)
    out.uniformByte = value;
  out.causalMask = causal && !uniform;
  return out;
}

StripResult stripPayloads(ByteWindow &bytes) {
  StripResult r;
  Stripper s(bytes);
  r.stripped.reserve(std::min<uint64_t>(bytes.size(), 1 << 20));
  r.ok = s.run(r.stripped);
  r.error = s.error;
  r.strippedTensors = s.strippedTensors;
  r.strippedBytes = s.strippedBytes;
  return r;
}

PayloadRef payloadRef(const onnx::TensorProto &t) {
  PayloadRef ref;
  const auto &unknown = t.GetReflection()->GetUnknownFields(t);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto &uf = unknown.field(i);
    if (uf.number() != static_cast<int>(kMarkerField) || uf.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    const std::string &s = uf.length_delimited();
    size_t pos = 0;
    auto get = [&](uint64_t &v) {
      v = 0;
      for (int shift = 0; pos < s.size() && shift < 64; shift += 7) {
        uint8_t b = static_cast<uint8_t>(s[pos++]);
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80))
          return;
      }
    };
    uint64_t field = 0;
    get(ref.offset);
    get(ref.bytes);
    get(field);
    ref.field = static_cast<uint32_t>(field);
    ref.stripped = true;
  }
  return ref;
}

}  // namespace graphlint::onnxio
