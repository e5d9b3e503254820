#include "Pt2Schema.h"

#include "graphlint/ir/JsonInput.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/JSON.h>

#include <cctype>

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

namespace {

SymExprRef renamed(const SymExprRef &e, const SymbolNames &names) {
  if (e->isSymbol()) {
    auto it = names.find(e->name());
    return it == names.end() ? e : SymExpr::symbol(it->second);
  }
  if (e->args().empty())
    return e;
  llvm::SmallVector<SymExprRef, 2> args;
  for (const SymExprRef &a : e->args())
    args.push_back(renamed(a, names));
  return SymExpr::make(e->op(), args);
}

bool isSymbolName(llvm::StringRef n) {
  return !n.empty() && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_') &&
         llvm::all_of(n, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

Dim dimFromExprStr(llvm::StringRef text, const SymbolNames &names) {
  llvm::Expected<SymExprRef> parsed = SymExpr::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return Dim::unknown();
  }
  return Dim::of(names.empty() ? std::move(*parsed) : renamed(*parsed, names));
}

llvm::Expected<SymbolNames> parseSymbolNames(llvm::StringRef text) {
  auto bad = [](std::string msg) {
    return llvm::make_error<llvm::StringError>(std::move(msg), llvm::inconvertibleErrorCode());
  };
  JsonRefusal why;
  llvm::Expected<llvm::json::Value> doc = parseJsonInput(text, "", {}, &why);
  if (!doc)
    return bad((why == JsonRefusal::Syntax ? "is not valid JSON: " : "") + llvm::toString(doc.takeError()));
  const llvm::json::Object *o = doc->getAsObject();
  if (!o)
    return bad("expected an object of torch symbol -> name, e.g. {\"s77\": \"batch\"}");
  SymbolNames out;
  std::map<std::string, std::string> taken;
  for (const auto &kv : *o) {
    auto name = kv.second.getAsString();
    std::string sym = kv.first.str();
    if (!name || !isSymbolName(*name) || !isSymbolName(sym) || isUnbackedName(sym))
      return bad("'" + sym + "' is not a size symbol of the program mapped to a name (" +
                 (name ? "'" + name->str() + "'" : std::string("not a string")) + ")");
    if (auto [it, fresh] = taken.emplace(name->str(), sym); !fresh)
      return bad("'" + it->first + "' names both " + it->second + " and " + sym);
    out[sym] = name->str();
  }
  return out;
}

std::string renamedSymbol(const std::string &sym, const SymbolNames &names) {
  auto it = names.find(sym);
  return it == names.end() ? sym : it->second;
}

}  // namespace graphlint::pt2
