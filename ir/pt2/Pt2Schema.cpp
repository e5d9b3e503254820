#include "Pt2Schema.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/JSON.h>

namespace graphlint::pt2 {

std::optional<DType> dtypeFromScalarType(int64_t code) {
  switch (code) {
  case 1: return DType::UInt8;
  case 2: return DType::Int8;
  case 3: return DType::Int16;
  case 4: return DType::Int32;
  case 5: return DType::Int64;
  case 6: return DType::Float16;
  case 7: return DType::Float;
  case 8: return DType::Double;
  case 10: return DType::Complex64;
  case 11: return DType::Complex128;
  case 12: return DType::Bool;
  case 13: return DType::BFloat16;
  case 28: return DType::UInt16;
  case 29: return DType::Float8E4M3FN;
  case 30: return DType::Float8E5M2;
  case 31: return DType::Float8E4M3FNUZ;
  case 32: return DType::Float8E5M2FNUZ;
  case 33: return DType::Float8E8M0;
  case 34: return DType::UInt32;
  case 35: return DType::UInt64;
  default: return std::nullopt;
  }
}

const char *torchDtypeName(DType t) {
  switch (t) {
  case DType::Float: return "float32";
  case DType::Float16: return "float16";
  case DType::BFloat16: return "bfloat16";
  case DType::Double: return "float64";
  case DType::Int64: return "int64";
  case DType::Int32: return "int32";
  case DType::Int16: return "int16";
  case DType::Int8: return "int8";
  case DType::UInt8: return "uint8";
  case DType::Bool: return "bool";
  default: return "unknown";
  }
}

bool isRuntimeGuard(llvm::StringRef op) {
  return op == "_assert_scalar" || op == "_assert_tensor_metadata" || op == "_assert_async" ||
         op == "sym_constrain_range" || op == "sym_constrain_range_for_size" || op == "_functional_assert_async" ||
         op == "_functional_sym_constrain_range" || op == "_functional_sym_constrain_range_for_size";
}

bool isUnbackedName(llvm::StringRef n) {
  return n.size() > 1 && n[0] == 'u' && llvm::all_of(n.drop_front(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> tensorNames(const llvm::json::Value &arg) {
  const llvm::json::Object *o = arg.getAsObject();
  return o ? tensorNames(o) : std::vector<std::string>{};
}

std::vector<std::string> tensorNames(const llvm::json::Object *o) {
  std::vector<std::string> out;
  if (!o)
    return out;
  if (const llvm::json::Object *t = o->getObject("as_tensor"))
    if (auto n = t->getString("name"))
      out.push_back(n->str());
  if (const llvm::json::Array *ts = o->getArray("as_tensors"))
    for (const llvm::json::Value &t : *ts)
      if (const llvm::json::Object *to = t.getAsObject())
        if (auto n = to->getString("name"))
          out.push_back(n->str());
  return out;
}

Device deviceOf(const llvm::json::Object &dev) {
  Device d;
  llvm::StringRef type = dev.getString("type").getValueOr("");
  d.kind = type == "cpu" ? Device::Kind::CPU : type == "cuda" ? Device::Kind::CUDA
           : type == "meta" ? Device::Kind::Meta : type.empty() ? Device::Kind::Unknown : Device::Kind::Other;
  if (auto idx = dev.getInteger("index"))
    d.index = static_cast<int>(*idx);
  else if (d.kind == Device::Kind::CUDA)
    d.index = 0;  // "cuda": the current device, cuda:0 in an exported program
  return d;
}

Dim dimFromExprStr(llvm::StringRef text) {
  llvm::Expected<SymExprRef> parsed = SymExpr::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return Dim::unknown();
  }
  return Dim::of(std::move(*parsed));
}

}  // namespace graphlint::pt2
