#include "ProtoConvert.h"

#include "graphlint/ir/CheckedMath.h"
#include "graphlint/ir/MessageText.h"

#include "WireStripper.h"

#include <algorithm>
#include <cstring>

namespace graphlint::onnxio {

bool isPlaceholderSymbol(const std::string &s) { return s.rfind("unk__", 0) == 0; }

// torch's exporters write size expressions as dim_params ("2*s0", "s0 + 1");
// other dim_params are free-form names ("batch-size"), so only text with an
// operator other than a bare '-' is read as an expression.
// A graph repeats a handful of dim_params on every value: one shared
// expression per spelling (per thread) keeps a million-node graph's dims at
// one pointer each instead of one allocation each.
static Dim dimFromParam(const std::string &p) {
  thread_local std::vector<std::pair<std::string, Dim>> recent;
  for (const auto &[text, d] : recent)
    if (text == p)
      return d;
  Dim d = Dim::named(p);
  if (p.find_first_of("*+/%(") != std::string::npos || p.find(" - ") != std::string::npos) {
    if (llvm::Expected<SymExprRef> e = SymExpr::parse(p))
      d = Dim::of(std::move(*e));
    else
      llvm::consumeError(e.takeError());
  }
  if (recent.size() >= 16)
    recent.erase(recent.begin());
  recent.emplace_back(p, d);
  return d;
}

static Shape shapeFromProto(const onnx::TensorShapeProto &sp) {
  Shape s;
  s.rankKnown = true;
  for (const auto &d : sp.dim()) {
    if (d.has_dim_value())
      s.dims.push_back(Dim::fixed(d.dim_value()));
    else if (d.has_dim_param() && !d.dim_param().empty() && !isPlaceholderSymbol(d.dim_param()))
      s.dims.push_back(dimFromParam(d.dim_param()));
    else
      s.dims.push_back(Dim::unknown());
  }
  return s;
}

Type typeFromProto(const onnx::TypeProto &t) {
  Type out;
  switch (t.value_case()) {
  case onnx::TypeProto::kTensorType:
    out.kind = TypeKind::Tensor;
    out.dtype = dtypeFromCode(t.tensor_type().elem_type()).value_or(DType::Undefined);
    if (t.tensor_type().has_shape())
      out.shape = shapeFromProto(t.tensor_type().shape());
    break;
  case onnx::TypeProto::kSparseTensorType:
    out.kind = TypeKind::SparseTensor;
    out.dtype = dtypeFromCode(t.sparse_tensor_type().elem_type()).value_or(DType::Undefined);
    if (t.sparse_tensor_type().has_shape())
      out.shape = shapeFromProto(t.sparse_tensor_type().shape());
    break;
  case onnx::TypeProto::kSequenceType:
    out.kind = TypeKind::Sequence;
    if (t.sequence_type().has_elem_type())
      out.element = std::make_shared<Type>(typeFromProto(t.sequence_type().elem_type()));
    break;
  case onnx::TypeProto::kOptionalType:
    out.kind = TypeKind::Optional;
    if (t.optional_type().has_elem_type())
      out.element = std::make_shared<Type>(typeFromProto(t.optional_type().elem_type()));
    break;
  case onnx::TypeProto::kMapType:
    out.kind = TypeKind::Map;
    out.dtype = dtypeFromCode(t.map_type().key_type()).value_or(DType::Undefined);
    if (t.map_type().has_value_type())
      out.element = std::make_shared<Type>(typeFromProto(t.map_type().value_type()));
    break;
  case onnx::TypeProto::kOpaqueType:
    out.kind = TypeKind::Opaque;
    break;
  default:
    break;
  }
  return out;
}

static void shapeToProto(const Shape &s, onnx::TensorShapeProto &out) {
  for (const Dim &d : s.dims) {
    auto *pd = out.add_dim();
    if (d.isStatic())
      pd->set_dim_value(d.value);
    else if (d.isSymbolic())
      pd->set_dim_param(d.str());
  }
}

void typeToProto(const Type &t, onnx::TypeProto &out) {
  out.Clear();
  switch (t.kind) {
  case TypeKind::Tensor: {
    auto *tt = out.mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(t.dtype));
    if (t.shape.rankKnown)
      shapeToProto(t.shape, *tt->mutable_shape());
    break;
  }
  case TypeKind::SparseTensor: {
    auto *tt = out.mutable_sparse_tensor_type();
    tt->set_elem_type(static_cast<int>(t.dtype));
    if (t.shape.rankKnown)
      shapeToProto(t.shape, *tt->mutable_shape());
    break;
  }
  case TypeKind::Sequence:
    if (t.element)
      typeToProto(*t.element, *out.mutable_sequence_type()->mutable_elem_type());
    else
      out.mutable_sequence_type();
    break;
  case TypeKind::Optional:
    if (t.element)
      typeToProto(*t.element, *out.mutable_optional_type()->mutable_elem_type());
    else
      out.mutable_optional_type();
    break;
  default:
    break;
  }
}

template <typename T> static T loadLE(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) { mant <<= 1; --exp; }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace {
bool decodePayload(const onnx::TensorProto &t, ConstData &out);
}  // namespace

// Values whose count disagrees with the dims are no known contents: ONNX's
// data propagators and our folding index them by the dims.
bool decodeSmallPayload(const onnx::TensorProto &t, ConstData &out) {
  if (!decodePayload(t, out))
    return false;
  CheckedInt count = checkedProduct(t.dims());
  size_t n = out.floats.empty() ? out.ints.size() : out.floats.size();
  if (!count || static_cast<uint64_t>(*count) != n) {
    out = ConstData{};
    return false;
  }
  return true;
}

namespace {
bool decodePayload(const onnx::TensorProto &t, ConstData &out) {
  auto dt = dtypeFromCode(t.data_type()).value_or(DType::Undefined);
  out = ConstData{};
  if (t.data_location() == onnx::TensorProto::EXTERNAL || payloadRef(t).stripped)
    return false;
  if (t.has_raw_data()) {
    const std::string &r = t.raw_data();
    unsigned bits = dtypeBits(dt);
    if (bits < 8 || r.size() % (bits / 8) != 0)
      return false;
    size_t n = r.size() / (bits / 8);
    for (size_t i = 0; i < n; ++i) {
      const char *p = r.data() + i * (bits / 8);
      switch (dt) {
      case DType::Float: out.floats.push_back(loadLE<float>(p)); break;
      case DType::Double: out.floats.push_back(loadLE<double>(p)); break;
      case DType::Float16: out.floats.push_back(halfToFloat(loadLE<uint16_t>(p))); break;
      case DType::BFloat16: {
        uint32_t b = static_cast<uint32_t>(loadLE<uint16_t>(p)) << 16;
        float f;
        std::memcpy(&f, &b, 4);
        out.floats.push_back(f);
        break;
      }
      case DType::Int64: out.ints.push_back(loadLE<int64_t>(p)); break;
      case DType::Int32: out.ints.push_back(loadLE<int32_t>(p)); break;
      case DType::Int16: out.ints.push_back(loadLE<int16_t>(p)); break;
      case DType::Int8: out.ints.push_back(loadLE<int8_t>(p)); break;
      case DType::UInt8: case DType::Bool: out.ints.push_back(loadLE<uint8_t>(p)); break;
      case DType::UInt16: out.ints.push_back(loadLE<uint16_t>(p)); break;
      case DType::UInt32: out.ints.push_back(loadLE<uint32_t>(p)); break;
      case DType::UInt64: out.ints.push_back(static_cast<int64_t>(loadLE<uint64_t>(p))); break;
      default: return false;
      }
    }
    out.known = true;
    return true;
  }
  switch (dt) {
  case DType::Float: for (float f : t.float_data()) out.floats.push_back(f); break;
  case DType::Double: for (double f : t.double_data()) out.floats.push_back(f); break;
  case DType::Int64: for (int64_t v : t.int64_data()) out.ints.push_back(v); break;
  case DType::UInt64: case DType::UInt32: for (uint64_t v : t.uint64_data()) out.ints.push_back(static_cast<int64_t>(v)); break;
  case DType::Int32: case DType::Int16: case DType::Int8: case DType::UInt8: case DType::UInt16: case DType::Bool:
    for (int32_t v : t.int32_data()) out.ints.push_back(v);
    break;
  case DType::Float16:
    for (int32_t v : t.int32_data()) out.floats.push_back(halfToFloat(static_cast<uint16_t>(v)));
    break;
  default:
    return false;
  }
  out.known = true;
  return true;
}
}  // namespace

TensorLiteral literalFromTensor(const onnx::TensorProto &t) {
  TensorLiteral lit;
  lit.name = t.name();
  lit.dtype = dtypeFromCode(t.data_type()).value_or(DType::Undefined);
  for (int64_t d : t.dims())
    lit.dims.push_back(d);
  if (auto n = lit.numElements())
    lit.byteSize = bytesFor(lit.dtype, *n).value_or(0);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    lit.storage = TensorLiteral::Storage::External;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location")
        lit.externalPath = kv.value();
      else if (kv.key() == "offset")
        lit.externalOffset = std::strtoull(kv.value().c_str(), nullptr, 10);
      else if (kv.key() == "length")
        lit.externalLength = std::strtoull(kv.value().c_str(), nullptr, 10);
    }
    return lit;
  }
  PayloadRef ref = payloadRef(t);
  if (ref.stripped) {
    lit.storage = TensorLiteral::Storage::Inline;
    lit.inlineOffset = ref.offset;
    lit.storedBytes = ref.bytes;
    return lit;
  }
  uint64_t stored = t.raw_data().size() + t.float_data_size() * 4ull + t.int32_data_size() * 4ull +
                    t.int64_data_size() * 8ull + t.double_data_size() * 8ull + t.uint64_data_size() * 8ull;
  for (const auto &s : t.string_data())
    stored += s.size();
  lit.storage = stored || t.string_data_size() ? TensorLiteral::Storage::Inline : TensorLiteral::Storage::Empty;
  lit.storedBytes = t.has_raw_data() ? t.raw_data().size() : 0;
  decodeSmallPayload(t, lit.data);
  return lit;
}

void attributeFromProto(const onnx::AttributeProto &a, Attribute &out) {
  out.name = a.name();
  out.refAttrName = a.ref_attr_name();
  using AP = onnx::AttributeProto;
  switch (a.type()) {
  case AP::FLOAT: out.kind = AttrKind::Float; out.f = a.f(); break;
  case AP::INT: out.kind = AttrKind::Int; out.i = a.i(); break;
  case AP::STRING: out.kind = AttrKind::String; out.s = a.s(); makeValidUtf8(out.s); break;
  case AP::TENSOR: out.kind = AttrKind::Tensor; out.tensors.push_back(literalFromTensor(a.t())); break;
  case AP::SPARSE_TENSOR: out.kind = AttrKind::SparseTensor; out.tensors.push_back(literalFromTensor(a.sparse_tensor().values())); break;
  case AP::GRAPH: out.kind = AttrKind::Graph; break;
  case AP::TYPE_PROTO: out.kind = AttrKind::TypeProto; break;
  case AP::FLOATS: out.kind = AttrKind::Floats; out.floats.assign(a.floats().begin(), a.floats().end()); break;
  case AP::INTS: out.kind = AttrKind::Ints; out.ints.assign(a.ints().begin(), a.ints().end()); break;
  case AP::STRINGS:
    out.kind = AttrKind::Strings;
    out.strings.assign(a.strings().begin(), a.strings().end());
    for (std::string &e : out.strings)
      makeValidUtf8(e);
    break;
  case AP::TENSORS:
    out.kind = AttrKind::Tensors;
    for (const auto &t : a.tensors())
      out.tensors.push_back(literalFromTensor(t));
    break;
  case AP::GRAPHS: out.kind = AttrKind::Graphs; break;
  case AP::SPARSE_TENSORS: out.kind = AttrKind::SparseTensors; break;
  case AP::TYPE_PROTOS: out.kind = AttrKind::TypeProtos; break;
  default:
    // Attributes written without a type field (old exporters): infer it.
    if (a.has_f()) { out.kind = AttrKind::Float; out.f = a.f(); }
    else if (a.has_i()) { out.kind = AttrKind::Int; out.i = a.i(); }
    else if (a.has_s()) { out.kind = AttrKind::String; out.s = a.s(); makeValidUtf8(out.s); }
    else if (a.ints_size()) { out.kind = AttrKind::Ints; out.ints.assign(a.ints().begin(), a.ints().end()); }
    else if (a.floats_size()) { out.kind = AttrKind::Floats; out.floats.assign(a.floats().begin(), a.floats().end()); }
    break;
  }
}

size_t makeStringsValidUtf8(google::protobuf::Message &m, std::string *first) {
  using FD = google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection *r = m.GetReflection();
  std::vector<const FD *> fields;
  r->ListFields(m, &fields);
  size_t repaired = 0;
  std::string scratch;
  // Read in place and copied only when a byte is not ASCII: a million-node
  // graph has millions of names, nearly all ASCII.
  auto fix = [&](const std::string &in, auto &&store) {
    if (std::all_of(in.begin(), in.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
      return;
    std::string s = in;
    if (!makeValidUtf8(s))
      return;
    if (repaired++ == 0 && first)
      *first = s;
    store(std::move(s));
  };
  for (const FD *f : fields) {
    if (f->type() == FD::TYPE_STRING) {
      if (f->is_repeated()) {
        for (int i = 0, n = r->FieldSize(m, f); i < n; ++i)
          fix(r->GetRepeatedStringReference(m, f, i, &scratch),
              [&](std::string s) { r->SetRepeatedString(&m, f, i, std::move(s)); });
      } else {
        fix(r->GetStringReference(m, f, &scratch), [&](std::string s) { r->SetString(&m, f, std::move(s)); });
      }
    } else if (f->cpp_type() == FD::CPPTYPE_MESSAGE) {
      // Only the first repair anywhere is reported.
      auto below = [&](google::protobuf::Message &sub) {
        repaired += makeStringsValidUtf8(sub, repaired == 0 ? first : nullptr);
      };
      if (f->is_repeated()) {
        for (int i = 0, n = r->FieldSize(m, f); i < n; ++i)
          below(*r->MutableRepeatedMessage(&m, f, i));
      } else {
        below(*r->MutableMessage(&m, f));
      }
    }
  }
  return repaired;
}

std::vector<std::pair<std::string, std::string>> newerMetadataProps(const google::protobuf::Message &m, int field) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto &unknown = m.GetReflection()->GetUnknownFields(m);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto &uf = unknown.field(i);
    if (uf.number() != field || uf.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto kv;
    if (kv.ParseFromString(uf.length_delimited())) {
      makeStringsValidUtf8(kv);
      out.emplace_back(kv.key(), kv.value());
    }
  }
  return out;
}

}  // namespace graphlint::onnxio
