#include "graphlint/pt2/Pt2Importer.h"
#include "graphlint/ir/MessageText.h"

#include "AutocastPolicy.h"
#include "Pt2Schema.h"
#include "graphlint/ir/ModuleContainers.h"
#include "graphlint/ir/PythonLocals.h"
#include "graphlint/ir/FullRangeSlice.h"
#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/JsonInput.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/StackTrace.h"
#include "graphlint/ir/ValueFacts.h"
#include "graphlint/ir/SymbolBinder.h"

#include <fmt/format.h>

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <set>

namespace graphlint::pt2 {
namespace {

namespace json = llvm::json;

// The ExportedProgram schema (torch/_export/serde/schema.py) this reader was
// written and tested against: torch 2.x writes major 8. Another major may
// rename or reshape fields, so it is refused rather than misread.
constexpr int64_t kSchemaMajor = 8;
constexpr unsigned kMaxJsonNesting = 128;          // llvm::json parses recursively
constexpr size_t kMaxFrames = 256;                 // a stack trace's frames read for Python locals

class Pt2Import {
public:
  Pt2Import(const std::string &path, const std::string &entry, const ImportOptions &opts)
      : path_(path), entry_(entry), binder_(opts.dims) {}

  llvm::Expected<std::unique_ptr<Model>> run(llvm::StringRef text, llvm::StringRef weightsConfig,
                                             llvm::StringRef symbolNames) {
    if (!symbolNames.empty()) {
      llvm::Expected<SymbolNames> names = parseSymbolNames(symbolNames);
      if (!names)
        return stringError(fmt::format("extra/graphlint_symbols.json: {}", llvm::toString(names.takeError())));
      names_ = std::move(*names);
    }
    // Nesting and the number of values are checked before anything is built.
    JsonRefusal why;
    llvm::Expected<json::Value> doc = parseJsonInput(text, "", {kMaxJsonNesting}, &why);
    if (!doc)
      return stringError(fmt::format("{}: {}{}", entry_, why == JsonRefusal::Syntax ? "is not valid JSON: " : "",
                                     llvm::toString(doc.takeError())));
    const json::Object *root = doc->getAsObject();
    if (!root)
      return stringError(fmt::format("{}: the top level is not an object (not a serialized ExportedProgram)", entry_));
    if (llvm::Error e = checkSchema(*root))
      return e;
    model_ = std::make_unique<Model>();
    model_->path = path_;
    model_->format = ModelFormat::Fx;
    model_->opsets.push_back({"aten", 1});
    model_->graph = std::make_unique<Graph>();
    model_->graph->name = "main";
    model_->producerName = "torch.export";
    if (auto v = root->getString("torch_version"))
      model_->producerVersion = v->str();
    model_->metadata.emplace_back("capture", "torch.export");
    readWeightsConfig(weightsConfig);
    const json::Object *gm = object(root->get("graph_module"), "graph_module");
    const json::Object *g = gm ? object(gm->get("graph"), "graph_module.graph") : nullptr;
    const json::Object *sig = gm ? object(gm->get("signature"), "graph_module.signature") : nullptr;
    if (g && sig) {
      tensorValues_ = object(g->get("tensor_values"), "graph_module.graph.tensor_values");
      readSymbols(*root, *g, *sig);
      readSignatureInputs(*sig);
      collectMainNames(*g);
      readNodes(*g);
      readOutputs(*g, *sig);
      recordModuleContainers(*model_, calledModules_);
      inferFunctionalDropouts();
      if (error_.empty())
        for (std::string &call : holdPythonLocals(*model_->graph, sites_))
          model_->metadata.emplace_back(kUnseenHelperCall, std::move(call));
    }
    if (!error_.empty())
      return stringError(fmt::format("{}: {}", entry_, error_));
    binder_.finish(*model_);
    return std::move(model_);
  }

private:
  llvm::Error checkSchema(const json::Object &root) {
    const json::Object *v = root.getObject("schema_version");
    std::optional<int64_t> major, minor;
    if (v) {
      if (auto m = v->getInteger("major"))
        major = *m;
      if (auto m = v->getInteger("minor"))
        minor = *m;
    }
    if (!major)
      return stringError(fmt::format("{}: schema_version: missing (not a serialized ExportedProgram)", entry_));
    if (*major != kSchemaMajor)
      return stringError(fmt::format("ExportedProgram schema version {}.{} is not supported (this graphlint reads schema "
                              "major version {}, written by torch 2.x's torch.export.save): {}",
                              *major, minor.value_or(0), kSchemaMajor,
                              *major > kSchemaMajor ? "upgrade graphlint" : "re-export with a newer torch"));
    model_metadata_.emplace_back("schema_version", fmt::format("{}.{}", *major, minor.value_or(0)));
    return llvm::Error::success();
  }

  // --- field access: the first problem is kept, with the field's path ---

  void error(const std::string &where, const std::string &what) {
    if (error_.empty() && !prepass_)
      error_ = fmt::format("{}: {}", where, what);
  }
  const json::Object *object(const json::Value *v, const std::string &where) {
    const json::Object *o = v ? v->getAsObject() : nullptr;
    if (!o)
      error(where, v ? "expected an object" : "missing");
    return o;
  }
  const json::Array *array(const json::Value *v, const std::string &where) {
    const json::Array *a = v ? v->getAsArray() : nullptr;
    if (!a)
      error(where, v ? "expected an array" : "missing");
    return a;
  }
  std::string name(const json::Object &o, const std::string &where) {
    auto s = o.getString("name");
    if (!s || s->empty()) {
      error(where + ".name", "missing or not a string");
      return {};
    }
    return s->str();
  }

  // --- symbols and types ---

  /// A SymInt: {"as_int": 4} or {"as_expr": {"expr_str": "...", "hint": {"as_int": 4}}}
  /// (older writers: {"as_expr": {"expr_str": "s0"}} or {"as_name": ...}).
  Dim symInt(const json::Value &v, const std::string &where, std::optional<int64_t> *hint = nullptr) {
    const json::Object *o = v.getAsObject();
    if (!o) {
      error(where, "expected a SymInt object");
      return Dim::unknown();
    }
    if (auto i = o->getInteger("as_int"))
      return Dim::fixed(*i);
    const json::Object *e = o->getObject("as_expr");
    if (!e)
      return Dim::unknown();  // as_name: a SymInt defined by a node, not a size expression
    auto text = e->getString("expr_str");
    if (!text) {
      error(where + ".as_expr.expr_str", "missing or not a string");
      return Dim::unknown();
    }
    if (hint)
      if (const json::Object *h = e->getObject("hint"))
        if (auto i = h->getInteger("as_int"))
          *hint = *i;
    return dimFromExprStr(*text, names_);
  }

  // A broken size is reported where its value is defined, not in this prepass.
  void readSymbols(const json::Object &root, const json::Object &g, const json::Object &sig) {
    prepass_ = true;
    if (const json::Object *rc = root.getObject("range_constraints"))
      for (const auto &kv : *rc) {
        SymbolInfo s;
        s.name = renamedSymbol(kv.first.str(), names_);
        s.kind = isUnbackedName(s.name) ? SymbolInfo::Kind::Unbacked : SymbolInfo::Kind::Input;
        if (const json::Object *r = kv.second.getAsObject()) {
          if (auto m = r->getInteger("min_val"))
            s.min = *m;
          // torch writes int_oo as null or a huge number: no bound.
          if (auto m = r->getInteger("max_val"); m && *m < (int64_t{1} << 62))
            s.max = *m;
        }
        declared_[s.name] = std::move(s);
      }
    // Hints and sources: user inputs' sizes name the symbols they introduce.
    if (const json::Array *specs = sig.getArray("input_specs"))
      for (const json::Value &spec : *specs)
        if (const json::Object *o = spec.getAsObject())
          if (const json::Object *ui = o->getObject("user_input"))
            if (const json::Object *arg = ui->getObject("arg"))
              if (const json::Object *t = arg->getObject("as_tensor"))
                if (auto n = t->getString("name"))
                  noteSizes(n->str(), true);
    // Unbacked sizes: the first node whose output carries one produced it.
    if (const json::Array *nodes = g.getArray("nodes"))
      for (const json::Value &nv : *nodes)
        if (const json::Object *n = nv.getAsObject()) {
          std::string nodeName = n->getString("name").getValueOr("").str();
          if (const json::Array *outs = n->getArray("outputs"))
            for (const json::Value &out : *outs)
              for (const std::string &t : tensorNames(out))
                noteSizes(t, false, nodeName);
          if (const json::Object *syms = g.getObject("sym_int_values"))
            if (const json::Array *outs = n->getArray("outputs"))
              for (const json::Value &out : *outs)
                if (const json::Object *o = out.getAsObject())
                  if (const json::Object *si = o->getObject("as_sym_int"))
                    if (auto sn = si->getString("as_name"))
                      if (const json::Value *sv = syms->get(*sn))
                        noteExpr(*sv, nodeName);
        }
    prepass_ = false;
    for (auto &kv : declared_)
      binder_.declare(kv.second);
  }

  void noteExpr(const json::Value &v, const std::string &source) {
    std::optional<int64_t> hint;
    Dim d = symInt(v, "sym_int_values", &hint);
    if (!d.isSymbol())
      return;
    SymbolInfo &s = declared_[d.expr->name()];
    s.name = d.expr->name();
    if (isUnbackedName(s.name))
      s.kind = SymbolInfo::Kind::Unbacked;
    if (!s.hint && hint && s.kind == SymbolInfo::Kind::Input)
      s.hint = hint;
    if (s.source.empty())
      s.source = source;
  }

  void noteSizes(const std::string &tensor, bool userInput, const std::string &node = {}) {
    const json::Object *meta = tensorValues_ ? tensorValues_->getObject(tensor) : nullptr;
    const json::Array *sizes = meta ? meta->getArray("sizes") : nullptr;
    for (size_t i = 0; sizes && i < sizes->size(); ++i) {
      std::optional<int64_t> hint;
      Dim d = symInt((*sizes)[i], "tensor_values", &hint);
      std::set<std::string> syms;
      if (d.isSymbolic())
        d.expr->collectSymbols(syms);
      for (const std::string &n : syms) {
        SymbolInfo &s = declared_[n];
        s.name = n;
        if (isUnbackedName(n))
          s.kind = SymbolInfo::Kind::Unbacked;
        if (d.isSymbol() && hint && !s.hint && s.kind == SymbolInfo::Kind::Input)
          s.hint = hint;
        if (s.source.empty())
          s.source = userInput && d.isSymbol() ? fmt::format("{}.shape[{}]", tensor, i) : userInput ? "" : node;
      }
    }
  }

  /// The type of a tensor from graph.tensor_values, dims bound by -D or hints.
  void readTensorMeta(const std::string &tensor, const std::string &where, Value &v, bool userInput) {
    const json::Object *meta = tensorValues_ ? tensorValues_->getObject(tensor) : nullptr;
    if (!meta)
      return error(where, fmt::format("'{}' has no entry in graph.tensor_values", tensor));
    std::string at = fmt::format("graph.tensor_values.{}", tensor);
    auto code = meta->getInteger("dtype");
    std::optional<DType> dt = code ? dtypeFromScalarType(*code) : std::nullopt;
    if (!code)
      error(at + ".dtype", "missing or not an integer");
    const json::Array *sizes = array(meta->get("sizes"), at + ".sizes");
    Shape s;
    s.rankKnown = true;
    for (size_t i = 0; sizes && i < sizes->size(); ++i) {
      Dim d = symInt((*sizes)[i], fmt::format("{}.sizes[{}]", at, i));
      if (d.isStatic() && d.value < 0)
        error(fmt::format("{}.sizes[{}]", at, i), fmt::format("negative dimension {}", d.value));
      s.dims.push_back(std::move(d));
    }
    if (userInput)
      binder_.noteInput(v.name, Type::tensor(dt.value_or(DType::Undefined), s));
    for (Dim &d : s.dims)
      d = binder_.bind(d);
    v.type = Type::tensor(dt.value_or(DType::Undefined), std::move(s));
    if (auto rg = meta->getBoolean("requires_grad"))
      v.requiresGrad = *rg;
    if (const json::Object *dev = meta->getObject("device"))
      v.device = deviceOf(*dev);
  }

  // --- signature: parameters, buffers, constants, user inputs ---

  void readWeightsConfig(llvm::StringRef text) {
    if (text.empty())
      return;
    llvm::Expected<json::Value> doc = parseJsonInput(text, "");
    if (!doc) {
      llvm::consumeError(doc.takeError());
      return;  // only used to find tied weights: without it each parameter stands alone
    }
    if (const json::Object *root = doc->getAsObject())
      if (const json::Object *cfg = root->getObject("config"))
        for (const auto &kv : *cfg)
          if (const json::Object *o = kv.second.getAsObject()) {
            // Meta tensors have no storage: torch.export.save writes every
            // one of them as the same entry (weight_0), which is no tie.
            const json::Object *meta = o->getObject("tensor_meta");
            const json::Object *device = meta ? meta->getObject("device") : nullptr;
            if (device && device->getString("type") == llvm::StringRef("meta"))
              continue;
            if (auto p = o->getString("path_name"))
              storageOf_[kv.first.str()] = p->str();
          }
  }

  Value *defineValue(const std::string &graphName, const std::string &irName, Value::Kind kind,
                     const std::string &where) {
    llvm::StringMap<Value *> &scope = scopes_.empty() ? values_ : scopes_.back().values;
    if (scope.count(graphName)) {
      error(where, fmt::format("'{}' is defined twice", graphName));
      return nullptr;
    }
    Value *v = model_->graph->createValue(scopes_.empty() ? irName : uniqueName(irName), kind);
    scope[graphName] = v;
    return v;
  }

  /// The value a name means here: the innermost body being inlined first.
  Value *lookup(llvm::StringRef name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (Value *v = it->values.lookup(name))
        return v;
    return values_.lookup(name);
  }

  /// A body's value under its own name unless the main graph or an earlier
  /// body has it (a higher-order op's body names its values apart from the
  /// main graph: both may have a `getitem`), then under "submod_1.getitem".
  std::string uniqueName(const std::string &name) {
    return isFreeName(name) ? name : freeName(scopes_.back().name + "." + name);
  }

  bool isFreeName(const std::string &name) const {
    return !mainNames_.count(name) && !model_->graph->findLocal(name);
  }

  /// `base`, or `base_1`, `base_2`, ...: the first name neither the main
  /// graph nor a value made so far has. Names are never given back, so the
  /// probe resumes where the last one for this base stopped: every taken
  /// name is probed at most once per base, and K bodies reusing one name
  /// cost O(K), not O(K^2) probes.
  std::string freeName(const std::string &base) {
    unsigned &next = nextSuffix_[base];  // 0: `base` itself
    for (;; ++next) {
      std::string out = next == 0 ? base : fmt::format("{}_{}", base, next);
      if (isFreeName(out))
        return out;
    }
  }

  void readSignatureInputs(const json::Object &sig) {
    const json::Array *specs = array(sig.get("input_specs"), "graph_module.signature.input_specs");
    llvm::StringMap<Value *> byStorage;  // tied parameters share one storage
    for (size_t i = 0; specs && i < specs->size() && error_.empty(); ++i) {
      std::string where = fmt::format("graph_module.signature.input_specs[{}]", i);
      const json::Object *spec = object(&(*specs)[i], where);
      if (!spec || spec->empty())
        return;
      const auto &kind = *spec->begin();
      std::string k = kind.first.str();
      const json::Object *body = kind.second.getAsObject();
      if (!body)
        return error(where + "." + k, "expected an object");
      const json::Object *arg = body->getObject("arg");
      if (k == "user_input") {
        std::vector<std::string> names = arg ? tensorNames(arg) : std::vector<std::string>{};
        if (names.empty())
          continue;  // a non-tensor user input (int, SymInt, custom object)
        Value *v = defineValue(names[0], names[0], Value::Kind::GraphInput, where);
        if (!v)
          return;
        readTensorMeta(names[0], where, *v, true);
        model_->graph->inputs.push_back(v);
        continue;
      }
      if (k != "parameter" && k != "buffer" && k != "tensor_constant")
        continue;  // tokens, custom objects, constant scalars: no tensor of the model
      std::string graphName = arg ? arg->getString("name").getValueOr("").str() : "";
      std::string fqn = body->getString(k == "parameter" ? "parameter_name" : k == "buffer" ? "buffer_name"
                                                                                              : "tensor_constant_name")
                            .getValueOr(graphName)
                            .str();
      if (graphName.empty())
        return error(where + "." + k + ".arg.name", "missing");
      auto storage = storageOf_.find(fqn);
      if (storage != storageOf_.end())
        if (Value *tied = byStorage.lookup(storage->second)) {
          values_[graphName] = tied;  // the same tensor under a second name: one parameter
          ++tiedParams_;
          continue;
        }
      Value *v = defineValue(graphName, fqn, Value::Kind::Param, where);
      if (!v)
        return;
      readTensorMeta(graphName, where, *v, false);
      Param *p = model_->graph->createParam();
      p->value = v;
      v->param = p;
      p->buffer = k != "parameter";
      if (p->buffer)
        v->requiresGrad = false;
      p->tensor.name = fqn;
      p->tensor.dtype = v->type.dtype;
      for (const Dim &d : v->type.shape.dims)
        p->tensor.dims.push_back(d.isStatic() ? d.value : -1);
      p->tensor.byteSize = v->type.byteSize().value_or(0);
      p->tensor.storage = TensorLiteral::Storage::Empty;  // weights stay in the archive, never read
      if (storage != storageOf_.end())
        byStorage[storage->second] = v;
    }
  }

  // --- nodes ---

  // The names of the main graph's nodes and values, which a higher-order
  // op's body may use for its own.
  void collectMainNames(const json::Object &g) {
    if (const json::Array *nodes = g.getArray("nodes"))
      for (const json::Value &nv : *nodes)
        if (const json::Object *n = nv.getAsObject()) {
          if (auto name = n->getString("name"))
            mainNames_.insert(*name);
          if (const json::Array *outs = n->getArray("outputs"))
            for (const json::Value &out : *outs)
              for (const std::string &t : tensorNames(out))
                mainNames_.insert(t);
        }
  }

  void readNodes(const json::Object &g) {
    const json::Array *nodes = array(g.get("nodes"), "graph_module.graph.nodes");
    for (size_t i = 0; nodes && i < nodes->size() && error_.empty(); ++i) {
      std::string where = fmt::format("graph_module.graph.nodes[{}]", i);
      if (const json::Object *n = object(&(*nodes)[i], where))
        readNode(*n, where);
    }
  }

  void readNode(const json::Object &o, const std::string &where) {
    auto target = o.getString("target");
    if (!target)
      return error(where + ".target", "missing or not a string");
    // torch.ops.aten.linear.default -> aten, linear, default
    llvm::StringRef t = *target, domain, op, overload;
    if (t.consume_front("torch.ops.")) {
      std::tie(domain, t) = t.split('.');
      std::tie(op, overload) = t.split('.');
    }
    const json::Array *outs = array(o.get("outputs"), where + ".outputs");
    if (domain.empty() || op.empty() || (domain == "aten" && isRuntimeGuard(op))) {
      // Python-side SymInt arithmetic (_operator.mul) and runtime guards: the
      // sizes they compute are already in the dims as expressions.
      return;
    }
    if (domain == "higher_order" && (op == "wrap_with_autocast" || op == "wrap_with_set_grad_enabled"))
      return inlineRegion(o, where, op, outs);
    Node *n = model_->graph->createNode();
    n->name = o.getString("name").getValueOr("").str();
    n->domain = domain.str();
    n->opType = op.str();
    n->opsetVersion = 1;
    n->op = OpRegistry::instance().lookup(n->domain, n->opType, n->opsetVersion);
    if (!overload.empty() && overload != "default")
      n->metadata.emplace_back("overload", overload.str());
    readArgs(o, where, *n);
    for (size_t i = 0; outs && i < outs->size() && error_.empty(); ++i)
      readOutput((*outs)[i], fmt::format("{}.outputs[{}]", where, i), *n);
    if ((n->name.empty() || !scopes_.empty()) && !n->outputs.empty())
      n->name = n->outputs[0]->name;  // in a body: the output's name, apart from the main graph's
    else if (!scopes_.empty())
      n->name = uniqueName(n->name);
    if (!gradEnabled_.empty() && !gradEnabled_.back())
      n->metadata.emplace_back(kGradDisabled, "true");
    // In-place variants (add_, relu_) write input 0 and return it; views alias it.
    bool inplace = isInplaceOp(*n);
    if (inplace && !n->inputs.empty() && n->inputs[0])
      n->mutatedInputs.push_back(0);
    if (inplace && !n->outputs.empty())
      n->outputAliasesInput.push_back(0);
    else if (n->op && n->op->viewOfInput0)  // every piece of a split, chunk or unbind is a view too
      n->outputAliasesInput.assign(n->outputs.size(), 0);
    // torch.export (torch 2.x) keeps the full-range slices its eager aliases.
    recordFullRangeSliceAsAlias(*n);
    noteReshapeCopy(*n);
    noteMatmulCopies(*n);
    noteAttentionMathCopies(*n);
    if (n->op && n->op->hostSync) {
      n->metadata.emplace_back("host_sync", "true");
      n->hostSync = true;
    }
    readMetadata(o, *n);
    if (!autocast_.empty())
      followEagerDtypes(*n);
    if (!autocast_.empty() && autocast_.back().enabled)
      addAutocastCasts(*n);  // at the op's source line and module
  }

  // torch.export's scoping higher-order ops: `with torch.autocast(...)` and
  // `with torch.no_grad()` (or enable_grad) inside forward become one node
  // whose body graph holds the region's ops. Neither is control flow: the
  // body runs once, in line, so it is imported in place of the node, its
  // inputs bound to the node's operands and the node's outputs to its
  // outputs. Autocast's casts, which the body does not record, are added
  // (addAutocastCasts); a region without grad marks its nodes
  // (kGradDisabled).
  void inlineRegion(const json::Object &o, const std::string &where, llvm::StringRef op, const json::Array *outs) {
    const json::Array *args = array(o.get("inputs"), where + ".inputs");
    if (!args)
      return;
    const json::Object *body = nullptr;
    std::string bodyName, bodyAt;
    std::vector<const json::Object *> scalars, operands;
    for (size_t i = 0; i < args->size(); ++i) {
      std::string at = fmt::format("{}.inputs[{}]", where, i);
      const json::Object *a = object(&(*args)[i], at);
      const json::Object *arg = a ? object(a->get("arg"), at + ".arg") : nullptr;
      if (!arg || arg->empty())
        return;
      if (const json::Object *sub = arg->getObject("as_graph")) {
        body = object(sub->get("graph"), at + ".arg.as_graph.graph");
        bodyName = sub->getString("name").getValueOr("body").str();
        bodyAt = at + ".arg.as_graph.graph";
        if (!body)
          return;
        continue;
      }
      (body ? operands : scalars).push_back(arg);
    }
    if (!body)
      return error(where + ".inputs", fmt::format("{} has no body graph", op));
    const json::Array *formals = array(body->get("inputs"), bodyAt + ".inputs");
    const json::Array *nodes = array(body->get("nodes"), bodyAt + ".nodes");
    const json::Array *results = array(body->get("outputs"), bodyAt + ".outputs");
    if (!formals || !nodes || !results)
      return;
    if (formals->size() != operands.size())
      return error(bodyAt + ".inputs", fmt::format("{} inputs for {} operands", formals->size(), operands.size()));
    // The region's state: autocast(device, dtype, enabled, cache_enabled) or set_grad_enabled(enabled).
    auto scalar = [&](size_t i, llvm::StringRef kind) -> const json::Value * {
      return i < scalars.size() ? scalars[i]->get(kind) : nullptr;
    };
    bool autocast = op == "wrap_with_autocast";
    if (autocast) {
      const json::Value *device = scalar(0, "as_string"), *dtype = scalar(1, "as_scalar_type");
      const json::Value *enabled = scalar(2, "as_bool");
      AutocastRegion r;
      r.device = device && device->getAsString() ? device->getAsString()->str() : "";
      std::optional<DType> dt = dtype && dtype->getAsInteger() ? dtypeFromScalarType(*dtype->getAsInteger())
                                                                : std::nullopt;
      if (r.device.empty() || !dt || !enabled || !enabled->getAsBoolean())
        return error(where + ".inputs", "wrap_with_autocast: expected (device, dtype, enabled, cache_enabled, body, ...)");
      r.dtype = *dt;
      r.enabled = *enabled->getAsBoolean();
      autocast_.push_back(r);
    } else {
      const json::Value *enabled = scalar(0, "as_bool");
      if (!enabled || !enabled->getAsBoolean())
        return error(where + ".inputs", "wrap_with_set_grad_enabled: expected (enabled, body, ...)");
      gradEnabled_.push_back(*enabled->getAsBoolean());
    }
    scopes_.push_back({bodyName, {}});
    for (size_t i = 0; i < formals->size() && error_.empty(); ++i) {
      std::vector<std::string> formal = tensorNames((*formals)[i]), actual = tensorNames(operands[i]);
      if (formal.size() != actual.size())
        error(fmt::format("{}.inputs[{}]", bodyAt, i), "does not match its operand");
      for (size_t j = 0; j < formal.size() && j < actual.size() && error_.empty(); ++j) {
        Value *v = lookup(actual[j]);
        if (!v)
          error(fmt::format("{}.inputs[{}]", where, i), fmt::format("'{}' is not defined before this node", actual[j]));
        scopes_.back().values[formal[j]] = v;
      }
    }
    const json::Object *outerValues = tensorValues_;
    tensorValues_ = object(body->get("tensor_values"), bodyAt + ".tensor_values");
    for (size_t i = 0; i < nodes->size() && error_.empty(); ++i) {
      std::string at = fmt::format("{}.nodes[{}]", bodyAt, i);
      if (const json::Object *n = object(&(*nodes)[i], at))
        readNode(*n, at);
    }
    std::vector<Value *> produced;
    for (size_t i = 0; i < results->size() && error_.empty(); ++i)
      for (const std::string &t : tensorNames((*results)[i])) {
        produced.push_back(lookup(t));
        if (!produced.back())
          error(fmt::format("{}.outputs[{}]", bodyAt, i), fmt::format("'{}' is not defined", t));
      }
    tensorValues_ = outerValues;
    scopes_.pop_back();
    if (autocast) {
      autocast_.pop_back();
      if (autocast_.empty())
        releaseCastCache();
    } else {
      gradEnabled_.pop_back();
    }
    size_t k = 0;
    for (size_t i = 0; outs && i < outs->size() && error_.empty(); ++i)
      for (const std::string &t : tensorNames((*outs)[i])) {
        if (k >= produced.size())
          return error(fmt::format("{}.outputs[{}]", where, i), "more outputs than its body returns");
        (scopes_.empty() ? values_ : scopes_.back().values)[t] = produced[k++];
      }
  }

  // Eager skips the add of an all-pass attention mask, which transformers
  // builds only under a tracer (docs/memory.md, "An attention mask eager
  // skips"). In an autocast region the traced add also promoted the
  // lower-precision scores to the float32 mask's dtype, so the ops after it
  // ran in float32 in the trace and in the scores' dtype in eager (softmax,
  // dropout; no cast before the next matmul). The add's output takes the
  // scores' dtype, and an op that follows its inputs' dtypes (its recorded
  // output dtype is their promotion; no dtype argument, no conversion)
  // follows the ones eager gives them.
  void followEagerDtypes(Node &n) {
    if (n.domain != "aten" || n.outputs.empty() || !n.outputs[0] || !n.outputs[0]->type.isTensor())
      return;
    Value *out = n.outputs[0];
    auto floating = [](const Value *v) { return v && v->type.isTensor() && isFloating(v->type.dtype); };
    if (n.atenName() == "add" && n.inputs.size() == 2 && floating(n.inputs[0]) && floating(n.inputs[1])) {
      for (unsigned k = 0; k < 2; ++k) {
        const Value *mask = n.inputs[k], *kept = n.inputs[1 - k];
        if (kept->type.dtype != out->type.dtype && mask->type.dtype == out->type.dtype &&
            kept->type.shape == out->type.shape && isAllPassMask(mask)) {
          retype(*out, kept->type.dtype);
          return;
        }
      }
    }
    bool follows = llvm::any_of(n.inputs, [&](const Value *in) { return in && eagerDtype_.count(in); });
    if (!follows || n.attr("dtype") || (n.op && n.op->conversion != ConversionKind::None) ||
        autocastPolicy(autocast_.back().device, n.opType) != AutocastPolicy::None)
      return;
    std::optional<DType> traced, eager;
    for (const Value *in : n.inputs)
      if (floating(in) && in->type.shape.rankKnown && !in->type.shape.dims.empty()) {
        auto it = eagerDtype_.find(in);
        traced = promoteFloating(traced, it == eagerDtype_.end() ? in->type.dtype : it->second);
        eager = promoteFloating(eager, in->type.dtype);
      }
    // Norms and lookups keep their input's dtype (a bfloat16 layer_norm
    // with float32 weights is bfloat16 on the CPU), whatever their weights'.
    if (followsFirstInput(n.opType) && floating(n.inputs.empty() ? nullptr : n.inputs[0])) {
      auto it = eagerDtype_.find(n.inputs[0]);
      traced = it == eagerDtype_.end() ? n.inputs[0]->type.dtype : it->second;
      eager = n.inputs[0]->type.dtype;
    }
    if (!traced || !eager || *traced == *eager)
      return;
    for (Value *o : n.outputs)
      if (floating(o) && o->type.dtype == *traced)
        retype(*o, *eager);
  }

  static bool followsFirstInput(llvm::StringRef op) {
    return llvm::StringSwitch<bool>(op)
        .Cases("layer_norm", "native_layer_norm", "group_norm", "native_group_norm", "batch_norm", true)
        .Cases("native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training", true)
        .Cases("instance_norm", "rms_norm", "embedding", true)
        .Default(false);
  }

  void retype(Value &v, DType to) {
    eagerDtype_.try_emplace(&v, v.type.dtype);  // the traced dtype
    v.type.dtype = to;
  }

  // torch's promotion of two floating dtypes: the wider; bfloat16 with
  // float16 is float32.
  static DType promoteFloating(std::optional<DType> a, DType b) {
    if (!a || *a == b)
      return b;
    auto rank = [](DType t) { return t == DType::Double ? 3 : t == DType::Float ? 2 : 1; };
    if (rank(*a) != rank(b))
      return rank(*a) > rank(b) ? *a : b;
    return DType::Float;  // bfloat16 and float16
  }

  // The casts autocast makes for an op of its lists (AutocastPolicy.h), which
  // a region's body does not record: an `aten._to_copy` per cast argument,
  // just before the op, for an op with a floating argument (an integer
  // matmul is not cast). With the cast cache on
  // (torch.autocast's default; torch.export records the flag its tracer
  // sets, off), a trainable parameter is cast once per outermost region and
  // the cache holds the copy until that region ends.
  void addAutocastCasts(Node &n) {
    const AutocastRegion &r = autocast_.back();
    if (n.domain != "aten" || n.outputs.empty() || !n.outputs[0] || !n.outputs[0]->type.isTensor())
      return;
    AutocastPolicy policy = autocastPolicy(r.device, n.opType);
    if (policy == AutocastPolicy::None)
      return;
    auto eligible = [](const Value *v) {
      return v && v->type.isTensor() && isFloating(v->type.dtype) && v->type.dtype != DType::Double;
    };
    DType to = policy == AutocastPolicy::Fp32 ? DType::Float : r.dtype;
    if (policy == AutocastPolicy::Promote)
      for (const Value *in : n.inputs)
        if (eligible(in) && in->type.dtype == DType::Float)
          to = DType::Float;
    if (llvm::none_of(n.inputs, [&](const Value *in) { return eligible(in); }))
      return;  // an integer matmul: autocast casts nothing
    // A strict (dynamo) export records the region's tensors as if autocast
    // were off (a linear of float32 inputs float32): eager's dtype is the
    // policy's, and what follows follows it (followEagerDtypes).
    for (Value *o : n.outputs)
      if (o && o->type.isTensor() && isFloating(o->type.dtype) && o->type.dtype != to)
        retype(*o, to);
    std::vector<Node *> casts;
    for (unsigned i = 0; i < n.inputs.size(); ++i) {
      Value *in = n.inputs[i];
      if (!eligible(in) || in->type.dtype == to)
        continue;
      bool cached = policy == AutocastPolicy::LowerPrecision && in->kind == Value::Kind::Param && in->param &&
                    !in->param->buffer && in->requiresGrad && in->type.dtype == DType::Float;
      Value *copy = cached ? castCache_.lookup(in) : nullptr;
      if (!copy) {
        copy = castOf(*in, to, n);
        casts.push_back(copy->producer);
        if (cached) {
          castCache_[in] = copy;
          cachedCasts_.push_back(copy->producer);
        }
      }
      Graph::replaceInput(n, i, copy);
    }
    if (casts.empty())
      return;
    // The casts were created after the op: move the op behind them.
    auto &all = model_->graph->mutableNodes();
    size_t at = all.size() - casts.size() - 1;
    std::rotate(all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                all.end());
    for (size_t j = at; j < all.size(); ++j)
      all[j]->index = static_cast<unsigned>(j);
  }

  Value *castOf(Value &in, DType to, const Node &reader) {
    Node *c = model_->graph->createNode();
    c->domain = "aten";
    c->opType = "_to_copy";
    c->opsetVersion = 1;
    c->op = OpRegistry::instance().lookup(c->domain, c->opType, c->opsetVersion);
    Attribute dtype;
    dtype.name = "dtype";
    dtype.kind = AttrKind::String;
    dtype.s = torchDtypeName(to);
    c->attributes.push_back(std::move(dtype));
    c->loc = reader.loc;
    c->modulePath = reader.modulePath;
    c->metadata.emplace_back(kAutocastCast, autocast_.back().device);
    if (!gradEnabled_.empty() && !gradEnabled_.back())
      c->metadata.emplace_back(kGradDisabled, "true");
    std::string name = freeName(fmt::format("{}_{}", in.name, torchDtypeName(to)));
    c->name = name;
    Value *v = model_->graph->createValue(name, Value::Kind::NodeOutput);
    v->type = Type::tensor(to, in.type.shape);
    v->requiresGrad = in.requiresGrad;
    v->device = in.device;
    v->producer = c;
    in.uses.push_back({c, 0});
    c->inputs.push_back(&in);
    c->outputs.push_back(v);
    return v;
  }

  // The outermost autocast region ended: its cache let go of the parameters'
  // copies, which lived until its last node.
  void releaseCastCache() {
    const auto &all = model_->graph->nodes();
    for (Node *c : cachedCasts_)
      if (!all.empty() && all.back().get() != c)
        c->metadata.emplace_back("held.0", all.back()->name);
    cachedCasts_.clear();
    castCache_.clear();
  }

  // aten.reshape and flatten view their input where its strides allow and
  // copy otherwise; torch.export records both as the one op, and the input's
  // strides in graph.tensor_values say which.
  void noteReshapeCopy(Node &n) {
    if (n.domain != "aten" || (n.opType != "reshape" && n.opType != "flatten") || n.inputs.empty() || !n.inputs[0] ||
        n.outputs.size() != 1 || !n.outputs[0])
      return;
    std::vector<int64_t> shape, newShape, strides;
    if (!staticDims(n.inputs[0]->type.shape, shape) || !staticDims(n.outputs[0]->type.shape, newShape) ||
        !recordedStrides(*n.inputs[0], strides))
      return;  // a symbolic size or stride: leave it a view
    if (stridesAllowView(shape, strides, newShape))
      return;
    n.outputAliasesInput.clear();
    n.metadata.emplace_back("reshape_copies", "true");
  }

  // aten.matmul of batched operands is, in eager, each operand expanded to
  // the broadcast batch and reshaped to [batch, rows, cols], then bmm, which
  // saves those for backward: where an operand's strides cannot view that
  // shape (a head-split slice of a packed q/k/v projection, GPT-NeoX's value),
  // the reshape copies and autograd saves the copy, not the operand's
  // storage. Records "matmul_copies" = "I:NUMEL,..." (matmulCopies).
  void noteMatmulCopies(Node &n) {
    if (n.domain != "aten" || n.opType != "matmul" || n.inputs.size() != 2 || !n.inputs[0] || !n.inputs[1])
      return;
    std::vector<int64_t> dims[2], strides[2];
    for (int i = 0; i < 2; ++i)
      if (!staticDims(n.inputs[i]->type.shape, dims[i]) || !recordedStrides(*n.inputs[i], strides[i]))
        return;  // symbolic sizes or strides: not judged
    std::string copies;
    for (auto [i, numel] : matmulOperandCopies(dims[0], strides[0], dims[1], strides[1]))
      copies += fmt::format("{}{}:{}", copies.empty() ? "" : ",", i, numel);
    if (!copies.empty())
      n.metadata.emplace_back("matmul_copies", copies);
  }

  // scaled_dot_product_attention's math path (the CPU's, in a training step
  // under attention dropout) scales q and k^T, each scaled tensor laid out
  // as its operand, then runs matmul(q', k'^T) and matmul(probs, v) on
  // contiguous scores: where an operand cannot view [batch, rows, cols]
  // (BERT's heads transposed out of [b, s, h, d]) eager copies it and
  // autograd saves the copy. Records "attention_math_copies" = "I:NUMEL,..."
  // over the query (0), key (1) and value (2) (attentionMathCopies).
  void noteAttentionMathCopies(Node &n) {
    if (n.domain != "aten" || n.opType != "scaled_dot_product_attention" || n.inputs.size() < 3)
      return;
    std::vector<int64_t> dims[3], strides[3];
    for (int i = 0; i < 3; ++i)
      if (!n.inputs[i] || !staticDims(n.inputs[i]->type.shape, dims[i]) || !recordedStrides(*n.inputs[i], strides[i]))
        return;  // symbolic sizes or strides: not judged
    std::string copies;
    for (auto [i, numel] : attentionMathOperandCopies(dims[0], strides[0], dims[1], strides[1], dims[2], strides[2]))
      copies += fmt::format("{}{}:{}", copies.empty() ? "" : ",", i, numel);
    if (!copies.empty())
      n.metadata.emplace_back("attention_math_copies", copies);
  }

  static bool staticDims(const Shape &s, std::vector<int64_t> &out) {
    for (const Dim &d : s.dims)
      if (d.isStatic())
        out.push_back(d.value);
    return s.rankKnown && out.size() == s.dims.size();
  }

  // The strides graph.tensor_values records for `v`; false when absent or symbolic.
  bool recordedStrides(const Value &v, std::vector<int64_t> &out) const {
    const json::Object *meta = tensorValues_ ? tensorValues_->getObject(v.name) : nullptr;
    const json::Array *st = meta ? meta->getArray("strides") : nullptr;
    if (!st)
      return false;
    for (const json::Value &e : *st) {
      const json::Object *o = e.getAsObject();
      llvm::Optional<int64_t> i = o ? o->getInteger("as_int") : llvm::None;
      if (!i)
        return false;
      out.push_back(*i);
    }
    return true;
  }

  void addInput(Node &n, const std::string &name, const std::string &where) {
    Value *v = lookup(name);
    if (!v)
      return error(where, fmt::format("'{}' is not defined before this node", name));
    v->uses.push_back({&n, static_cast<unsigned>(n.inputs.size())});
    n.inputs.push_back(v);
  }

  void readArgs(const json::Object &o, const std::string &where, Node &n) {
    const json::Array *args = array(o.get("inputs"), where + ".inputs");
    for (size_t i = 0; args && i < args->size() && error_.empty(); ++i) {
      std::string at = fmt::format("{}.inputs[{}]", where, i);
      const json::Object *a = object(&(*args)[i], at);
      const json::Object *arg = a ? object(a->get("arg"), at + ".arg") : nullptr;
      if (!arg || arg->empty())
        return;
      std::string argName = a->getString("name").getValueOr(fmt::format("arg{}", i)).str();
      const auto &kv = *arg->begin();
      llvm::StringRef kind = kv.first;
      const json::Value &val = kv.second;
      Attribute attr;
      attr.name = argName;
      if (kind == "as_tensor" || kind == "as_tensors") {
        for (const std::string &t : tensorNames(arg))
          addInput(n, t, at);
        continue;
      }
      if (kind == "as_optional_tensor" || kind == "as_optional_tensors") {
        auto one = [&](const json::Value &x) {
          std::vector<std::string> ts = tensorNames(x);
          if (ts.empty())
            n.inputs.push_back(nullptr);  // None
          else
            addInput(n, ts[0], at);
        };
        if (const json::Array *list = val.getAsArray())
          for (const json::Value &x : *list)
            one(x);
        else
          one(val);
        continue;
      }
      if (kind == "as_sym_int" || kind == "as_sym_ints") {
        // A size: a SymInt computed by a node (an edge, e.g. from .item()) or a literal.
        auto one = [&](const json::Value &x) -> std::optional<int64_t> {
          const json::Object *xo = x.getAsObject();
          if (!xo)
            return std::nullopt;
          if (auto i = xo->getInteger("as_int"))
            return *i;
          if (auto name = xo->getString("as_name"); name && lookup(*name))
            addInput(n, name->str(), at);
          return std::nullopt;
        };
        if (const json::Array *list = val.getAsArray()) {
          attr.kind = AttrKind::Ints;
          for (const json::Value &x : *list)
            attr.ints.push_back(one(x).value_or(-1));
        } else if (std::optional<int64_t> i = one(val)) {
          attr.kind = AttrKind::Int, attr.i = *i;
        } else {
          continue;
        }
      } else if (auto i = val.getAsInteger(); i && (kind == "as_int" || kind == "as_layout" || kind == "as_memory_format")) {
        attr.kind = AttrKind::Int, attr.i = *i;
      } else if (kind == "as_scalar_type" && i) {
        attr.kind = AttrKind::String, attr.s = torchDtypeName(dtypeFromScalarType(*i).value_or(DType::Undefined));
      } else if (kind == "as_bool" && val.getAsBoolean()) {
        attr.kind = AttrKind::Int, attr.i = *val.getAsBoolean();
      } else if (kind == "as_float" && val.getAsNumber()) {
        attr.kind = AttrKind::Float, attr.f = *val.getAsNumber();
      } else if (kind == "as_string" && val.getAsString()) {
        attr.kind = AttrKind::String, attr.s = val.getAsString()->str();
      } else if (kind == "as_device") {
        const json::Object *d = val.getAsObject();
        attr.kind = AttrKind::String;
        attr.s = d ? d->getString("type").getValueOr("").str() : "";
        if (d)
          if (auto idx = d->getInteger("index"))
            attr.s += fmt::format(":{}", *idx);
      } else if ((kind == "as_ints" || kind == "as_floats" || kind == "as_bools") && val.getAsArray()) {
        attr.kind = kind == "as_floats" ? AttrKind::Floats : AttrKind::Ints;
        for (const json::Value &x : *val.getAsArray()) {
          if (kind == "as_floats")
            attr.floats.push_back(x.getAsNumber().getValueOr(0));
          else if (auto b = x.getAsBoolean())
            attr.ints.push_back(*b);
          else
            attr.ints.push_back(x.getAsInteger().getValueOr(0));
        }
      } else {
        continue;  // None, graphs of higher-order ops, custom objects: not kept
      }
      n.attributes.push_back(std::move(attr));
    }
    std::sort(n.attributes.begin(), n.attributes.end(),
              [](const Attribute &a, const Attribute &b) { return a.name < b.name; });
  }

  void readOutput(const json::Value &out, const std::string &where, Node &n) {
    const json::Object *o = out.getAsObject();
    if (!o)
      return error(where, "expected an object");
    auto define = [&](const std::string &name, bool tensor) {
      Value *v = defineValue(name, name, Value::Kind::NodeOutput, where);
      if (!v)
        return;
      v->producer = &n;
      v->resultIndex = static_cast<unsigned>(n.outputs.size());
      if (tensor)
        readTensorMeta(name, where, *v, false);
      else
        v->type.kind = TypeKind::Opaque;  // a SymInt/SymBool: a host-side scalar
      n.outputs.push_back(v);
    };
    for (const std::string &t : tensorNames(out))
      define(t, true);
    for (const char *k : {"as_sym_int", "as_sym_bool", "as_sym_float"})
      if (const json::Object *s = o->getObject(k))
        if (auto name = s->getString("as_name"))
          define(name->str(), false);
  }

  /// stack_trace -> the user's file:line; nn_module_stack -> the module path.
  void readMetadata(const json::Object &o, Node &n) {
    const json::Object *meta = o.getObject("metadata");
    if (!meta)
      return;
    CallSite site;
    site.node = &n;
    if (auto st = meta->getString("stack_trace")) {
      n.loc = parseStackTrace(*st);
      n.loc.file = relativeSource(n.loc.file);
      site.frames = parseTraceFrames(*st, kMaxFrames);
    }
    // "L__self__,,pkg.M;L__self__fc,fc,torch.nn.modules.linear.Linear": the
    // innermost entry's second field is the module's path.
    if (auto stack = meta->getString("nn_module_stack")) {
      llvm::SmallVector<llvm::StringRef, 8> entries;
      stack->split(entries, ';', -1, false);
      llvm::SmallVector<llvm::StringRef, 3> fields;  // after the loop: the innermost entry's
      for (llvm::StringRef e : entries) {
        fields.clear();
        e.split(fields, ',', 2);
        if (fields.size() == 3) {
          calledModules_.insert(fields[1]);
          site.modules.push_back(fields[1].str());
          site.moduleTypes.push_back(fields[2].str());
        }
      }
      if (fields.size() == 3 && !fields[0].startswith("_empty_nn_module_stack"))
        n.modulePath = fields[1].str();
      // A dropout an nn.Dropout module ran: its p is the module's own, the
      // same in train() (a functional dropout's p may be `0 if not
      // self.training`, transformers' attention dropout).
      if (fields.size() == 3 && fields[2].startswith("torch.nn.modules.dropout.") &&
          llvm::StringRef(n.atenName()).contains("dropout"))
        n.metadata.emplace_back("dropout_module", fields[2].str());
    }
    if (!site.frames.empty() && !site.modules.empty())
      sites_.push_back(std::move(site));
  }

  // An eval() export records a functional dropout with eval's p = 0 whatever
  // training uses (GPT-2's `p if self.training else 0.0`), and so
  // scaled_dot_product_attention's dropout_p (transformers' `0.0 if not
  // self.training else self.dropout_prob`). When none of the model's
  // nn.Dropout modules has p > 0 (Llama, Mistral: attention_dropout 0.0 and
  // no dropout modules), training's p is taken as 0 too: the dropout is an
  // identity ("dropout_training_p" 0, isIdentityDropout) and the attention
  // call draws none (attentionDropsOut). In a train() export (a dropout
  // recorded with train=True) the attention's p is training's own.
  void inferFunctionalDropouts() {
    auto isDropout = [](const Node &n) { return n.domain == "aten" && n.opType == "dropout"; };
    auto isAttention = [](const Node &n) { return n.domain == "aten" && n.opType == "scaled_dot_product_attention"; };
    bool dropoutModules = false, trainExport = false;
    for (const auto &np : model_->graph->nodes()) {
      dropoutModules |= isDropout(*np) && np->metadataValue("dropout_module") && dropoutProbability(*np).value_or(0) > 0;
      trainExport |= isDropout(*np) && np->attrInt("train").value_or(0) != 0;
    }
    for (const auto &np : model_->graph->nodes())
      if ((!dropoutModules && isDropout(*np) && !np->metadataValue("dropout_module") &&
           dropoutProbability(*np) == 0.0 && np->attrInt("train") == 0) ||
          ((!dropoutModules || trainExport) && isAttention(*np) && numericAttr(*np, "dropout_p").value_or(0) == 0))
        np->metadata.emplace_back("dropout_training_p", "0");
  }

  // A module path prefix no node's nn_module_stack lists never ran a forward
  // (nn.ModuleList, nn.ModuleDict: "blocks" of "blocks.0.attn"): the memory
  // trace's module scopes do not hold values across it (graphlint-export
  // writes the same fact as `module_containers`).
  // Paths under the archive's folder are written relative to it (as the FX
  // exporter writes them relative to the user's repository).
  std::string relativeSource(const std::string &file) {
    if (file.empty() || !llvm::sys::path::is_absolute(file))
      return file;
    llvm::SmallString<256> dir(path_);
    llvm::sys::fs::make_absolute(dir);
    llvm::sys::path::remove_filename(dir);
    llvm::sys::path::remove_dots(dir, true);
    std::string prefix = std::string(dir.str()) + "/";
    return llvm::StringRef(file).startswith(prefix) ? file.substr(prefix.size()) : file;
  }

  void readOutputs(const json::Object &g, const json::Object &sig) {
    const json::Array *outs = array(g.get("outputs"), "graph_module.graph.outputs");
    for (size_t i = 0; outs && i < outs->size() && error_.empty(); ++i)
      for (const std::string &t : tensorNames((*outs)[i])) {
        auto it = values_.find(t);
        if (it == values_.end())
          return error(fmt::format("graph_module.graph.outputs[{}]", i), fmt::format("'{}' is not defined", t));
        if (!it->second->isGraphOutput()) {
          it->second->markGraphOutput();
          model_->graph->outputs.push_back(it->second);
        }
      }
    // Mutations the program returns instead of performing (a functional graph).
    unsigned mutations = 0;
    if (const json::Array *specs = sig.getArray("output_specs"))
      for (const json::Value &spec : *specs)
        if (const json::Object *o = spec.getAsObject(); o && !o->empty()) {
          llvm::StringRef k = o->begin()->first;
          mutations += k == "buffer_mutation" || k == "user_input_mutation" || k == "parameter_mutation";
        }
    for (auto &kv : model_metadata_)
      model_->metadata.push_back(kv);
    model_->metadata.emplace_back("mutations_returned", std::to_string(mutations));
    if (tiedParams_)
      model_->metadata.emplace_back("tied_parameters", std::to_string(tiedParams_));
  }

  struct Scope {
    std::string name;                   // the body's submodule ("submod_1")
    llvm::StringMap<Value *> values;    // its names -> values
  };
  struct AutocastRegion {
    std::string device;                 // "cpu", "cuda"
    DType dtype = DType::BFloat16;
    bool enabled = true;
  };

  std::string path_, entry_;
  SymbolBinder binder_;
  std::unique_ptr<Model> model_;
  std::string error_;
  const json::Object *tensorValues_ = nullptr;
  std::map<std::string, SymbolInfo> declared_;
  SymbolNames names_;                              // torch symbol -> Dim name (graphlint.save_pt2)
  std::map<std::string, std::string> storageOf_;  // parameter FQN -> weight entry
  llvm::StringMap<Value *> values_;                // graph names -> values
  std::vector<std::pair<std::string, std::string>> model_metadata_;
  llvm::StringSet<> calledModules_;                // nn_module_stack paths: modules whose forward ran
  std::vector<CallSite> sites_;                    // nodes with a stack trace and a module stack
  unsigned tiedParams_ = 0;
  bool prepass_ = false;
  std::vector<Scope> scopes_;                      // the higher-order ops' bodies being inlined, innermost last
  llvm::StringSet<> mainNames_;                    // every name the main graph defines
  llvm::StringMap<unsigned> nextSuffix_;           // freeName: the next suffix to probe, per base
  std::vector<AutocastRegion> autocast_;           // the autocast regions around the node being read
  std::vector<bool> gradEnabled_;                  // the set_grad_enabled regions around it
  llvm::DenseMap<const Value *, Value *> castCache_;  // parameter -> its copy in the region's dtype
  std::vector<Node *> cachedCasts_;                // the cache's copies, held until the region ends
  llvm::DenseMap<const Value *, DType> eagerDtype_;  // values retyped to eager's dtype -> their traced dtype
};

}  // namespace

llvm::Expected<std::unique_ptr<Model>> importExportedProgram(llvm::StringRef json, llvm::StringRef weightsConfig,
                                                             const std::string &path, const std::string &entry,
                                                             const ImportOptions &opts, llvm::StringRef symbolNames) {
  return Pt2Import(path, entry, opts).run(json, weightsConfig, symbolNames);
}

}  // namespace graphlint::pt2
