// The op registry: what graphlint knows about each operator independent of any
// one graph -- its kind (how a fusing compiler treats it), whether a schema
// exists, and alias facts. Kinds come from a reviewed table for the ONNX and
// PyTorch ops we know, and otherwise from the installed ONNX schema registry.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string_view>

namespace onnx { class OpSchema; }

namespace graphlint {

enum class OpKind : uint8_t {
  Pointwise,            // elementwise, same shape in and out
  Broadcast,            // elementwise with numpy broadcasting
  Injective,            // data movement: gather, slice, concat, transpose, pad
  Reduction,            // reduces one or more axes (incl. softmax, norms, pooling)
  Contraction,          // MatMul, Gemm, Conv, attention, recurrent cells
  ShapeOnly,            // no kernel: reshape/view, shape queries, constants
  ControlFlow,          // If, Loop, Scan
  DataDependentOutput,  // output shape depends on values: NonZero, Unique, NMS
  Collective,           // all-reduce, all-gather, ...
  Unknown,              // no schema and not in our table: opaque
};

std::string_view opKindName(OpKind k);

/// How an op makes the host wait for the GPU (GL112).
enum class HostSyncKind : uint8_t {
  None,
  DataDependentSize,  // the output's size depends on values: the host reads a count (nonzero, unique)
  ReadsValue,         // hands a tensor value to Python (item, tolist, is_nonzero, equal)
};

/// How an op converts the element type of input 0 (GL101, GL102, the FX
/// promotion walk, the fusion planner's precision casts).
enum class ConversionKind : uint8_t {
  None,
  Cast,      // ONNX Cast, CastLike: a dtype conversion and nothing else
  Convert,   // PyTorch's conversions (_to_copy, to, type_as, float, half, bfloat16, double): like the calls they
             // record, they may also move the tensor to another device
  Autocast,  // the casts torch.autocast inserts (_autocast_to_reduced_precision, _autocast_to_full_precision)
};

struct OpInfo {
  std::string_view domain;
  std::string_view name;
  OpKind kind = OpKind::Unknown;
  /// The op has a schema (installed ONNX, or a newer ONNX op we know of).
  bool known = false;
  /// Output 0 may share storage with input 0 (reshape-like views).
  bool viewOfInput0 = false;
  /// Writes input 0 in place and returns it: PyTorch's trailing-underscore
  /// variants (relu_, add_, copy_, fill_, index_put_, _index_put_impl_).
  /// ONNX ops are functional.
  bool inplace = false;
  /// Whether and how the op converts input 0's element type.
  ConversionKind conversion = ConversionKind::None;
  /// Forces a device-to-host synchronisation when run on a GPU, and how.
  bool hostSync = false;
  HostSyncKind syncKind = HostSyncKind::None;
  /// The installed ONNX schema at this (domain, op, version), or null.
  const onnx::OpSchema *schema = nullptr;
  /// That schema's inference applies at this version (see installedSchemaCurrent).
  bool schemaCurrent = false;
  /// The version is newer than the installed ONNX library knows.
  bool newerThanLibrary = false;
};

class OpRegistry {
public:
  static const OpRegistry &instance();

  /// Never returns null: unknown ops get a shared "unknown" entry per name.
  const OpInfo *lookup(llvm::StringRef domain, llvm::StringRef op, int64_t version) const;
  /// The installed ONNX schema for (domain, op, version), or null.
  const onnx::OpSchema *schema(llvm::StringRef domain, llvm::StringRef op, int64_t version) const;
  /// Highest opset the installed ONNX library knows for a domain (0 if none).
  int64_t installedMaxOpset(llvm::StringRef domain) const;
  /// True when the installed ONNX schema for this op is also the one that
  /// applies at `version`, i.e. the op did not change in a newer opset that the
  /// library predates. Otherwise graphlint's own inference is used.
  bool installedSchemaCurrent(llvm::StringRef domain, llvm::StringRef op, int64_t version) const;

private:
  OpRegistry();
  struct Impl;
  Impl *impl;
};

/// "" and "ai.onnx" are the same domain.
inline bool isDefaultDomain(llvm::StringRef d) { return d.empty() || d == "ai.onnx"; }

}  // namespace graphlint
