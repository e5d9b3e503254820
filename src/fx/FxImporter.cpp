// The FX frontend: reads the JSON that graphlint-export (python/graphlint/export) writes
// (docs/fx-format.md) into the same IR the ONNX frontend builds. Types come
// from the exporter's tensor meta (no inference needed); mutation, alias and
// saved-for-backward facts, devices, source lines and module paths are copied
// onto the Nodes and Values. Any missing or mistyped field stops the import
// with a one-line message naming the field (e.g. "nodes[3].outputs[0].shape:
// expected an array"), never a crash.
#include "graphlint/fx/FxImporter.h"
#include "graphlint/ir/FullRangeSlice.h"
#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/JsonInput.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/SymbolBinder.h"

#include <fmt/format.h>

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/JSON.h>

#include <algorithm>
#include <llvm/ADT/Optional.h>

namespace graphlint {
namespace {

constexpr int64_t kFxFormatVersion = kFxFormatNewest;
constexpr int64_t kFxOldestVersion = kFxFormatOldest;

llvm::Optional<DType> dtypeFromTorchName(llvm::StringRef s) {
  static const std::pair<const char *, DType> kNames[] = {
      {"float32", DType::Float},        {"float16", DType::Float16},   {"bfloat16", DType::BFloat16},
      {"float64", DType::Double},       {"int64", DType::Int64},       {"int32", DType::Int32},
      {"int16", DType::Int16},          {"int8", DType::Int8},         {"uint8", DType::UInt8},
      {"bool", DType::Bool},            {"complex64", DType::Complex64}, {"complex128", DType::Complex128},
      {"float8_e4m3fn", DType::Float8E4M3FN}, {"float8_e4m3fnuz", DType::Float8E4M3FNUZ},
      {"float8_e5m2", DType::Float8E5M2},     {"float8_e5m2fnuz", DType::Float8E5M2FNUZ},
      {"uint16", DType::UInt16},        {"uint32", DType::UInt32},     {"uint64", DType::UInt64},
  };
  for (const auto &[name, dt] : kNames)
    if (s == name)
      return dt;
  return llvm::None;
}

Device deviceFromString(llvm::StringRef s) {
  Device d;
  auto [kind, index] = s.split(':');
  if (kind == "cpu")
    d.kind = Device::Kind::CPU;
  else if (kind == "cuda")
    d.kind = Device::Kind::CUDA;
  else if (kind == "meta")
    d.kind = Device::Kind::Meta;
  else if (!kind.empty())
    d.kind = Device::Kind::Other;
  int idx = 0;
  if (!index.empty() && !index.getAsInteger(10, idx))
    d.index = idx;
  else if (d.kind == Device::Kind::CUDA)
    d.index = 0;  // "cuda" is the current device, cuda:0 in an exported step
  return d;
}

/// Reads one JSON document; remembers the first problem with the path of
/// the field that caused it ("nodes[3].outputs[0].shape").
class FxImport {
public:
  FxImport(const std::string &path, const ImportOptions &opts) : path_(path), binder_(opts.dims) {}

  llvm::Expected<std::unique_ptr<Model>> run(llvm::StringRef bytes) {
    if (bytes.trim().empty())
      return stringError("empty file: not an FX graph");
    // Nesting and the number of values are checked before anything is built.
    JsonRefusal why;
    llvm::Expected<llvm::json::Value> doc = parseJsonInput(bytes, "", {}, &why);
    if (!doc)
      return stringError(fmt::format("{}: {}",
                                     why == JsonRefusal::Syntax ? "is not valid JSON" : "is not a graphlint FX graph",
                                     llvm::toString(doc.takeError())));
    const llvm::json::Object *root = doc->getAsObject();
    if (!root)
      return stringError("is a JSON file but not a graphlint FX graph: the top level is not an object");
    if (llvm::Error e = checkHeader(*root))
      return e;
    model_ = std::make_unique<Model>();
    model_->path = path_;
    model_->format = ModelFormat::Fx;
    model_->fileSize = bytes.size();
    model_->opsets.push_back({"aten", 1});
    model_->graph = std::make_unique<Graph>();
    model_->graph->name = "main";
    readProvenance(*root);
    readSymbols(*root);
    readTensorList(*root, "params", Value::Kind::Param);
    readTensorList(*root, "inputs", Value::Kind::GraphInput);
    readNodes(*root);
    if (error_.empty())
      resolveSavePoints();
    readOutputs(*root);
    readSuppressions(*root);
    readModuleContainers(*root);
    if (!error_.empty())
      return stringError(error_);
    binder_.finish(*model_);
    return std::move(model_);
  }

private:
  llvm::Error checkHeader(const llvm::json::Object &root) {
    llvm::Optional<llvm::StringRef> format = root.getString("format");
    if (!format || *format != "graphlint-fx")
      return stringError("is a JSON file but not a graphlint FX graph (expected \"format\": \"graphlint-fx\"; write one "
                  "with graphlint-export)");
    llvm::Optional<int64_t> version = root.getInteger("version");
    if (!version)
      return stringError("version: missing or not an integer");
    if (*version < kFxOldestVersion || *version > kFxFormatVersion)
      return stringError(fmt::format("FX format version {} is not supported (this graphlint reads versions {} to {}){}",
                              *version, kFxOldestVersion, kFxFormatVersion,
                              *version > kFxFormatVersion ? ": upgrade graphlint" : ": re-export with graphlint-export"));
    version_ = *version;
    return llvm::Error::success();
  }

  // --- field access: each records the first error and returns a default ---

  void error(const std::string &where, const std::string &what) {
    if (error_.empty())  // one line, whatever the file's strings hold
      error_ = oneLine(fmt::format("{}: {}", where, what));
  }

  const llvm::json::Array *array(const llvm::json::Object &o, llvm::StringRef key, const std::string &where,
                                 bool required) {
    const llvm::json::Value *v = o.get(key);
    if (!v || v->kind() == llvm::json::Value::Null) {
      if (required)
        error(where, "missing");
      return nullptr;
    }
    const llvm::json::Array *a = v->getAsArray();
    if (!a)
      error(where, "expected an array");
    return a;
  }

  const llvm::json::Object *object(const llvm::json::Value &v, const std::string &where) {
    const llvm::json::Object *o = v.getAsObject();
    if (!o)
      error(where, "expected an object");
    return o;
  }

  std::string string(const llvm::json::Object &o, llvm::StringRef key, const std::string &where, bool required) {
    const llvm::json::Value *v = o.get(key);
    if (!v || v->kind() == llvm::json::Value::Null) {
      if (required)
        error(where, "missing");
      return {};
    }
    llvm::Optional<llvm::StringRef> s = v->getAsString();
    if (!s) {
      error(where, "expected a string");
      return {};
    }
    return s->str();
  }

  llvm::Optional<int64_t> integer(const llvm::json::Object &o, llvm::StringRef key, const std::string &where) {
    const llvm::json::Value *v = o.get(key);
    if (!v || v->kind() == llvm::json::Value::Null)
      return llvm::None;
    llvm::Optional<int64_t> i = v->getAsInteger();
    if (!i)
      error(where, "expected an integer");
    return i;
  }

  // --- sections ---

  void readProvenance(const llvm::json::Object &root) {
    if (const llvm::json::Value *p = root.get("producer"))
      if (const llvm::json::Object *o = object(*p, "producer")) {
        model_->producerName = string(*o, "name", "producer.name", false);
        model_->producerVersion = string(*o, "version", "producer.version", false);
        for (llvm::StringRef k : {"torch", "capture"})
          if (llvm::Optional<llvm::StringRef> s = o->getString(k))
            model_->metadata.emplace_back(k.str(), s->str());
        aliasesFullRangeSlices_ = eagerAliasesFullRangeSlices(o->getString("torch").getValueOr(""));
      }
    if (llvm::Optional<llvm::StringRef> mode = root.getString("mode"))
      model_->metadata.emplace_back("mode", mode->str());
    if (const llvm::json::Value *m = root.get("model"))
      if (const llvm::json::Object *o = object(*m, "model"))
        for (llvm::StringRef k : {"file", "class"})
          if (llvm::Optional<llvm::StringRef> s = o->getString(k))
            model_->metadata.emplace_back(("model_" + k).str(), s->str());
    // What the exporter could not put in the graph (a backward it could not
    // trace, a value it assumed, a constant it baked): shown as setup
    // warnings, so that nothing it knows is silently missing.
    if (const llvm::json::Array *notes = root.getArray("diagnostics"))
      for (const llvm::json::Value &d : *notes)
        if (const llvm::json::Object *o = d.getAsObject()) {
          std::string at;
          if (const llvm::json::Object *src = o->getObject("source"))
            if (llvm::Optional<llvm::StringRef> f = src->getString("file"))
              at = fmt::format(" at {}:{}", f->str(), src->getInteger("line").getValueOr(0));
          model_->setupWarnings.push_back(fmt::format("exporter ({}){}: {}", o->getString("kind").getValueOr("note").str(),
                                                      at, o->getString("message").getValueOr("").str()));
        }
    if (const llvm::json::Object *b = root.getObject("backward")) {
      llvm::Optional<bool> traced = b->getBoolean("traced");
      model_->metadata.emplace_back("backward", traced && *traced ? "traced" : "not traced");
      if (llvm::Optional<llvm::StringRef> err = b->getString("error"); err && !err->empty())
        model_->metadata.emplace_back("backward_error", err->str());
    }
  }

  // Version 2: NAME -> {"hint", "kind", "min", "max", "source"}.
  void readSymbols(const llvm::json::Object &root) {
    const llvm::json::Value *syms = root.get("symbols");
    if (!syms || syms->kind() == llvm::json::Value::Null)
      return;
    const llvm::json::Object *o = object(*syms, "symbols");
    if (!o)
      return;
    for (const auto &kv : *o) {
      std::string where = fmt::format("symbols.{}", kv.first.str());
      const llvm::json::Object *s = object(kv.second, where);
      if (!s)
        return;
      SymbolInfo info;
      info.name = kv.first.str();
      llvm::Expected<SymExprRef> e = SymExpr::parse(info.name);
      if (!e || !(*e)->isSymbol()) {
        if (!e)
          llvm::consumeError(e.takeError());
        return error(where, "a symbol name must be an identifier ([A-Za-z_][A-Za-z0-9_]*)");
      }
      auto opt = [&](const char *key) -> std::optional<int64_t> {
        llvm::Optional<int64_t> v = integer(*s, key, fmt::format("{}.{}", where, key));
        return v ? std::optional<int64_t>(*v) : std::nullopt;
      };
      info.hint = opt("hint");
      info.min = opt("min");
      info.max = opt("max");
      std::string kind = string(*s, "kind", where + ".kind", false);
      if (kind == "unbacked")
        info.kind = SymbolInfo::Kind::Unbacked;
      else if (!kind.empty() && kind != "input")
        return error(where + ".kind", fmt::format("expected \"input\" or \"unbacked\", got '{}'", kind));
      info.source = string(*s, "source", where + ".source", false);
      if (const llvm::json::Value *d = s->get("default")) {
        llvm::Optional<llvm::StringRef> text = d->getAsString();
        if (!text)
          return error(where + ".default", "expected a size expression (string)");
        llvm::Expected<SymExprRef> e = SymExpr::parse(*text);
        if (!e)
          return error(where + ".default", llvm::toString(e.takeError()));
        info.defaultExpr = std::move(*e);
      }
      info.assumption = string(*s, "assumption", where + ".assumption", false);
      binder_.declare(std::move(info));
    }
  }

  /// One entry of `shape` or `strides`: an integer, null (unknown) or a size
  /// expression over symbols (version 1: a symbol name).
  Dim readDim(const llvm::json::Value &d, const std::string &at) {
    if (llvm::Optional<int64_t> n = d.getAsInteger())
      return Dim::fixed(*n);
    if (d.kind() == llvm::json::Value::Null)
      return Dim::unknown();
    llvm::Optional<llvm::StringRef> text = d.getAsString();
    if (!text) {
      error(at, "expected an integer, a size expression or null");
      return Dim::unknown();
    }
    llvm::Expected<SymExprRef> e = SymExpr::parse(*text);
    if (e)
      return Dim::of(std::move(*e));
    std::string why = llvm::toString(e.takeError());
    if (version_ < 2)
      return Dim::named(text->str());  // version 1 took any string as a name
    error(at, why);
    return Dim::unknown();
  }

  /// Reads {"shape", "strides", "dtype", "device", "requires_grad"} into a value.
  void readTensorMeta(const llvm::json::Object &o, const std::string &where, Value &v, bool userInput = false) {
    const llvm::json::Array *shape = array(o, "shape", where + ".shape", true);
    std::string dtype = string(o, "dtype", where + ".dtype", true);
    if (!shape)
      return;
    Shape s;
    s.rankKnown = true;
    for (size_t i = 0; i < shape->size(); ++i) {
      std::string at = fmt::format("{}.shape[{}]", where, i);
      Dim d = readDim((*shape)[i], at);
      if (d.isStatic() && d.value < 0)
        error(at, fmt::format("negative dimension {}", d.value));
      s.dims.push_back(std::move(d));
    }
    // Strides are checked like dims; what the IR keeps of them is a rank-4
    // tensor's memory format (the cost model's layout transforms).
    std::vector<Dim> strides;
    if (const llvm::json::Array *a = array(o, "strides", where + ".strides", false))
      for (size_t i = 0; i < a->size(); ++i)
        strides.push_back(readDim((*a)[i], fmt::format("{}.strides[{}]", where, i)));
    v.memoryFormat = memoryFormatOf(s.dims, strides);
    if (userInput)
      binder_.noteInput(v.name, Type::tensor(dtypeFromTorchName(dtype).getValueOr(DType::Undefined), s));
    for (Dim &d : s.dims)
      d = binder_.bind(d);
    llvm::Optional<DType> dt = dtypeFromTorchName(dtype);
    if (!dt && !dtype.empty())
      error(where + ".dtype", fmt::format("unknown dtype '{}'", escapedForMessage(dtype)));
    v.type = Type::tensor(dt.getValueOr(DType::Undefined), std::move(s));
    v.device = deviceFromString(string(o, "device", where + ".device", false));
    if (const llvm::json::Value *rg = o.get("requires_grad")) {
      llvm::Optional<bool> b = rg->getAsBoolean();
      if (!b)
        error(where + ".requires_grad", "expected true or false");
      v.requiresGrad = b.getValueOr(false);
    }
  }

  Value *define(const std::string &name, Value::Kind kind, const std::string &where) {
    if (name.empty()) {
      error(where + ".name", "empty name");
      return nullptr;
    }
    if (model_->graph->findLocal(name)) {
      error(where + ".name", fmt::format("'{}' is defined twice", escapedForMessage(name)));
      return nullptr;
    }
    return model_->graph->createValue(name, kind);
  }

  /// The params or inputs list: named tensors, each defining a value.
  void readTensorList(const llvm::json::Object &root, const char *section, Value::Kind kind) {
    const llvm::json::Array *list = array(root, section, section, true);
    for (size_t i = 0; list && i < list->size() && error_.empty(); ++i) {
      std::string where = fmt::format("{}[{}]", section, i);
      const llvm::json::Object *o = object((*list)[i], where);
      Value *v = o ? define(string(*o, "name", where + ".name", true), kind, where) : nullptr;
      if (!v)
        return;
      readTensorMeta(*o, where, *v, kind == Value::Kind::GraphInput);
      if (kind == Value::Kind::GraphInput) {
        model_->graph->inputs.push_back(v);
        continue;
      }
      Param *p = model_->graph->createParam();
      p->value = v;
      v->param = p;
      p->buffer = string(*o, "kind", where + ".kind", false) == "buffer";
      TensorLiteral &t = p->tensor;
      t.name = v->name;
      t.dtype = v->type.dtype;
      for (const Dim &d : v->type.shape.dims)
        t.dims.push_back(d.isStatic() ? d.value : -1);
      t.byteSize = v->type.byteSize().value_or(0);
      t.storage = TensorLiteral::Storage::Empty;  // the exporter writes no values, by design
    }
  }

  void readNodes(const llvm::json::Object &root) {
    const llvm::json::Array *nodes = array(root, "nodes", "nodes", true);
    for (size_t i = 0; nodes && i < nodes->size() && error_.empty(); ++i) {
      std::string where = fmt::format("nodes[{}]", i);
      if (const llvm::json::Object *o = object((*nodes)[i], where))
        readNode(*o, where);
    }
  }

  void readNode(const llvm::json::Object &o, const std::string &where) {
    Graph &g = *model_->graph;
    std::string op = string(o, "op", where + ".op", true);
    if (!error_.empty())
      return;
    Node *n = g.createNode();
    n->name = string(o, "name", where + ".name", false);
    llvm::StringRef ns, name;
    std::tie(ns, name) = llvm::StringRef(op).split("::");
    if (name.empty()) {
      error(where + ".op", fmt::format("'{}' is not a qualified op name such as 'aten::relu'", escapedForMessage(op)));
      return;
    }
    n->domain = ns.str();
    n->opType = name.str();
    n->opsetVersion = 1;
    n->op = OpRegistry::instance().lookup(n->domain, n->opType, n->opsetVersion);
    if (std::string overload = string(o, "overload", where + ".overload", false); !overload.empty())
      n->metadata.emplace_back("overload", overload);
    if (std::string phase = string(o, "phase", where + ".phase", false); !phase.empty()) {
      n->backwardPhase = phase == "backward";
      n->metadata.emplace_back("phase", phase);
    }
    // Kept as metadata: the joint memory trace reads it (JointTrace.cpp).
    if (llvm::Optional<int64_t> rest = integer(o, "apply_rest", where + ".apply_rest")) {
      if (*rest < 0)
        error(where + ".apply_rest", "expected a count of nodes (>= 0)");
      else
        n->metadata.emplace_back("apply_rest", std::to_string(*rest));
    }
    if (llvm::Optional<bool> acc = o.getBoolean("accumulates"); acc && *acc)
      n->metadata.emplace_back("accumulates", "true");  // also read by JointTrace.cpp
    readNodeInputs(o, where, *n);
    readNodeOutputs(o, where, *n);
    readAttributes(o, where, *n);
    // Inference BatchNorm normalises with stored statistics: elementwise, as
    // ONNX's BatchNormalization; in training it reduces over the batch.
    if ((n->opType == "native_batch_norm" || n->opType == "_native_batch_norm_legit") && n->attrInt("training") == 0)
      n->op = OpRegistry::instance().lookup("aten", "_native_batch_norm_legit_no_training", n->opsetVersion);
    readEffects(o, where, *n);
    readSource(o, where, *n);
    n->modulePath = string(o, "module", where + ".module", false);
    // A symbolic trace keeps the full-range slices torch 2.x's eager aliases.
    if (error_.empty() && aliasesFullRangeSlices_)
      recordFullRangeSliceAsAlias(*n);
  }

  void readNodeInputs(const llvm::json::Object &o, const std::string &where, Node &n) {
    const llvm::json::Array *ins = array(o, "inputs", where + ".inputs", true);
    for (size_t i = 0; ins && i < ins->size(); ++i) {
      const llvm::json::Value &in = (*ins)[i];
      if (in.kind() == llvm::json::Value::Null) {
        n.inputs.push_back(nullptr);
        continue;
      }
      llvm::Optional<llvm::StringRef> ref = in.getAsString();
      Value *v = ref ? model_->graph->findLocal(*ref) : nullptr;
      if (!ref)
        error(fmt::format("{}.inputs[{}]", where, i), "expected a value name or null");
      else if (!v)
        error(fmt::format("{}.inputs[{}]", where, i), fmt::format("'{}' is not defined before this node", escapedForMessage(*ref)));
      if (v)
        v->uses.push_back({&n, static_cast<unsigned>(n.inputs.size())});
      n.inputs.push_back(v);
    }
  }

  void readNodeOutputs(const llvm::json::Object &o, const std::string &where, Node &n) {
    const llvm::json::Array *outs = array(o, "outputs", where + ".outputs", true);
    for (size_t i = 0; outs && i < outs->size() && error_.empty(); ++i) {
      std::string at = fmt::format("{}.outputs[{}]", where, i);
      const llvm::json::Object *out = object((*outs)[i], at);
      if (!out)
        return;
      Value *v = define(string(*out, "name", at + ".name", true), Value::Kind::NodeOutput, at);
      if (!v)
        return;
      v->producer = &n;
      v->resultIndex = static_cast<unsigned>(n.outputs.size());
      if (out->get("shape") || out->get("dtype"))
        readTensorMeta(*out, at, *v);
      else
        v->type.kind = TypeKind::Opaque;  // a Python scalar (.item(), sizes), not a tensor
      n.outputs.push_back(v);
    }
  }

  void readAttributes(const llvm::json::Object &o, const std::string &where, Node &n) {
    const llvm::json::Value *attrs = o.get("attrs");
    if (!attrs)
      return;
    const llvm::json::Object *a = object(*attrs, where + ".attrs");
    if (!a)
      return;
    // JSON objects are unordered; sort so the IR (and anything printed from it) is deterministic.
    std::vector<std::string> keys;
    for (const auto &kv : *a)
      keys.push_back(kv.first.str());
    std::sort(keys.begin(), keys.end());
    for (const std::string &k : keys) {
      const llvm::json::Value &v = *a->get(k);
      Attribute attr;
      attr.name = k;
      if (llvm::Optional<bool> b = v.getAsBoolean()) {
        attr.kind = AttrKind::Int, attr.i = *b;
      } else if (llvm::Optional<int64_t> i = v.getAsInteger()) {
        attr.kind = AttrKind::Int, attr.i = *i;
      } else if (llvm::Optional<double> f = v.getAsNumber()) {
        attr.kind = AttrKind::Float, attr.f = *f;
      } else if (llvm::Optional<llvm::StringRef> s = v.getAsString()) {
        attr.kind = AttrKind::String, attr.s = s->str();
      } else if (const llvm::json::Array *list = v.getAsArray()) {
        // Version 2 size lists may hold expressions (view(["batch*seq", 64])):
        // bound like dims, -1 where a symbol stays unbound.
        bool ints = true, sizes = true;
        // Booleans (convolution_backward's output_mask) are 0/1 ints.
        auto asInt = [](const llvm::json::Value &x) -> llvm::Optional<int64_t> {
          if (llvm::Optional<bool> b = x.getAsBoolean())
            return static_cast<int64_t>(*b);
          return x.getAsInteger();
        };
        for (const llvm::json::Value &x : *list) {
          ints &= asInt(x).hasValue();
          sizes &= x.getAsInteger().hasValue() || x.getAsString().hasValue();
        }
        attr.kind = ints || sizes ? AttrKind::Ints : AttrKind::Floats;
        for (const llvm::json::Value &x : *list) {
          if (ints)
            attr.ints.push_back(*asInt(x));
          else if (sizes)
            attr.ints.push_back(sizeAttr(x));
          else
            attr.floats.push_back(x.getAsNumber().getValueOr(0));
        }
      } else {
        continue;  // null: an omitted optional argument
      }
      n.attributes.push_back(std::move(attr));
    }
  }

  int64_t sizeAttr(const llvm::json::Value &x) {
    if (llvm::Optional<int64_t> i = x.getAsInteger())
      return *i;
    llvm::Expected<SymExprRef> e = SymExpr::parse(*x.getAsString());
    if (!e) {
      llvm::consumeError(e.takeError());
      return -1;
    }
    Dim d = binder_.bind(Dim::of(std::move(*e)));
    return d.isStatic() ? d.value : -1;
  }

  // "mutates": input indices written in place; "aliases": per output, the
  // input whose storage it shares (-1: fresh); "saved": per output, whether
  // autograd keeps it for backward.
  void readEffects(const llvm::json::Object &o, const std::string &where, Node &n) {
    auto indexList = [&](llvm::StringRef key, auto &&each) {
      const llvm::json::Array *list = array(o, key, fmt::format("{}.{}", where, key.str()), false);
      for (size_t i = 0; list && i < list->size(); ++i)
        each((*list)[i], fmt::format("{}.{}[{}]", where, key.str(), i));
    };
    indexList("mutates", [&](const llvm::json::Value &v, const std::string &at) {
      llvm::Optional<int64_t> idx = v.getAsInteger();
      if (!idx || *idx < 0 || static_cast<size_t>(*idx) >= n.inputs.size())
        return error(at, fmt::format("expected an input index below {}", n.inputs.size()));
      n.mutatedInputs.push_back(static_cast<unsigned>(*idx));
    });
    indexList("aliases", [&](const llvm::json::Value &v, const std::string &at) {
      llvm::Optional<int64_t> idx = v.getAsInteger();
      if (!idx || *idx < -1 || *idx >= static_cast<int64_t>(n.inputs.size()))
        return error(at, fmt::format("expected -1 or an input index below {}", n.inputs.size()));
      n.outputAliasesInput.push_back(static_cast<int>(*idx));
    });
    indexList("saved", [&](const llvm::json::Value &v, const std::string &at) {
      llvm::Optional<bool> b = v.getAsBoolean();
      if (!b)
        return error(at, "expected true or false");
      n.outputSavedForBackward.push_back(*b);
    });
    indexList("dropout", [&](const llvm::json::Value &v, const std::string &at) {
      llvm::Optional<double> p = v.kind() == llvm::json::Value::Null ? llvm::Optional<double>(0.0) : v.getAsNumber();
      if (!p || *p < 0 || *p > 1)
        return error(at, "expected null or a dropout probability in [0, 1]");
      n.outputDropout.push_back(static_cast<float>(*p));
    });
    // "held": per output, the node after which the last Python frame binding
    // it returned (null: none held it past its last reader); kept as
    // Node::metadata ("held.J", name) for the memory trace.
    indexList("held", [&](const llvm::json::Value &v, const std::string &at) {
      if (v.kind() == llvm::json::Value::Null)
        return;
      llvm::Optional<llvm::StringRef> ref = v.getAsString();
      if (!ref)
        return error(at, "expected null or a node name");
      n.metadata.emplace_back(fmt::format("held.{}", at.substr(at.rfind('[') + 1, at.size() - at.rfind('[') - 2)),
                              ref->str());
    });
    // "saved_at": per output, the node after which autograd saved it (null:
    // not saved): this node or a later one, resolved once every node is read.
    indexList("saved_at", [&](const llvm::json::Value &v, const std::string &at) {
      n.outputSavedAfter.push_back(nullptr);
      if (v.kind() == llvm::json::Value::Null)
        return;
      llvm::Optional<llvm::StringRef> ref = v.getAsString();
      if (!ref)
        return error(at, "expected null or a node name");
      savePoints_.push_back({&n, static_cast<unsigned>(n.outputSavedAfter.size() - 1), ref->str(), at});
    });
    // "grad_of": per output of a backward node, the forward value it is the
    // gradient of (null: unknown); a value of an earlier forward node.
    indexList("grad_of", [&](const llvm::json::Value &v, const std::string &at) {
      n.outputGradientOf.push_back(nullptr);
      if (v.kind() == llvm::json::Value::Null)
        return;
      llvm::Optional<llvm::StringRef> ref = v.getAsString();
      const Value *fwd = ref ? model_->graph->findLocal(*ref) : nullptr;
      if (!fwd || fwd->kind != Value::Kind::NodeOutput || !fwd->producer || fwd->producer->backwardPhase)
        return error(at, ref ? fmt::format("'{}' is not the output of an earlier forward node", escapedForMessage(*ref))
                             : std::string("expected null or a value name"));
      n.outputGradientOf.back() = fwd;
    });
    if (n.outputAliasesInput.size() > n.outputs.size() || n.outputSavedForBackward.size() > n.outputs.size() ||
        n.outputDropout.size() > n.outputs.size() || n.outputSavedAfter.size() > n.outputs.size() ||
        n.outputGradientOf.size() > n.outputs.size())
      error(where, "'aliases', 'saved', 'saved_at', 'grad_of' or 'dropout' has more entries than the node has outputs");
    if (llvm::Optional<bool> sync = o.getBoolean("host_sync"); sync && *sync) {
      n.metadata.emplace_back("host_sync", "true");
      n.hostSync = true;
    }
    if (!n.name.empty())
      nodesByName_.try_emplace(n.name, &n);
  }

  void resolveSavePoints() {
    for (const SavePoint &p : savePoints_) {
      auto it = nodesByName_.find(p.name);
      if (it == nodesByName_.end() || it->second->index < p.node->index)
        return error(p.where, fmt::format("'{}' is not this node or a later one", escapedForMessage(p.name)));
      p.node->outputSavedAfter[p.output] = it->second;
    }
  }

  void readSource(const llvm::json::Object &o, const std::string &where, Node &n) {
    const llvm::json::Value *src = o.get("source");
    if (!src || src->kind() == llvm::json::Value::Null)
      return;
    const llvm::json::Object *s = object(*src, where + ".source");
    if (!s)
      return;
    n.loc.file = string(*s, "file", where + ".source.file", true);
    llvm::Optional<int64_t> line = integer(*s, "line", where + ".source.line");
    llvm::Optional<int64_t> col = integer(*s, "col", where + ".source.col");
    if (!line || *line < 0 || (col && *col < 0) || *line > UINT32_MAX || (col && *col > UINT32_MAX))
      return error(where + ".source", "expected a non-negative integer line (and col)");
    n.loc.line = static_cast<unsigned>(*line);
    n.loc.col = col ? static_cast<unsigned>(*col) : 0;
    n.loc.function = string(*s, "function", where + ".source.function", false);
    llvm::Optional<int64_t> first = integer(*s, "function_line", where + ".source.function_line");
    if (first && (*first < 0 || *first > UINT32_MAX))
      return error(where + ".source", "expected a non-negative integer function_line");
    n.loc.functionLine = first ? static_cast<unsigned>(*first) : 0;
  }

  // Optional: `# graphlint: ignore[...]` / `# noqa: GL...` comments the
  // exporter found on the user's source lines.
  void readSuppressions(const llvm::json::Object &root) {
    const llvm::json::Array *list = array(root, "suppressions", "suppressions", false);
    for (size_t i = 0; list && i < list->size() && error_.empty(); ++i) {
      std::string at = fmt::format("suppressions[{}]", i);
      const llvm::json::Object *o = object((*list)[i], at);
      if (!o)
        return;
      SourceSuppression s;
      s.file = string(*o, "file", at + ".file", true);
      llvm::Optional<int64_t> line = integer(*o, "line", at + ".line");
      if (!line || *line <= 0 || *line > UINT32_MAX)
        return error(at + ".line", "expected a positive integer");
      s.line = static_cast<unsigned>(*line);
      const llvm::json::Array *codes = array(*o, "codes", at + ".codes", true);
      for (size_t j = 0; codes && j < codes->size(); ++j) {
        llvm::Optional<llvm::StringRef> c = (*codes)[j].getAsString();
        if (!c)
          return error(fmt::format("{}.codes[{}]", at, j), "expected a string");
        s.tokens.push_back(c->str());
      }
      model_->sourceSuppressions.push_back(std::move(s));
    }
  }

  // Optional: module paths that prefix nodes' modules but never ran a
  // forward (nn.ModuleList): no module scope holds arguments there. Kept as
  // Model::metadata ("module_container", path) for the memory trace.
  void readModuleContainers(const llvm::json::Object &root) {
    const llvm::json::Array *list = array(root, "module_containers", "module_containers", false);
    for (size_t i = 0; list && i < list->size() && error_.empty(); ++i) {
      llvm::Optional<llvm::StringRef> c = (*list)[i].getAsString();
      if (!c)
        return error(fmt::format("module_containers[{}]", i), "expected a string");
      model_->metadata.emplace_back("module_container", c->str());
    }
  }

  void readOutputs(const llvm::json::Object &root) {
    const llvm::json::Array *outs = array(root, "outputs", "outputs", true);
    for (size_t i = 0; outs && i < outs->size() && error_.empty(); ++i) {
      std::string at = fmt::format("outputs[{}]", i);
      llvm::Optional<llvm::StringRef> ref = (*outs)[i].getAsString();
      Value *v = ref ? model_->graph->findLocal(*ref) : nullptr;
      if (!ref)
        return error(at, "expected a value name");
      if (!v)
        return error(at, fmt::format("'{}' is not defined", escapedForMessage(*ref)));
      v->markGraphOutput();
      model_->graph->outputs.push_back(v);
    }
  }

  std::string path_;
  SymbolBinder binder_;
  llvm::StringMap<const Node *> nodesByName_;  // every node by name (saved_at refers to them)
  struct SavePoint {
    Node *node;
    unsigned output;
    std::string name, where;
  };
  std::vector<SavePoint> savePoints_;
  int64_t version_ = kFxFormatVersion;
  bool aliasesFullRangeSlices_ = true;  // the exporting torch's eager (FullRangeSlice.h)
  std::unique_ptr<Model> model_;
  std::string error_;
};

}  // namespace

llvm::Expected<std::unique_ptr<Model>> importFxBytes(llvm::StringRef bytes, const std::string &path,
                                                     const ImportOptions &opts) {
  return FxImport(path, opts).run(bytes);
}

}  // namespace graphlint
