#include "PointwiseInference.h"

#include <llvm/ADT/StringSwitch.h>

#include <algorithm>

namespace graphlint::onnxio {

PointwiseKind pointwiseKind(const onnx::OpSchema &schema) {
  if (!schema.domain().empty() && schema.domain() != "ai.onnx")
    return PointwiseKind::None;
  // Versions before 7 (binary: a `broadcast` attribute) and 6 (unary:
  // `consumed_inputs`) inferred differently.
  int since = schema.since_version();
  return llvm::StringSwitch<PointwiseKind>(schema.Name())
      .Cases("Add", "Sub", "Mul", "Div", since >= 7 ? PointwiseKind::Binary : PointwiseKind::None)
      .Cases("Relu", "Sigmoid", "Tanh", "Abs", "Neg", since >= 6 ? PointwiseKind::Unary : PointwiseKind::None)
      .Cases("Exp", "Log", "Sqrt", "Reciprocal", since >= 6 ? PointwiseKind::Unary : PointwiseKind::None)
      .Default(PointwiseKind::None);
}

namespace {

// A tensor with an element type and a shape: what ONNX's element-type
// propagation and hasNInputShapes ask for before these functions succeed.
const onnx::TypeProto_Tensor *shapedTensor(const onnx::TypeProto *t) {
  if (!t || t->value_case() != onnx::TypeProto::kTensorType)
    return nullptr;
  const onnx::TypeProto_Tensor &tt = t->tensor_type();
  if (tt.elem_type() == onnx::TensorProto::UNDEFINED || !tt.has_shape())
    return nullptr;
  return &tt;
}

}  // namespace

bool inferPointwise(PointwiseKind kind, const onnx::TypeProto *const *inputs, onnx::TypeProto &out) {
  out.Clear();
  const onnx::TypeProto_Tensor *a = shapedTensor(inputs[0]);
  if (!a)
    return false;
  if (kind == PointwiseKind::Unary) {
    // propagateShapeAndTypeFromFirstInput.
    onnx::TypeProto_Tensor *o = out.mutable_tensor_type();
    o->set_elem_type(a->elem_type());
    *o->mutable_shape() = a->shape();
    return true;
  }
  const onnx::TypeProto_Tensor *b = shapedTensor(inputs[1]);
  if (!b || a->elem_type() != b->elem_type())
    return false;  // ONNX's type-constraint check reports the mismatch
  // multidirectionalBroadcastShapeInference over the two shapes.
  const onnx::TensorShapeProto *shapes[2] = {&a->shape(), &b->shape()};
  int rank = std::max(shapes[0]->dim_size(), shapes[1]->dim_size());
  onnx::TypeProto_Tensor *o = out.mutable_tensor_type();
  o->set_elem_type(a->elem_type());
  onnx::TensorShapeProto *result = o->mutable_shape();
  for (int i = 0; i < rank; ++i) {
    int64_t dimValue = 1;
    const onnx::TensorShapeProto_Dimension *symbolic = nullptr;
    int symbolicCount = 0;
    for (const onnx::TensorShapeProto *s : shapes) {
      if (i < rank - s->dim_size())
        continue;  // broadcast: a leading 1
      const onnx::TensorShapeProto_Dimension &d = s->dim(i - rank + s->dim_size());
      if (d.has_dim_value()) {
        if (d.dim_value() != 1) {
          if (dimValue != d.dim_value() && dimValue != 1)
            return false;  // "Incompatible dimensions": ONNX says so
          dimValue = d.dim_value();
        }
      } else if (symbolicCount == 0) {
        symbolic = &d;
        ++symbolicCount;
      } else if (d.dim_param() != symbolic->dim_param()) {
        ++symbolicCount;
      }
    }
    if (dimValue != 1 || symbolicCount == 0)
      result->add_dim()->set_dim_value(dimValue);
    else if (symbolicCount == 1)
      *result->add_dim() = *symbolic;
    else
      result->add_dim();
  }
  return true;
}

}  // namespace graphlint::onnxio
