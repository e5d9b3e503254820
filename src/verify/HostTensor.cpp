#include "graphlint/verify/HostTensor.h"
#include "graphlint/ir/Display.h"

#include "../onnx/ProtoConvert.h"

#include "graphlint/ir/CheckedMath.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <sys/resource.h>
#include <unistd.h>

namespace graphlint::verify {

int64_t HostTensor::count(const std::vector<int64_t> &shape) { return checkedProduct(shape).value_or(-1); }

double hostMemoryBytes() {
  double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  struct rlimit lim;
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    phys = phys > 0 ? std::min(phys, static_cast<double>(lim.rlim_cur)) : static_cast<double>(lim.rlim_cur);
  return phys;
}

// Shapes computed at run time (from tensor values) are checked here, before
// the zero-filled vector touches its pages: an overcommitted 8 TB tensor would
// bring the OOM killer, not a bad_alloc.
std::vector<double> HostTensor::zeros(const std::vector<int64_t> &shape) {
  int64_t n = count(shape);
  if (n < 0)
    throw std::length_error("the element count of a tensor of shape [" + fmt::format("{}", fmt::join(shape, ",")) +
                            "] is negative or overflows 64 bits");
  double bytes = static_cast<double>(n) * 8, avail = hostMemoryBytes();
  if (avail > 0 && bytes > avail)
    throw std::length_error(fmt::format("a tensor of shape [{}] needs {} on the host, more than the {} available",
                                        fmt::join(shape, ","), formatBytes(bytes), formatBytes(avail)));
  return std::vector<double>(static_cast<size_t>(n), 0.0);
}

namespace {
std::atomic<uint64_t> liveHostBytes{0};
}  // namespace

HostReservation::HostReservation(const std::vector<int64_t> &shape) {
  int64_t n = HostTensor::count(shape);
  if (n < 0)
    throw std::length_error("the element count of a tensor of shape [" + fmt::format("{}", fmt::join(shape, ",")) +
                            "] is negative or overflows 64 bits");
  uint64_t bytes = saturatingMul(static_cast<uint64_t>(n), 8);
  double avail = hostMemoryBytes();
  uint64_t held = liveHostBytes.load();
  if (avail > 0 && static_cast<double>(held) + static_cast<double>(bytes) > avail)
    throw std::length_error(fmt::format("a tensor of shape [{}] needs {} on the host; with the {} the run's tensors "
                                        "hold already, that is more than the {} available",
                                        fmt::join(shape, ","), formatBytes(static_cast<double>(bytes)),
                                        formatBytes(static_cast<double>(held)), formatBytes(avail)));
  liveHostBytes += bytes;
  bytes_ = bytes;
}

HostReservation::HostReservation(const HostReservation &o) : bytes_(o.bytes_) { liveHostBytes += bytes_; }

HostReservation::~HostReservation() { liveHostBytes -= bytes_; }

uint64_t HostReservation::live() { return liveHostBytes.load(); }

uint64_t HostTensor::deviceBytes() const { return bytesFor(dtype, numel()).value_or(numel() * 8); }

bool hostSupportsDtype(DType dt) {
  switch (dt) {
  case DType::Float: case DType::Float16: case DType::BFloat16: case DType::Double:
  case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64:
  case DType::UInt8: case DType::UInt16: case DType::UInt32: case DType::UInt64: case DType::Bool:
    return true;
  default:
    return false;
  }
}

// bfloat16: the top 16 bits of the float, rounded to nearest even.
static double roundToBf16(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f))
    return v;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, 4);
  return f;
}

// IEEE binary16, round to nearest even, without _Float16 (which clang 14
// does not support on x86, and the fuzz build uses clang): 11 significant
// bits, quantum 2^-24 below the smallest normal, infinity from 65520 up.
double roundToFp16(double v) {
  float f = static_cast<float>(v);
  if (!std::isfinite(f))
    return f;
  float a = std::fabs(f);
  if (a >= 65520.0f)
    return std::copysign(std::numeric_limits<float>::infinity(), f);
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  float quantum = std::ldexp(1.0f, std::max(e - 11, -24));
  return std::copysign(std::nearbyint(a / quantum) * quantum, f);
}

double roundTo(DType dt, double v) {
  switch (dt) {
  case DType::Float:
    return static_cast<double>(static_cast<float>(v));
  case DType::Float16:
    return roundToFp16(v);
  case DType::BFloat16:
    return roundToBf16(v);
  case DType::Double:
    return v;
  case DType::Bool:
    return v != 0 ? 1.0 : 0.0;
  default:
    if (isInteger(dt))
      return std::isfinite(v) ? std::trunc(v) : 0.0;
    return v;
  }
}

void HostTensor::roundToDtype() {
  if (dtype == DType::Double)
    return;
  for (double &v : data)
    v = roundTo(dtype, v);
}

std::vector<int64_t> HostTensor::asInts() const {
  std::vector<int64_t> out;
  out.reserve(data.size());
  // Saturating: casting NaN, inf or 1e300 to int64 is undefined behaviour.
  for (double v : data)
    out.push_back(std::isnan(v) ? 0 : v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : static_cast<int64_t>(v));
  return out;
}

std::string HostTensor::str() const {
  std::string s = std::string(dtypeShortName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += fmt::format("{}{}", i ? "," : "", shape[i]);
  return s + "]";
}

static llvm::Expected<HostTensor> fromDecoded(DType dt, std::vector<int64_t> shape, const ConstData &cd) {
  size_t n = cd.floats.empty() ? cd.ints.size() : cd.floats.size();
  for (int64_t d : shape)
    if (d < 0)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "negative dimension");
  if (static_cast<int64_t>(n) != HostTensor::count(shape))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   fmt::format("tensor holds {} elements, its shape needs {}", n,
                                               HostTensor::count(shape)));
  HostTensor t(dt, std::move(shape));
  for (size_t i = 0; i < n; ++i)
    t.data[i] = cd.floats.empty() ? static_cast<double>(cd.ints[i]) : cd.floats[i];
  return t;
}

static std::vector<int64_t> dimsOf(const onnx::TensorProto &p) { return {p.dims().begin(), p.dims().end()}; }

llvm::Expected<HostTensor> parseTensorProto(llvm::StringRef bytes) {
  onnx::TensorProto p;
  if (!p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "not a TensorProto");
  auto dt = dtypeFromCode(p.data_type());
  ConstData cd;
  if (!dt)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   fmt::format("unsupported tensor data type {}", p.data_type()));
  if (!onnxio::decodeSmallPayload(p, cd))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   fmt::format("its {} data cannot be decoded or does not match its dims [{}]",
                                               dtypeName(*dt), fmt::join(dimsOf(p), ",")));
  return fromDecoded(*dt, dimsOf(p), cd);
}

llvm::Expected<HostTensor> tensorFromBytes(DType dt, std::vector<int64_t> shape, llvm::StringRef bytes) {
  onnx::TensorProto p;
  p.set_data_type(static_cast<int>(dt));
  p.set_raw_data(bytes.data(), bytes.size());
  for (int64_t d : shape)
    p.add_dims(d);
  ConstData cd;
  if (HostTensor::count(shape) == 0)
    return HostTensor(dt, std::move(shape));
  if (!onnxio::decodeSmallPayload(p, cd))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   fmt::format("cannot decode {} bytes of {}", bytes.size(), dtypeName(dt)));
  return fromDecoded(dt, std::move(shape), cd);
}

std::optional<HostTensor> tensorFromLiteral(const TensorLiteral &lit) {
  std::vector<int64_t> shape(lit.dims.begin(), lit.dims.end());
  if (HostTensor::count(shape) == 0)
    return HostTensor(lit.dtype, shape);
  if (!lit.data.known)
    return std::nullopt;
  auto t = fromDecoded(lit.dtype, shape, lit.data);
  if (!t) {
    llvm::consumeError(t.takeError());
    return std::nullopt;
  }
  return std::move(*t);
}

bool allClose(const HostTensor &got, const HostTensor &want, double rtol, double atol, std::string &why) {
  if (got.shape != want.shape) {
    why = fmt::format("shape {} != expected {}", got.str(), want.str());
    return false;
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.data[i], b = want.data[i];
    if (std::isnan(a) && std::isnan(b))
      continue;
    if (a == b)
      continue;
    if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b))) {
      why = fmt::format("element {}: {} != expected {}", i, a, b);
      return false;
    }
  }
  return true;
}

}  // namespace graphlint::verify
