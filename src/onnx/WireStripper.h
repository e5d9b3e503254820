// Reads the ONNX protobuf wire format directly from the mapped file and writes
// a copy without large tensor payloads, so that protobuf's generated classes can
// parse the structure without ever copying weight bytes. Each stripped tensor
// carries a marker (an unknown field) with where its bytes live in the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace onnx { class TensorProto; }

namespace graphlint::onnxio {

struct StripResult {
  bool ok = false;
  std::string error;       // one line, when !ok
  std::string stripped;    // the model without large payloads
  uint64_t strippedTensors = 0;
  uint64_t strippedBytes = 0;
};

/// Payloads of at most this many bytes (shape vectors, scalars) are kept:
/// shape inference needs their values.
inline constexpr uint64_t kKeepPayloadBytes = 1024;

/// Message nesting limit; deeper files are refused. The main graph sits at
/// depth 1 (below the model) and three message levels (graph, node, attribute)
/// make one level of subgraph nesting, so a graph nested 32 levels deep is at
/// 1 + 3*32 = 97; its node, attribute, sparse tensor and tensor need 4 more.
/// A graph one level deeper still parses, so the importer names it (GL001).
inline constexpr int kMaxMessageDepth = 1 + 3 * 32 + 4;

/// A read-only view of the model's bytes: the whole buffer in memory, or a
/// file read through a small window with pread(). The window keeps weight
/// pages out of the process (mmap would map them into its resident set when
/// headers next to them are touched).
class ByteWindow {
public:
  ByteWindow(const uint8_t *data, uint64_t size) : ptr_(data), start_(0), len_(size), size_(size) {}
  /// Reads through `fd` (not owned); `size` is the file size.
  ByteWindow(int fd, uint64_t size) : fd_(fd), size_(size) {}
  uint64_t size() const { return size_; }
  /// At least `len` bytes at `off` (within the size), valid until the next call;
  /// null on a read error.
  const uint8_t *at(uint64_t off, uint64_t len) {
    if (off >= start_ && off + len <= start_ + len_)
      return ptr_ + (off - start_);
    return refill(off, len);
  }

private:
  const uint8_t *refill(uint64_t off, uint64_t len);
  int fd_ = -1;
  std::string buf_;
  const uint8_t *ptr_ = nullptr;
  uint64_t start_ = 0, len_ = 0, size_ = 0;
};

StripResult stripPayloads(ByteWindow &bytes);
inline StripResult stripPayloads(const uint8_t *data, uint64_t size) {
  ByteWindow w(data, size);
  return stripPayloads(w);
}

/// Where a stripped tensor's bytes were, read back from its marker.
struct PayloadRef {
  bool stripped = false;
  uint64_t offset = 0;   // first payload byte in the file
  uint64_t bytes = 0;    // total payload bytes
  uint32_t field = 0;    // TensorProto field that held them (9 = raw_data)
};
PayloadRef payloadRef(const onnx::TensorProto &t);

/// What a stripped raw_data payload holds, read back from the file in one
/// pass of bounded chunks (nullopt / false when the payload was not
/// stripped, is held in another field, or cannot be read):
/// - uniformByte: the one value every byte has (0 for a tensor of zeros, 1
///   for a bool tensor of trues);
/// - causalMask: a causal attention mask over its last two dims
///   ([..., s, s]): a bool tensor true exactly where j <= i, or a
///   float32/float16/bfloat16 one zero exactly there and one negative value
///   elsewhere (transformers' additive mask).
struct PayloadPattern {
  std::optional<uint8_t> uniformByte;
  bool causalMask = false;
};
PayloadPattern strippedPayloadPattern(const onnx::TensorProto &t, ByteWindow &bytes);

}  // namespace graphlint::onnxio
