// Data-movement and shape ops of the cpu reference backend: Reshape,
// Transpose, Concat, Slice, Gather, Squeeze/Unsqueeze (axes as attribute
// before opset 13, as input after), Flatten, Expand, Tile, Pad (constant),
// Split, Shape, Size, Constant, ConstantOfShape and Range.
#include "CpuKernels.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace graphlint::verify::cpu {
namespace {

llvm::Error reshape(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *s = input(in, 1);
  std::vector<int64_t> shape = s ? s->asInts() : attrInts(n, "shape");
  if (!x)
    return kernelError(n, "missing input");
  bool allowZero = attrInt(n, "allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowZero) {
      if (i >= x->rank())
        return kernelError(n, "0 in the shape refers to a missing input dim");
      shape[i] = x->shape[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0)
        return kernelError(n, "more than one -1 in the shape");
      infer = static_cast<int64_t>(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0)
    shape[infer] = known ? x->numel() / known : 0;
  if (HostTensor::count(shape) != x->numel())
    return kernelError(n, "the new shape holds a different number of elements");
  HostTensor y = *x;
  y.shape = shape;
  return result(out, std::move(y));
}

// Copies `x` with its dims permuted: y[perm-index] = x[index].
HostTensor permute(const HostTensor &x, const std::vector<int64_t> &perm) {
  std::vector<int64_t> shape(perm.size()), xs = stridesOf(x.shape), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = x.shape[perm[i]];
    strides[i] = xs[perm[i]];
  }
  HostTensor y(x.dtype, shape);
  forEachBroadcast(shape, {strides}, [&](int64_t i, const std::vector<int64_t> &o) { y.data[i] = x.data[o[0]]; });
  return y;
}

llvm::Error transpose(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  std::vector<int64_t> perm = attrInts(n, "perm");
  if (perm.empty())
    for (size_t i = x->rank(); i-- > 0;)
      perm.push_back(static_cast<int64_t>(i));
  std::set<int64_t> seen(perm.begin(), perm.end());
  if (perm.size() != x->rank() || seen.size() != perm.size() ||
      (!seen.empty() && (*seen.begin() < 0 || *seen.rbegin() >= static_cast<int64_t>(x->rank()))))
    return kernelError(n, "perm is not a permutation of the input dims");
  return result(out, permute(*x, perm));
}

llvm::Error concat(const Node &n, Inputs in, Outputs &out) {
  std::vector<const HostTensor *> xs;
  for (const HostTensor *x : in)
    if (x)
      xs.push_back(x);
  if (xs.empty())
    return kernelError(n, "expects inputs");
  auto axis = normAxis(attrInt(n, "axis", 0), static_cast<int64_t>(xs[0]->rank()));
  if (!axis)
    return kernelError(n, "axis out of range");
  std::vector<int64_t> shape = xs[0]->shape;
  shape[*axis] = 0;
  for (const HostTensor *x : xs) {
    if (x->rank() != shape.size())
      return kernelError(n, "inputs differ in rank");
    shape[*axis] += x->shape[*axis];
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= shape[d];
  HostTensor y(xs[0]->dtype, shape);
  int64_t pos = 0, rowOut = y.numel() / std::max<int64_t>(1, outer);
  for (const HostTensor *x : xs) {
    int64_t row = x->numel() / std::max<int64_t>(1, outer);
    for (int64_t o = 0; o < outer; ++o)
      std::copy(x->data.begin() + o * row, x->data.begin() + (o + 1) * row, y.data.begin() + o * rowOut + pos);
    pos += row;
  }
  return result(out, std::move(y));
}

llvm::Error slice(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  int64_t rank = static_cast<int64_t>(x->rank());
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opsetVersion < 10) {
    starts = attrInts(n, "starts");
    ends = attrInts(n, "ends");
    axes = attrInts(n, "axes");
  } else {
    if (!input(in, 1) || !input(in, 2))
      return kernelError(n, "expects starts and ends");
    starts = input(in, 1)->asInts();
    ends = input(in, 2)->asInts();
    if (const HostTensor *a = input(in, 3))
      axes = a->asInts();
    if (const HostTensor *s = input(in, 4))
      steps = s->asInts();
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return kernelError(n, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(rank, 0), step(rank, 1), shape = x->shape;
  for (size_t i = 0; i < starts.size(); ++i) {
    auto a = normAxis(axes[i], rank);
    if (!a || steps[i] == 0)
      return kernelError(n, "bad axis or zero step");
    int64_t dim = x->shape[*a], s = starts[i], e = ends[i], st = steps[i];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    // A step longer than the dim takes one element, as a step of the dim's
    // length does: clamping keeps -st and the strides below in range. s and
    // e are clamped into [-1, dim] before any difference.
    st = std::clamp<int64_t>(st, -std::max<int64_t>(dim, 1), std::max<int64_t>(dim, 1));
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      shape[*a] = e > s ? (e - s) / st + ((e - s) % st != 0) : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      shape[*a] = s > e ? (s - e) / -st + ((s - e) % -st != 0) : 0;
    }
    begin[*a] = s;
    step[*a] = st;
  }
  std::vector<int64_t> xs = stridesOf(x->shape), strides(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) {
    base += begin[d] * xs[d];
    strides[d] = xs[d] * step[d];
  }
  HostTensor y(x->dtype, shape);
  forEachBroadcast(shape, {strides}, [&](int64_t i, const std::vector<int64_t> &o) { y.data[i] = x->data[base + o[0]]; });
  return result(out, std::move(y));
}

llvm::Error gather(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *idx = input(in, 1);
  if (!x || !idx || x->rank() == 0)
    return kernelError(n, "expects data of rank >= 1 and indices");
  auto axis = normAxis(attrInt(n, "axis", 0), static_cast<int64_t>(x->rank()));
  if (!axis)
    return kernelError(n, "axis out of range");
  int64_t outer = 1, inner = 1, dim = x->shape[*axis];
  for (int64_t d = 0; d < *axis; ++d)
    outer *= x->shape[d];
  for (size_t d = *axis + 1; d < x->rank(); ++d)
    inner *= x->shape[d];
  std::vector<int64_t> shape(x->shape.begin(), x->shape.begin() + *axis);
  shape.insert(shape.end(), idx->shape.begin(), idx->shape.end());
  shape.insert(shape.end(), x->shape.begin() + *axis + 1, x->shape.end());
  HostTensor y(x->dtype, shape);
  int64_t k = idx->numel();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = static_cast<int64_t>(idx->data[j]);
      if (i < 0)
        i += dim;
      if (i < 0 || i >= dim)
        return kernelError(n, "index " + std::to_string(static_cast<int64_t>(idx->data[j])) + " out of range");
      std::copy(x->data.begin() + (o * dim + i) * inner, x->data.begin() + (o * dim + i + 1) * inner,
                y.data.begin() + (o * k + j) * inner);
    }
  return result(out, std::move(y));
}

// Axes of Squeeze/Unsqueeze: an attribute before opset 13, an input after.
std::vector<int64_t> axesOf(const Node &n, Inputs in) {
  if (n.opsetVersion < 13)
    return attrInts(n, "axes");
  const HostTensor *a = input(in, 1);
  return a ? a->asInts() : std::vector<int64_t>();
}

llvm::Error squeeze(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  std::set<int64_t> drop;
  for (int64_t a : axesOf(n, in)) {
    auto na = normAxis(a, static_cast<int64_t>(x->rank()));
    if (!na || x->shape[*na] != 1)
      return kernelError(n, "axis is out of range or not of size 1");
    drop.insert(*na);
  }
  HostTensor y = *x;
  y.shape.clear();
  for (size_t d = 0; d < x->rank(); ++d)
    if (drop.empty() ? x->shape[d] != 1 : !drop.count(static_cast<int64_t>(d)))
      y.shape.push_back(x->shape[d]);
  return result(out, std::move(y));
}

llvm::Error unsqueeze(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  std::vector<int64_t> axes = axesOf(n, in);
  int64_t rank = static_cast<int64_t>(x->rank() + axes.size());
  std::set<int64_t> add;
  for (int64_t a : axes) {
    auto na = normAxis(a, rank);
    if (!na || !add.insert(*na).second)
      return kernelError(n, "axes out of range or repeated");
  }
  HostTensor y = *x;
  y.shape.clear();
  size_t src = 0;
  for (int64_t d = 0; d < rank; ++d)
    y.shape.push_back(add.count(d) ? 1 : x->shape[src++]);
  return result(out, std::move(y));
}

llvm::Error flatten(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  int64_t rank = static_cast<int64_t>(x->rank()), axis = attrInt(n, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return kernelError(n, "axis out of range");
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= x->shape[d];
  HostTensor y = *x;
  y.shape = {outer, outer ? x->numel() / outer : 0};
  return result(out, std::move(y));
}

// Broadcast `x` to `shape` (Expand) or repeat it (Tile).
HostTensor broadcastTo(const HostTensor &x, const std::vector<int64_t> &shape) {
  HostTensor y(x.dtype, shape);
  forEachBroadcast(shape, {*broadcastStrides(x.shape, shape)},
                   [&](int64_t i, const std::vector<int64_t> &o) { y.data[i] = x.data[o[0]]; });
  return y;
}

llvm::Error expand(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *s = input(in, 1);
  if (!x || !s)
    return kernelError(n, "expects input and shape");
  std::vector<int64_t> want = s->asInts();
  auto shape = broadcastShapes({&x->shape, &want});
  if (!shape)
    return kernelError(n, "shape cannot be broadcast");
  return result(out, broadcastTo(*x, *shape));
}

// Tile is an Expand of x viewed as [1, s0, 1, s1, ...] to [r0, s0, r1, s1, ...].
llvm::Error tile(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0), *r = input(in, 1);
  if (!x || !r || static_cast<size_t>(r->numel()) != x->rank())
    return kernelError(n, "expects one repeat per dim");
  std::vector<int64_t> reps = r->asInts(), pairs, target, shape;
  for (size_t d = 0; d < x->rank(); ++d) {
    if (reps[d] < 0)
      return kernelError(n, "negative repeats");
    pairs.insert(pairs.end(), {1, x->shape[d]});
    target.insert(target.end(), {reps[d], x->shape[d]});
    shape.push_back(reps[d] * x->shape[d]);
  }
  HostTensor view = *x;
  view.shape = pairs;
  HostTensor y = broadcastTo(view, target);
  y.shape = shape;
  return result(out, std::move(y));
}

// Constant padding: x is written at offset `pads begin` of the filled output.
llvm::Error pad(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  if (attrString(n, "mode", "constant") != "constant")
    return kernelError(n, "mode '" + attrString(n, "mode", "") + "' is not supported (constant only)");
  std::vector<int64_t> pads = n.opsetVersion < 11 ? attrInts(n, "pads") : (input(in, 1) ? input(in, 1)->asInts()
                                                                                          : std::vector<int64_t>());
  double value = n.opsetVersion < 11 ? attrFloat(n, "value", 0.0) : (input(in, 2) && input(in, 2)->numel()
                                                                         ? input(in, 2)->data[0] : 0.0);
  size_t rank = x->rank();
  if (input(in, 3))
    return kernelError(n, "the axes input is not supported");
  if (pads.size() != 2 * rank || *std::min_element(pads.begin(), pads.end()) < 0)
    return kernelError(n, "expects 2 x rank non-negative pads (negative pads are not supported)");
  std::vector<int64_t> shape = x->shape;
  for (size_t d = 0; d < rank; ++d)
    shape[d] += pads[d] + pads[rank + d];
  HostTensor y(x->dtype, shape);
  std::fill(y.data.begin(), y.data.end(), value);
  std::vector<int64_t> ys = stridesOf(shape);
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d)
    base += pads[d] * ys[d];
  forEachBroadcast(x->shape, {ys}, [&](int64_t i, const std::vector<int64_t> &o) { y.data[base + o[0]] = x->data[i]; });
  return result(out, std::move(y));
}

llvm::Error split(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  auto axis = normAxis(attrInt(n, "axis", 0), static_cast<int64_t>(x->rank()));
  if (!axis)
    return kernelError(n, "axis out of range");
  int64_t dim = x->shape[*axis], parts = static_cast<int64_t>(out.size());
  if (parts == 0)
    return kernelError(n, "the node has no outputs");
  std::vector<int64_t> sizes = n.opsetVersion < 13 ? attrInts(n, "split")
                                                   : (input(in, 1) ? input(in, 1)->asInts() : std::vector<int64_t>());
  if (sizes.empty()) {
    int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t p = 0; p < parts; ++p)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - p * chunk)));
  }
  if (static_cast<int64_t>(sizes.size()) != parts)
    return kernelError(n, "split sizes do not match the outputs");
  // Checked before any copy: sizes from data may be negative or overrun the dim.
  int64_t total = 0;
  for (int64_t size : sizes)
    if (size < 0 || __builtin_add_overflow(total, size, &total))
      return kernelError(n, "split sizes must be non-negative");
  if (total != dim)
    return kernelError(n, "split sizes do not add up to the dim");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= x->shape[d];
  for (size_t d = *axis + 1; d < x->rank(); ++d)
    inner *= x->shape[d];
  int64_t pos = 0;
  for (int64_t p = 0; p < parts; ++p) {
    std::vector<int64_t> shape = x->shape;
    shape[*axis] = sizes[p];
    HostTensor y(x->dtype, shape);
    for (int64_t o = 0; o < outer; ++o)
      std::copy(x->data.begin() + (o * dim + pos) * inner, x->data.begin() + (o * dim + pos + sizes[p]) * inner,
                y.data.begin() + o * sizes[p] * inner);
    pos += sizes[p];
    out[p] = std::move(y);
  }
  return llvm::Error::success();
}

llvm::Error shapeOp(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  int64_t rank = static_cast<int64_t>(x->rank());
  int64_t start = attrInt(n, "start", 0), end = attrInt(n, "end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  HostTensor y(DType::Int64, {std::max<int64_t>(0, end - start)});
  for (int64_t d = start; d < end; ++d)
    y.data[d - start] = static_cast<double>(x->shape[d]);
  return result(out, std::move(y));
}

llvm::Error sizeOp(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *x = input(in, 0);
  if (!x)
    return kernelError(n, "missing input");
  HostTensor y(DType::Int64, {});
  y.data[0] = static_cast<double>(x->numel());
  return result(out, std::move(y));
}

llvm::Error constant(const Node &n, Inputs, Outputs &out) {
  if (const Attribute *a = n.attr("value"); a && !a->tensors.empty()) {
    auto t = tensorFromLiteral(a->tensors[0]);
    if (!t)
      return kernelError(n, "the value tensor is too large to have been kept by the importer");
    out[0] = std::move(*t);
  } else if (const Attribute *a = n.attr("value_float")) {
    out[0] = HostTensor(DType::Float, {});
    out[0].data[0] = a->f;
  } else if (const Attribute *a = n.attr("value_int")) {
    out[0] = HostTensor(DType::Int64, {});
    out[0].data[0] = static_cast<double>(a->i);
  } else if (const Attribute *a = n.attr("value_floats")) {
    out[0] = HostTensor(DType::Float, {static_cast<int64_t>(a->floats.size())});
    out[0].data = a->floats;
  } else if (const Attribute *a = n.attr("value_ints")) {
    out[0] = HostTensor(DType::Int64, {static_cast<int64_t>(a->ints.size())});
    for (size_t i = 0; i < a->ints.size(); ++i)
      out[0].data[i] = static_cast<double>(a->ints[i]);
  } else {
    return kernelError(n, "unsupported Constant attribute");
  }
  out[0].roundToDtype();
  return llvm::Error::success();
}

llvm::Error constantOfShape(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *s = input(in, 0);
  if (!s)
    return kernelError(n, "missing shape");
  DType dt = DType::Float;
  double v = 0;
  if (const Attribute *a = n.attr("value"); a && !a->tensors.empty()) {
    auto t = tensorFromLiteral(a->tensors[0]);
    if (!t || t->numel() != 1)
      return kernelError(n, "value must be a one-element tensor");
    dt = t->dtype;
    v = t->data[0];
  }
  out[0] = HostTensor(dt, s->asInts());
  std::fill(out[0].data.begin(), out[0].data.end(), v);
  return llvm::Error::success();
}

llvm::Error range(const Node &n, Inputs in, Outputs &out) {
  const HostTensor *s = input(in, 0), *l = input(in, 1), *d = input(in, 2);
  if (!s || !l || !d || !s->numel() || !l->numel() || !d->numel() || d->data[0] == 0)
    return kernelError(n, "expects scalar start, limit and a non-zero delta");
  double start = s->data[0], delta = d->data[0];
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l->data[0] - start) / delta)));
  out[0] = HostTensor(s->dtype, {count});
  for (int64_t i = 0; i < count; ++i)
    out[0].data[i] = start + static_cast<double>(i) * delta;
  out[0].roundToDtype();
  return llvm::Error::success();
}

}  // namespace

void addLayoutKernels(KernelTable &t) {
  t["Reshape"] = reshape;
  t["Transpose"] = transpose;
  t["Concat"] = concat;
  t["Slice"] = slice;
  t["Gather"] = gather;
  t["Squeeze"] = squeeze;
  t["Unsqueeze"] = unsqueeze;
  t["Flatten"] = flatten;
  t["Expand"] = expand;
  t["Tile"] = tile;
  t["Pad"] = pad;
  t["Split"] = split;
  t["Shape"] = shapeOp;
  t["Size"] = sizeOp;
  t["Constant"] = constant;
  t["ConstantOfShape"] = constantOfShape;
  t["Range"] = range;
}

}  // namespace graphlint::verify::cpu
