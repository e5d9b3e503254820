// Helpers and rule entry points shared by graphlint's fallback shape
// inference (FallbackInference.cpp: dispatch and the op-specific rules;
// FallbackShapeOps.cpp: windows, splits, pads and the ops whose output shape
// comes from values). Internal to the ONNX frontend.
#pragma once

#include "FallbackInference.h"
#include "graphlint/ir/CheckedMath.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace graphlint::onnxio::fallback {

inline int64_t attrIntOr(const Node &n, llvm::StringRef name, int64_t dflt) { return n.attrInt(name).value_or(dflt); }

inline std::vector<int64_t> attrInts(const Node &n, llvm::StringRef name) {
  const Attribute *a = n.attr(name);
  return a && a->kind == AttrKind::Ints ? a->ints : std::vector<int64_t>{};
}

inline bool normAxis(int64_t &a, size_t rank) {
  if (a < 0)
    a += static_cast<int64_t>(rank);
  return a >= 0 && a < static_cast<int64_t>(rank);
}

inline Type sameAs(const Type &t) { return t; }

// A computed extent: unknown when the arithmetic overflowed or went negative.
inline Dim checkedDim(CheckedInt v) { return v && *v >= 0 ? Dim::fixed(*v) : Dim::unknown(); }

// A dim computed in floating point (scales, window counts): unknown unless it
// is finite and representable; casting inf or 1e300 to int64 is undefined.
inline Dim dimFromDouble(double x) {
  if (!std::isfinite(x) || x < 0 || x >= 9.2e18)
    return Dim::unknown();
  return Dim::fixed(static_cast<int64_t>(x));
}

// A rank taken from a value (a declared length, a shape input): bounded, so a
// 1e8-long shape vector cannot make a 1e8-dim tensor.
inline bool rankWithinBounds(int64_t r) { return r >= 0 && r <= kMaxRank; }

inline std::string intsStr(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return "[" + s + "]";
}

inline Type tensorLike(const Type &t, DType dt) {
  Type o = t;
  o.dtype = dt;
  return o;
}

// A shape read from values: negative entries are not dims (unknown), and a
// vector longer than kMaxRank is no shape graphlint will materialise.
inline Shape staticShape(const std::vector<int64_t> &dims) {
  Shape s;
  if (!rankWithinBounds(static_cast<int64_t>(dims.size())))
    return s;
  s.rankKnown = true;
  for (int64_t d : dims)
    s.dims.push_back(checkedDim(d));
  return s;
}

inline Shape unknownDims(int64_t rank) {
  Shape s;
  if (!rankWithinBounds(rank))
    return s;
  s.rankKnown = true;
  s.dims.assign(static_cast<size_t>(rank), Dim::unknown());
  return s;
}

inline const std::vector<int64_t> *valuesOf(const FallbackContext &c, size_t i) {
  return i < c.values.size() && c.values[i] ? &*c.values[i] : nullptr;
}

// Axes from the input at `index` (newer opsets) or the attribute (older).
inline std::optional<std::vector<int64_t>> axesOf(const FallbackContext &c, size_t index) {
  if (index < c.inputs.size() && c.node.inputs.size() > index && c.node.inputs[index])
    return valuesOf(c, index) ? std::optional(*valuesOf(c, index)) : std::nullopt;
  if (c.node.attr("axes"))
    return attrInts(c.node, "axes");
  return std::vector<int64_t>{};
}


// Rules in FallbackShapeOps.cpp; each fills c.outputs (and c.problems) and
// returns false when it cannot say anything.
bool pool(FallbackContext &c, std::optional<int64_t> channelsOut);
bool split(FallbackContext &c);
bool pad(FallbackContext &c);
bool constantOfShape(FallbackContext &c);
bool reshape(FallbackContext &c);
bool expand(FallbackContext &c);
bool tile(FallbackContext &c);
bool slice(FallbackContext &c);
bool squeezeOrUnsqueeze(FallbackContext &c, bool squeeze);

}  // namespace graphlint::onnxio::fallback
