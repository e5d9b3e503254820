#include "graphlint/ir/Type.h"

#include <fmt/format.h>

namespace graphlint {

bool Dim::operator==(const Dim &o) const {
  if (kind != o.kind)
    return false;
  if (kind == Kind::Static)
    return value == o.value;
  if (kind == Kind::Symbolic)
    return expr->equals(*o.expr);
  return true;
}

Dim Dim::of(SymExprRef e) {
  if (e->isConstant())
    return fixed(e->value());
  return {Kind::Symbolic, 0, std::move(e)};
}

std::optional<int64_t> Dim::evaluate(SymLookup lookup) const {
  switch (kind) {
  case Kind::Static: return value;
  case Kind::Symbolic: return expr->evaluate(lookup);
  case Kind::Unknown: return std::nullopt;
  }
  return std::nullopt;
}

Dim Dim::substitute(SymLookup lookup) const {
  if (kind != Kind::Symbolic)
    return *this;
  return of(expr->substitute(expr, lookup));
}

std::string Dim::str() const {
  switch (kind) {
  case Kind::Static: return std::to_string(value);
  case Kind::Symbolic: return expr->str();
  case Kind::Unknown: return "?";
  }
  return "?";
}

Shape Shape::of(std::initializer_list<int64_t> ds) {
  Shape s;
  s.rankKnown = true;
  for (int64_t d : ds)
    s.dims.push_back(Dim::fixed(d));
  return s;
}

bool Shape::isFullyStatic() const {
  if (!rankKnown)
    return false;
  for (const Dim &d : dims)
    if (!d.isStatic())
      return false;
  return true;
}

std::optional<int64_t> Shape::numElements() const {
  if (!isFullyStatic())
    return std::nullopt;
  int64_t n = 1;
  for (const Dim &d : dims) {
    if (d.value < 0 || __builtin_mul_overflow(n, d.value, &n))
      return std::nullopt;
  }
  return n;
}

std::string Shape::str() const {
  if (!rankKnown)
    return "?";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ',';
    s += dims[i].str();
  }
  return s + "]";
}

std::optional<uint64_t> bytesFor(DType t, int64_t numel) {
  unsigned bits = dtypeBits(t);
  if (bits == 0 || numel < 0)
    return std::nullopt;
  unsigned __int128 b = static_cast<unsigned __int128>(numel) * bits;
  b = (b + 7) / 8;
  if (b > UINT64_MAX)
    return std::nullopt;
  return static_cast<uint64_t>(b);
}

std::optional<int64_t> Type::staticDim(int idx) const {
  if (!isTensor() || !shape.rankKnown)
    return std::nullopt;
  int r = static_cast<int>(shape.rank());
  if (idx < 0)
    idx += r;
  if (idx < 0 || idx >= r || !shape.dims[idx].isStatic())
    return std::nullopt;
  return shape.dims[idx].value;
}

std::optional<uint64_t> Type::byteSize() const {
  if (!isTensor())
    return std::nullopt;
  auto n = shape.numElements();
  if (!n)
    return std::nullopt;
  return bytesFor(dtype, *n);
}

std::string Type::str() const {
  switch (kind) {
  case TypeKind::Unknown: return "?";
  case TypeKind::Tensor: return fmt::format("{}{}", dtypeShortName(dtype), shape.str());
  case TypeKind::SparseTensor: return fmt::format("sparse {}{}", dtypeShortName(dtype), shape.str());
  case TypeKind::Sequence: return fmt::format("seq({})", element ? element->str() : "?");
  case TypeKind::Optional: return fmt::format("optional({})", element ? element->str() : "?");
  case TypeKind::Map: return fmt::format("map({}, {})", dtypeShortName(dtype), element ? element->str() : "?");
  case TypeKind::Opaque: return "opaque";
  }
  return "?";
}

}  // namespace graphlint
