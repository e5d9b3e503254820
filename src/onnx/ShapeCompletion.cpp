#include "ShapeCompletion.h"

#include "graphlint/ir/PhaseTimes.h"
#include "graphlint/ir/SymbolBinder.h"

#include "ConstFolding.h"
#include "FallbackInference.h"
#include "InferenceGuard.h"
#include "PointwiseInference.h"
#include "ProtoConvert.h"
#include "graphlint/ir/CheckedMath.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/Verifier.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>

#include <llvm/ADT/DenseMap.h>

#include <google/protobuf/arena.h>

namespace graphlint::onnxio {
namespace {

std::string firstLine(const std::string &s) {
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

class Completion {
public:
  Completion(Model &m, GraphBuilder &b, onnx::ModelProto &p, const ImportOptions &o)
      : model_(m), builder_(b), proto_(p), opts_(o), binder_(o.dims) {}

  void run() {
    Graph &g = *model_.graph;
    for (const auto &imp : model_.opsets)
      opsets_[isDefaultDomain(imp.domain) ? std::string() : imp.domain] = static_cast<int>(imp.version);
    for (const auto &f : proto_.functions())
      functions_[f.domain() + ":" + f.name()] = &f;
    for (const auto &f : model_.functions)
      if (f->recursive)
        recursive_.insert(f->domain + ":" + f->name);
    // Nodes that failed ONNX's own check_node: its inference functions
    // assume a node that passed it.
    for (const ImportProblem &p : model_.problems)
      if (p.node && p.kind == ImportProblem::Kind::Invalid)
        reported_.insert(p.node);
    types_.reserve(g.values().size());  // one entry per value: no rehash on a million nodes
    seedTypes(g);
    onnx::ShapeInferenceOptions options{false, 0, true};
    onnx::shape_inference::GraphInferenceContext graphCtx(types_, opsets_, &symbols_, functions_,
                                                          onnx::OpSchemaRegistry::Instance(), &generated_,
                                                          static_cast<int>(model_.irVersion ? model_.irVersion : 8));
    {
      PhaseTimes::Scope phase("import: shape completion: per-node inference", g.nodes().size());
      for (const auto &n : g.nodes())
        inferNode(*n, graphCtx, options);
    }
    PhaseTimes::Scope phase("import: shape completion: write back", g.nodes().size());
    writeBack(g);
    for (const auto &n : g.nodes())
      for (const auto &sub : n->subgraphs())
        forEachGraph(*sub, [&](const Graph &sg) { writeBackNested(const_cast<Graph &>(sg)); });
    binder_.finish(model_);
  }

private:
  onnx::TypeProto *store(const std::string &name, const onnx::TypeProto &t) {
    auto *copy = google::protobuf::Arena::CreateMessage<onnx::TypeProto>(&arena_);
    *copy = t;
    types_[name] = copy;
    return copy;
  }

  // ONNX has no hints: a dim_param is bound by -D or stays symbolic.
  void bindDims(Value &v) {
    if (!v.type.isTensor())
      return;
    binder_.noteInput(v.name, v.type);
    for (Dim &d : v.type.shape.dims)
      d = binder_.bind(d);
  }

  void seedTypes(Graph &g) {
    const onnx::GraphProto &gp = *builder_.protoOf(&g);
    onnx::TypeProto tp;
    for (const auto &p : g.params()) {
      typeToProto(p->value->type, tp);
      store(p->value->name, tp);
    }
    for (const auto &t : gp.initializer())
      if (!t.has_data_location() || t.data_location() != onnx::TensorProto::EXTERNAL)
        if (literalFromTensor(t).data.known)
          data_[t.name()] = &t;
    for (Value *v : g.inputs) {
      bindDims(*v);
      typeToProto(v->type, tp);
      store(v->name, tp);
    }
    if (opts_.dropDeclaredTypes) {
      for (const auto &n : g.nodes())
        for (Value *v : n->outputs)
          if (v)
            v->type = Type{};
      return;
    }
    for (const auto &vi : gp.value_info())
      if (vi.has_type() && !types_.count(vi.name()))
        store(vi.name(), vi.type());
    for (const auto &vi : gp.output())
      if (vi.has_type() && !types_.count(vi.name()))
        store(vi.name(), vi.type());
  }

  std::optional<std::vector<int64_t>> knownInts(const std::string &name) {
    if (auto it = data_.find(name); it != data_.end()) {
      // A constant every node of a chain reads is decoded once.
      auto [memo, added] = decodedInts_.try_emplace(it->second);
      if (added) {
        ConstData d;
        if (decodeSmallPayload(*it->second, d) && d.known && (!d.ints.empty() || d.floats.empty()))
          memo->second = std::move(d.ints);
      }
      return memo->second;
    }
    if (auto it = generated_.find(name); it != generated_.end()) {
      std::vector<int64_t> out;
      for (const auto &d : it->second.dim()) {
        if (!d.has_dim_value())
          return std::nullopt;
        out.push_back(d.dim_value());
      }
      return out;
    }
    return std::nullopt;
  }

  std::optional<std::vector<double>> knownFloats(const std::string &name) {
    auto it = data_.find(name);
    if (it == data_.end())
      return std::nullopt;
    ConstData d;
    if (!decodeSmallPayload(*it->second, d) || !d.known)
      return std::nullopt;
    if (!d.floats.empty())
      return d.floats;
    return std::vector<double>(d.ints.begin(), d.ints.end());
  }

  Type currentType(const std::string &name) {
    auto it = name.empty() ? types_.end() : types_.find(name);
    return it == types_.end() ? Type{} : typeFromProto(*it->second);
  }

  FallbackContext fallbackContext(const Node &n, const onnx::NodeProto &np) {
    FallbackContext ctx{n, {}, {}, {}, {}, {}};
    for (int i = 0; i < np.input_size(); ++i) {
      const std::string &in = np.input(i);
      ctx.inputs.push_back(currentType(in));
      ctx.values.push_back(in.empty() ? std::nullopt : knownInts(in));
      ctx.floats.push_back(in.empty() ? std::nullopt : knownFloats(in));
    }
    return ctx;
  }

  // ONNX 1.12 stops at rank or leaves dims unknown where values decide them
  // (Reshape from a computed shape, Einsum, windows); our rules may know more.
  void refine(const Node &n, onnx::NodeProto &np) {
    bool incomplete = false;
    for (int i = 0; i < np.output_size() && !incomplete; ++i)
      if (!np.output(i).empty())
        incomplete = !fullyKnown(np.output(i));
    if (!incomplete)
      return;
    FallbackContext ctx = fallbackContext(n, np);
    bool inferred = inferFallback(ctx);
    reportInvalid(n, ctx.problems);
    if (!inferred)
      return;
    onnx::TypeProto tp;
    for (size_t i = 0; i < ctx.outputs.size() && i < static_cast<size_t>(np.output_size()); ++i) {
      const std::string &name = np.output(static_cast<int>(i));
      if (name.empty())
        continue;
      Type t = currentType(name);
      if (refineType(t, ctx.outputs[i])) {
        typeToProto(t, tp);
        store(name, tp);
      }
    }
  }

  // Loop: a loop-carried output has the dtype and rank of its initial value;
  // its dims survive where the body does not contradict them. Scan outputs
  // stack the body's per-iteration values along a new leading axis whose
  // length is the trip count when it is known.
  void refineLoop(const Node &n, onnx::NodeProto &np) {
    if (n.opType != "Loop" || !n.domain.empty())
      return;
    const onnx::GraphProto *body = nullptr;
    for (const auto &a : np.attribute())
      if (a.name() == "body" && a.has_g())
        body = &a.g();
    if (!body)
      return;
    int carried = std::max(0, np.input_size() - 2);
    onnx::TypeProto tp;
    for (int i = 0; i < np.output_size(); ++i) {
      const std::string &name = np.output(i);
      if (name.empty())
        continue;
      Type cur = currentType(name);
      Type bodyOut = i + 1 < body->output_size() ? typeFromProto(body->output(i + 1).type()) : Type{};
      Type better;
      if (i < carried) {
        better = currentType(np.input(i + 2));
        if (better.isTensor() && bodyOut.isTensor() && better.shape.rankKnown && bodyOut.shape.rankKnown) {
          if (bodyOut.shape.rank() != better.shape.rank())
            better.shape = Shape::unranked();
          else
            for (size_t d = 0; d < better.shape.rank(); ++d)
              if (bodyOut.shape.dims[d].isStatic() && bodyOut.shape.dims[d] != better.shape.dims[d])
                better.shape.dims[d] = Dim::unknown();
        }
      } else if (bodyOut.isTensor() && bodyOut.shape.rankKnown) {
        better = bodyOut;
        auto trip = np.input_size() > 0 && !np.input(0).empty() ? knownInts(np.input(0)) : std::nullopt;
        better.shape.dims.insert(better.shape.dims.begin(), trip && trip->size() == 1 && (*trip)[0] >= 0
                                                                ? Dim::fixed((*trip)[0])
                                                                : Dim::unknown());
      }
      if (refineType(cur, better)) {
        typeToProto(cur, tp);
        store(name, tp);
      }
    }
  }

  // A tensor with element type and every dim static, read off the proto
  // without converting it.
  bool fullyKnown(const std::string &name) const {
    auto it = types_.find(name);
    if (it == types_.end() || !it->second->has_tensor_type())
      return false;
    const auto &tt = it->second->tensor_type();
    if (tt.elem_type() == 0 || !tt.has_shape())
      return false;
    for (const auto &d : tt.shape().dim())
      if (!d.has_dim_value())
        return false;
    return true;
  }

  // Small integer results become known values for the nodes downstream.
  void fold(const Node &n, onnx::NodeProto &np) {
    if (np.output_size() < 1 || np.output(0).empty() || data_.count(np.output(0)))
      return;
    if (n.opType != "Shape" && n.opType != "Size") {
      bool anyKnown = false;
      for (const std::string &in : np.input())
        anyKnown = anyKnown || (!in.empty() && (data_.count(in) || generated_.count(in)));
      if (!anyKnown)
        return;
    }
    std::vector<std::optional<std::vector<int64_t>>> known;
    bool anyInts = false;
    for (const std::string &in : np.input()) {
      known.push_back(in.empty() ? std::nullopt : knownInts(in));
      anyInts |= known.back().has_value();
    }
    if (!anyInts && n.opType != "Shape" && n.opType != "Size")
      return;  // nothing to fold (a float constant operand, say): skip converting the types
    std::vector<std::optional<IntTensor>> ins;
    std::vector<Type> types;
    bool any = false;
    for (int i = 0; i < np.input_size(); ++i) {
      const std::string &in = np.input(i);
      types.push_back(currentType(in));
      std::optional<IntTensor> v;
      if (auto &ints = known[static_cast<size_t>(i)]) {
        const Type &t = types.back();
        if (t.shape.isFullyStatic() && isInteger(t.dtype) | (t.dtype == DType::Bool)) {
          IntTensor it;
          for (const Dim &d : t.shape.dims)
            it.dims.push_back(d.value);
          it.values = *ints;
          v = it;
          any = true;
        }
      }
      ins.push_back(std::move(v));
    }
    if (!any && n.opType != "Shape" && n.opType != "Size")
      return;
    auto folded = foldIntegers(n, ins, types);
    if (!folded || folded->values.size() > kMaxFoldElements)
      return;
    Type out = currentType(np.output(0));
    DType dt = out.dtype != DType::Undefined ? out.dtype : DType::Int64;
    if (!(isInteger(dt) || dt == DType::Bool))
      return;
    std::vector<int64_t> dims = folded->dims;
    if (dims.empty() && folded->values.size() != 1) {
      // Shape-preserving ops: take the dims from the inferred type.
      if (!out.shape.isFullyStatic())
        return;
      for (const Dim &d : out.shape.dims)
        dims.push_back(d.value);
    } else if (dims.empty() && out.shape.isFullyStatic()) {
      for (const Dim &d : out.shape.dims)
        dims.push_back(d.value);
    }
    CheckedInt count = checkedProduct(dims);
    if (!count || *count != static_cast<int64_t>(folded->values.size()))
      return;
    onnx::TensorProto &t = *google::protobuf::Arena::CreateMessage<onnx::TensorProto>(&arena_);
    t.set_data_type(static_cast<int>(dt));
    for (int64_t d : dims)
      t.add_dims(d);
    for (int64_t v : folded->values) {
      if (dt == DType::Int64)
        t.add_int64_data(v);
      else if (dt == DType::UInt64 || dt == DType::UInt32)
        t.add_uint64_data(static_cast<uint64_t>(v));
      else
        t.add_int32_data(static_cast<int32_t>(v));
    }
    data_[np.output(0)] = &t;
    Type exact = Type::tensor(dt, Shape{});
    exact.shape.rankKnown = true;
    for (int64_t d : dims)
      exact.shape.dims.push_back(Dim::fixed(d));
    if (refineType(out, exact)) {
      onnx::TypeProto tp;
      typeToProto(out, tp);
      store(np.output(0), tp);
    }
  }

  void recordConstant(const Node &n, onnx::NodeProto &np) {
    if (n.opType != "Constant" || !isDefaultDomain(n.domain) || np.output_size() != 1)
      return;
    for (const auto &a : np.attribute()) {
      if (a.name() == "value" && a.has_t() && literalFromTensor(a.t()).data.known) {
        data_[np.output(0)] = &a.t();
      } else if (a.name() == "value_ints" || a.name() == "value_int") {
        onnx::TensorProto &t = *google::protobuf::Arena::CreateMessage<onnx::TensorProto>(&arena_);
        t.set_data_type(onnx::TensorProto::INT64);
        if (a.name() == "value_ints") {
          t.add_dims(a.ints_size());
          for (int64_t v : a.ints())
            t.add_int64_data(v);
        } else {
          t.add_int64_data(a.i());
        }
        data_[np.output(0)] = &t;
      }
    }
  }

  // A negative inferred dim is no size (ONNX 1.12 passes a ConstantOfShape
  // of [-1] straight through): it becomes unknown and the node is reported.
  static bool hasNegativeDim(const onnx::TypeProto &t) {
    if (!t.has_tensor_type() || !t.tensor_type().has_shape())
      return false;
    for (const auto &d : t.tensor_type().shape().dim())
      if (d.has_dim_value() && d.dim_value() < 0)
        return true;
    return false;
  }

  onnx::TypeProto withoutNegativeDims(const Node &n, const std::string &name, const onnx::TypeProto &inferred) {
    onnx::TypeProto t = inferred;
    onnx::TensorShapeProto *shape = t.has_tensor_type() && t.tensor_type().has_shape()
                                        ? t.mutable_tensor_type()->mutable_shape()
                                        : nullptr;
    for (int i = 0; shape && i < shape->dim_size(); ++i)
      if (shape->dim(i).has_dim_value() && shape->dim(i).dim_value() < 0) {
        reportInvalid(n, {fmt::format("its output '{}' would have a negative dim {} (axis {})", name,
                                      shape->dim(i).dim_value(), i)});
        shape->mutable_dim(i)->clear_dim_value();
      }
    return t;
  }

  void mergeOutput(const Node &n, const std::string &name, const onnx::TypeProto &rawInferred, bool fromOnnx = true) {
    if (rawInferred.value_case() == onnx::TypeProto::VALUE_NOT_SET)
      return;
    // Copied only to be changed: most inferred types have no negative dim.
    std::optional<onnx::TypeProto> fixed;
    if (hasNegativeDim(rawInferred))
      fixed = withoutNegativeDims(n, name, rawInferred);
    const onnx::TypeProto &inferred = fixed ? *fixed : rawInferred;
    auto it = types_.find(name);
    if (it == types_.end()) {
      store(name, inferred);
      return;
    }
    try {
      onnx::shape_inference::checkShapesAndTypes(inferred, *it->second);
      onnx::shape_inference::mergeShapesAndTypes(inferred, it->second);
    } catch (const std::exception &e) {
      if (!fromOnnx)
        return;  // our own rules may be wrong; the declaration stands
      ImportProblem p;
      p.message = fmt::format("the declared type of '{}' conflicts with the type inferred from node {}: {}", name,
                              describeNode(n), firstLine(e.what()));
      p.graph = n.graph;
      p.node = &n;
      model_.problems.push_back(std::move(p));
      *it->second = inferred;
    }
  }

  // One GL001 per malformed node: check_node's, the guard's or the
  // fallback's, whichever saw it first.
  void reportInvalid(const Node &n, const std::vector<std::string> &why) {
    if (why.empty() || !reported_.insert(&n).second)
      return;
    ImportProblem p;
    p.message = fmt::format("node {} is malformed: {}", describeNode(n), why.front());
    p.graph = n.graph;
    p.node = &n;
    model_.problems.push_back(std::move(p));
  }

  bool runFallback(const Node &n, onnx::NodeProto &np) {
    FallbackContext ctx = fallbackContext(n, np);
    bool inferred = inferFallback(ctx);
    reportInvalid(n, ctx.problems);
    if (!inferred)
      return false;
    onnx::TypeProto tp;
    for (size_t i = 0; i < ctx.outputs.size() && i < static_cast<size_t>(np.output_size()); ++i) {
      if (np.output(static_cast<int>(i)).empty())
        continue;
      typeToProto(ctx.outputs[i], tp);
      mergeOutput(n, np.output(static_cast<int>(i)), tp, /*fromOnnx=*/false);
    }
    return true;
  }

  void inferNode(const Node &n, onnx::shape_inference::GraphInferenceContext &graphCtx,
                 const onnx::ShapeInferenceOptions &options) {
    onnx::NodeProto *np = builder_.protoOf(&n);
    if (!np)
      return;
    // Per-(op, version) facts are cached in the registry entry.
    bool newerThanLibrary = n.op->newerThanLibrary;
    const onnx::OpSchema *schema = n.op->schema;
    auto fn = functions_.empty() ? functions_.end() : functions_.find(np->domain() + ":" + np->op_type());
    bool useOnnx = fn != functions_.end() ||
                   (schema && schema->has_type_and_shape_inference_function() &&
                    n.op->schemaCurrent);
    // libonnx crashes or hangs on malformed nodes (signals, not exceptions):
    // those get the checked fallback below.
    if (useOnnx && reported_.count(&n))
      useOnnx = false;
    if (useOnnx) {
      GuardScope scope{types_, opsets_, functions_, recursive_, safeFunctions_, &guardSchemas_};
      if (auto hazard = onnxInferenceHazard(*np, scope)) {
        useOnnx = false;
        if (hazard->invalid)
          reportInvalid(n, {hazard->reason});
      }
    }
    if (useOnnx && fn == functions_.end() && !newerThanLibrary && inferPointwiseNode(n, *np, *schema)) {
      // ONNX's result without ONNX's machinery (PointwiseInference.h).
    } else if (useOnnx) {
      try {
        onnx::shape_inference::InferenceContextImpl ctx(*np, types_, data_, {}, &generated_, &graphCtx);
        if (fn != functions_.end()) {
          std::unordered_map<std::string, int> fnOpsets = opsets_;
          for (const auto &imp : fn->second->opset_import())
            fnOpsets[imp.domain()] = static_cast<int>(imp.version());
          onnx::shape_inference::InferShapeForFunctionNode(*fn->second, fnOpsets, onnx::OpSchemaRegistry::Instance(),
                                                           ctx, options, functions_, &symbols_, &generated_);
        } else {
          // ONNX's own driver checks the type constraints before inferring;
          // the inference functions assume them.
          if (!newerThanLibrary) {
            schema->CheckInputOutputType(ctx);
            notePassedTypeCheck(*np, *schema);
          }
          schema->GetTypeAndShapeInferenceFunction()(ctx);
        }
        for (int i = 0; i < np->output_size(); ++i)
          if (!np->output(i).empty())
            mergeOutput(n, np->output(i), *ctx.getOutputType(static_cast<size_t>(i)));
        if (schema && fn == functions_.end())
          propagateData(*np, *schema);
      } catch (const std::exception &e) {
        // Newer-opset nodes may trip the older library, and an input whose
        // type is unknown (fed by an opaque op) is not the node's fault:
        // GL002/GL003 explain those. Otherwise the node is inconsistent.
        bool inputsTyped = true;
        for (const std::string &in : np->input())
          inputsTyped &= in.empty() || currentType(in).kind != TypeKind::Unknown;
        if (!runFallback(n, *np) && !newerThanLibrary && inputsTyped) {
          ImportProblem p;
          p.message = fmt::format("shape inference failed for node {}: {}", describeNode(n), firstLine(e.what()));
          p.graph = n.graph;
          p.node = &n;
          model_.problems.push_back(std::move(p));
        }
      }
    } else {
      runFallback(n, *np);
    }
    recordConstant(n, *np);
    refineLoop(n, *np);
    refine(n, *np);
    fold(n, *np);
  }

  // The element types of a node's first two inputs, the key under which a
  // pointwise op's type-constraint check is remembered.
  std::pair<int, int> inputElemTypes(const onnx::NodeProto &np) const {
    int elem[2] = {-1, -1};
    for (int i = 0; i < 2 && i < np.input_size(); ++i)
      if (auto it = types_.find(np.input(i)); it != types_.end() && it->second->has_tensor_type())
        elem[i] = it->second->tensor_type().elem_type();
    return {elem[0], elem[1]};
  }

  PointwiseKind pointwiseKindOf(const onnx::OpSchema &schema) {
    auto [it, added] = pointwiseKinds_.try_emplace(&schema, PointwiseKind::None);
    if (added)
      it->second = pointwiseKind(schema);
    return it->second;
  }

  void notePassedTypeCheck(const onnx::NodeProto &np, const onnx::OpSchema &schema) {
    if (pointwiseKindOf(schema) != PointwiseKind::None)
      typeChecked_.insert({&schema, inputElemTypes(np)});
  }

  // A pointwise node whose result ONNX's inference function would compute
  // from its input types alone: that result, merged as ONNX's would be. Only
  // once ONNX's own type-constraint check has passed a node of this op and
  // these element types, and only where data propagation has nothing to do
  // (no input carries integer shape data), so nothing else differs.
  bool inferPointwiseNode(const Node &n, const onnx::NodeProto &np, const onnx::OpSchema &schema) {
    PointwiseKind kind = pointwiseKindOf(schema);
    if (kind == PointwiseKind::None)
      return false;
    int arity = kind == PointwiseKind::Unary ? 1 : 2;
    if (np.input_size() != arity || np.output_size() != 1 || np.output(0).empty())
      return false;
    const onnx::TypeProto *inputs[2] = {nullptr, nullptr};
    for (int i = 0; i < arity; ++i) {
      const std::string &in = np.input(i);
      auto it = in.empty() ? types_.end() : types_.find(in);
      if (it == types_.end())
        return false;
      inputs[i] = it->second;
      if (schema.has_data_propagation_function()) {
        if (generated_.count(in))
          return false;
        if (auto d = data_.find(in); d != data_.end() && (d->second->data_type() == onnx::TensorProto::INT64 ||
                                                          d->second->data_type() == onnx::TensorProto::INT32))
          return false;
      }
    }
    int elem[2] = {-1, -1};
    for (int i = 0; i < arity; ++i)
      if (inputs[i]->has_tensor_type())
        elem[i] = inputs[i]->tensor_type().elem_type();
    if (!typeChecked_.count({&schema, {elem[0], elem[1]}}))
      return false;
    if (!inferPointwise(kind, inputs, pointwiseOut_))
      return false;
    mergeOutput(n, np.output(0), pointwiseOut_);
    return true;
  }

  // Data propagation is best effort: ONNX 1.12's propagators reject some
  // valid inputs (e.g. Concat of an empty shape vector), which must not make
  // a valid model look invalid.
  void propagateData(onnx::NodeProto &np, const onnx::OpSchema &schema) {
    if (!schema.has_data_propagation_function())
      return;
    // The propagators read every input's type unchecked (Shape of a value
    // whose producer is unknown), and broadcast by indexing element 0 of
    // each input's values (MathOpDataPropagator): an empty vector reads past it.
    for (const std::string &in : np.input()) {
      if (!in.empty() && !types_.count(in))
        return;
      if (auto g = generated_.find(in); g != generated_.end() && g->second.dim_size() == 0)
        return;
      if (auto d = data_.find(in); d != data_.end()) {
        CheckedInt count = checkedProduct(d->second->dims());
        if (!count || *count == 0)
          return;
      }
    }
    try {
      onnx::shape_inference::DataPropagationContextImpl dctx(np, types_, data_, generated_);
      schema.GetDataPropagationFunction()(dctx);
    } catch (const std::exception &) {
    }
  }

  void writeBack(Graph &g) {
    for (const auto &n : g.nodes())
      for (Value *v : n->outputs)
        if (v)
          if (auto it = types_.find(v->name); it != types_.end())
            v->type = typeFromProto(*it->second);
    for (Value *v : g.outputs)
      if (auto it = types_.find(v->name); it != types_.end() && v->kind == Value::Kind::Missing)
        v->type = typeFromProto(*it->second);
  }

  void writeBackNested(Graph &g) {
    const onnx::GraphProto *gp = builder_.protoOf(&g);
    if (!gp)
      return;
    auto apply = [&](const onnx::ValueInfoProto &vi) {
      if (Value *v = g.findLocal(vi.name()); v && vi.has_type() && v->kind != Value::Kind::Param)
        v->type = typeFromProto(vi.type());
    };
    for (const auto &vi : gp->input())
      apply(vi);
    for (const auto &vi : gp->value_info())
      apply(vi);
    for (const auto &vi : gp->output())
      apply(vi);
    for (const auto &v : g.values())
      if (v->kind == Value::Kind::OuterScope && v->outer)
        v->type = v->outer->type;
  }

  Model &model_;
  GraphBuilder &builder_;
  onnx::ModelProto &proto_;
  const ImportOptions &opts_;
  SymbolBinder binder_;
  std::unordered_map<std::string, int> opsets_;
  std::unordered_map<std::string, onnx::TypeProto *> types_;
  std::unordered_map<std::string, const onnx::TensorProto *> data_;
  std::unordered_map<std::string, onnx::TensorShapeProto> generated_;
  onnx::shape_inference::ModelLocalFunctionsMap functions_;
  std::set<std::string> recursive_;        // "domain:name" of functions in call cycles
  std::set<std::string> safeFunctions_;    // function bodies the guard has passed
  std::set<const Node *> reported_;        // nodes already reported malformed
  llvm::DenseMap<const onnx::OpSchema *, PointwiseKind> pointwiseKinds_;
  llvm::StringMap<std::pair<const onnx::OpSchema *, bool>> guardSchemas_;
  llvm::DenseMap<const onnx::TensorProto *, std::optional<std::vector<int64_t>>> decodedInts_;
  // (op schema, input element types) ONNX's type-constraint check passed.
  std::set<std::pair<const onnx::OpSchema *, std::pair<int, int>>> typeChecked_;
  onnx::TypeProto pointwiseOut_;
  onnx::shape_inference::SymbolTableImpl symbols_;
  google::protobuf::Arena arena_;  // types and folded tensors, freed in bulk
};

}  // namespace

void completeShapes(Model &model, GraphBuilder &builder, onnx::ModelProto &proto, const ImportOptions &opts) {
  Completion(model, builder, proto, opts).run();
}

}  // namespace graphlint::onnxio
