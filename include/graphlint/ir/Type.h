// Value types of the IR: tensors with shapes whose dims are static, symbolic
// (a named symbol or a size expression over symbols, SymExpr.h), or unknown; plus sequences, optionals and maps, which are marked as
// such so that analyses can skip them instead of misreading them as tensors.
#pragma once

#include "graphlint/ir/DType.h"
#include "graphlint/ir/SymExpr.h"

#include <llvm/ADT/SmallVector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace graphlint {

/// A dim costs 32 bytes: static and unknown dims carry no expression, and a
/// symbolic one shares its (immutable) expression tree with every copy.
struct Dim {
  enum class Kind : uint8_t { Unknown, Static, Symbolic };
  Kind kind = Kind::Unknown;
  int64_t value = 0;   // when Static
  SymExprRef expr;     // when Symbolic: never a constant

  static Dim unknown() { return {}; }
  static Dim fixed(int64_t v) { return {Kind::Static, v, {}}; }
  /// A single named symbol ("batch", "u0").
  static Dim named(std::string s) { return {Kind::Symbolic, 0, SymExpr::symbol(std::move(s))}; }
  /// An expression; a constant one is a static dim.
  static Dim of(SymExprRef e);
  bool isStatic() const { return kind == Kind::Static; }
  bool isSymbolic() const { return kind == Kind::Symbolic; }
  bool isUnknown() const { return kind == Kind::Unknown; }
  /// A symbolic dim that is one symbol, not an expression.
  bool isSymbol() const { return isSymbolic() && expr->isSymbol(); }
  /// The symbol's name when isSymbol(), else "".
  llvm::StringRef symbolName() const { return isSymbol() ? llvm::StringRef(expr->name()) : llvm::StringRef(); }
  /// The size under `lookup` (static dims need none); nullopt when unknown or unbound.
  std::optional<int64_t> evaluate(SymLookup lookup) const;
  /// Binds the symbols `lookup` knows; a fully bound dim becomes static.
  Dim substitute(SymLookup lookup) const;
  bool operator==(const Dim &o) const;
  bool operator!=(const Dim &o) const { return !(*this == o); }
  std::string str() const;
};

struct Shape {
  bool rankKnown = false;
  llvm::SmallVector<Dim, 4> dims;

  static Shape unranked() { return {}; }
  static Shape of(std::initializer_list<int64_t> ds);
  size_t rank() const { return dims.size(); }
  bool isFullyStatic() const;
  /// Product of dims when all are static and it does not overflow int64.
  std::optional<int64_t> numElements() const;
  std::string str() const;  // "[2,3,batch,?]" or "?" when the rank is unknown
  bool operator==(const Shape &o) const { return rankKnown == o.rankKnown && dims == o.dims; }
};

enum class TypeKind : uint8_t { Unknown, Tensor, SparseTensor, Sequence, Optional, Map, Opaque };

struct Type {
  TypeKind kind = TypeKind::Unknown;
  DType dtype = DType::Undefined;  // tensor element type (or map key type)
  Shape shape;                     // tensors only
  std::shared_ptr<const Type> element;  // Sequence/Optional element, Map value

  static Type tensor(DType dt, Shape s) { Type t; t.kind = TypeKind::Tensor; t.dtype = dt; t.shape = std::move(s); return t; }
  bool isTensor() const { return kind == TypeKind::Tensor || kind == TypeKind::SparseTensor; }
  /// Known enough for analyses: a tensor with known dtype and rank.
  bool isResolvedTensor() const { return isTensor() && dtype != DType::Undefined && shape.rankKnown; }
  /// The static size of dim `idx` (negative counts from the back), or
  /// nullopt when this is not a ranked tensor, `idx` is out of range or the
  /// dim is not static.
  std::optional<int64_t> staticDim(int idx) const;
  /// Size in bytes when the shape is static (packed for sub-byte types).
  std::optional<uint64_t> byteSize() const;
  std::string str() const;  // "f32[1,3,224,224]", "seq(f32[?])", "?"
};

/// Bytes for `numel` elements of `t`, rounding sub-byte types up to whole bytes.
std::optional<uint64_t> bytesFor(DType t, int64_t numel);

}  // namespace graphlint
