// Hand-built IR for test fixtures that ONNX text cannot express: mutation,
// alias, saved-for-backward and device facts (the FX frontend's territory),
// or exact nested-body types. Header-only; the builder owns a Model whose
// main graph it fills in order, so nodes are topologically sorted by
// construction. Facts are set by direct field access on the returned Node or
// Value, e.g. `n->mutatedInputs = {0}; n->outputAliasesInput = {0};`.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/OpRegistry.h"

#include <memory>
#include <string>
#include <vector>

namespace graphlint::test {

/// f32 tensor of static dims: `f32({2, 3})`. Shorthands for fixtures.
inline Type f32(std::initializer_list<int64_t> dims) { return Type::tensor(DType::Float, Shape::of(dims)); }
inline Type tensorOf(DType dt, std::initializer_list<int64_t> dims) { return Type::tensor(dt, Shape::of(dims)); }

class IrBuilder {
public:
  /// A builder owning a fresh model (path "ir.model", ai.onnx opset `opset`).
  explicit IrBuilder(int64_t opset = 17) : owned_(std::make_unique<Model>()), opset_(opset) {
    owned_->path = "ir.model";
    owned_->opsets.push_back({"", opset});
    owned_->graph = std::make_unique<Graph>();
    owned_->graph->name = "main";
    model_ = owned_.get();
    g_ = owned_->graph.get();
  }

  Model &model() { return *model_; }
  Graph &graph() { return *g_; }

  /// A formal input of the graph being built.
  Value *input(const std::string &name, Type t = f32({4})) {
    Value *v = g_->createValue(name, Value::Kind::GraphInput);
    v->type = std::move(t);
    g_->inputs.push_back(v);
    return v;
  }

  /// An initializer (parameter or buffer) of the graph being built.
  Value *param(const std::string &name, Type t = f32({4})) {
    Param *p = g_->createParam();
    p->tensor.name = name;
    p->tensor.dtype = t.dtype;
    for (const Dim &d : t.shape.dims)
      p->tensor.dims.push_back(d.isStatic() ? d.value : -1);
    Value *v = g_->createValue(name, Value::Kind::Param);
    v->param = p;
    v->type = std::move(t);
    p->value = v;
    return v;
  }

  /// Appends a node. `op` may be qualified, "domain::Op" (e.g.
  /// "higher_order::cond"); the node is named after its first output unless
  /// `name` is given. Outputs start untyped: set `n->outputs[i]->type`.
  Node *node(const std::string &op, std::vector<Value *> ins, std::vector<std::string> outs,
             const std::string &name = "") {
    Node *n = g_->createNode();
    auto sep = op.rfind("::");
    n->domain = sep == std::string::npos ? "" : op.substr(0, sep);
    n->opType = sep == std::string::npos ? op : op.substr(sep + 2);
    n->opsetVersion = n->domain.empty() ? opset_ : 1;
    n->name = !name.empty() ? name : (outs.empty() ? n->opType : outs[0]);
    n->op = OpRegistry::instance().lookup(n->domain, n->opType, n->opsetVersion);
    for (Value *v : ins) {
      if (v)
        v->uses.push_back({n, static_cast<unsigned>(n->inputs.size())});
      n->inputs.push_back(v);
    }
    for (const std::string &o : outs) {
      Value *v = g_->createValue(o, Value::Kind::NodeOutput);
      v->producer = n;
      v->resultIndex = static_cast<unsigned>(n->outputs.size());
      n->outputs.push_back(v);
    }
    g_->renumber();
    return n;
  }

  /// Same, typing the outputs at once (one type per output).
  Node *node(const std::string &op, std::vector<Value *> ins, std::vector<std::string> outs, std::vector<Type> types,
             const std::string &name = "") {
    Node *n = node(op, std::move(ins), std::move(outs), name);
    for (size_t i = 0; i < types.size() && i < n->outputs.size(); ++i)
      n->outputs[i]->type = std::move(types[i]);
    return n;
  }

  /// Marks a value as an output of the graph being built.
  void output(Value *v) {
    v->markGraphOutput();
    g_->outputs.push_back(v);
  }

  /// Adds a nested body to `owner` under graph attribute `attrName` (then_branch,
  /// else_branch, body, ...) and returns a builder filling it. The returned
  /// builder borrows the model; keep the outer builder alive.
  IrBuilder body(Node *owner, const std::string &attrName) {
    auto sub = std::make_unique<Graph>();
    sub->name = attrName;
    sub->parentNode = owner;
    sub->parentGraph = owner->graph;
    Graph *raw = sub.get();
    owner->subgraphs().push_back(std::move(sub));
    Attribute a;
    a.name = attrName;
    a.kind = AttrKind::Graph;
    a.graphs.push_back(static_cast<unsigned>(owner->subgraphs().size() - 1));
    owner->attributes.push_back(std::move(a));
    return IrBuilder(model_, raw, opset_);
  }

  /// A value of the body being built that reads `outerValue` from an
  /// enclosing graph (an outer-scope capture).
  Value *capture(Value *outerValue) {
    Value *def = outerValue->kind == Value::Kind::OuterScope && outerValue->outer ? outerValue->outer : outerValue;
    Value *v = g_->createValue(outerValue->name, Value::Kind::OuterScope);
    v->outer = def;
    v->type = def->type;
    return v;
  }

  /// Hands over the model (only from the builder that created it).
  std::unique_ptr<Model> take() { return std::move(owned_); }

private:
  IrBuilder(Model *m, Graph *g, int64_t opset) : model_(m), g_(g), opset_(opset) {}

  std::unique_ptr<Model> owned_;
  Model *model_ = nullptr;
  Graph *g_ = nullptr;
  int64_t opset_ = 17;
};

}  // namespace graphlint::test
