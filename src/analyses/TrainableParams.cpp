// Which initializers are trained (TrainableParams.h).
#include "graphlint/analyses/TrainableParams.h"

#include "graphlint/ir/OpRegistry.h"

#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringSwitch.h>

namespace graphlint {
namespace {

/// Floating operands a gradient never flows into (the operand is a
/// statistic, a bound or a scale, not something the output is computed from
/// differentiably); integer and bool operands never carry one anyway.
bool nonDifferentiableOperand(const Node &n, unsigned i) {
  if (!isDefaultDomain(n.domain))
    return false;
  return llvm::StringSwitch<bool>(n.opType)
      .Case("BatchNormalization", i >= 3)
      .Cases("Dropout", "Clip", i >= 1)
      .Case("Resize", i >= 1)
      .Case("Pad", i >= 1)
      .Cases("Floor", "Ceil", "Round", "Sign", true)
      .Cases("RandomNormalLike", "RandomUniformLike", "Bernoulli", "EyeLike", true)
      .Default(false);
}

bool floating(const Value *v) { return v && v->type.isTensor() && isFloating(v->type.dtype); }

}  // namespace

std::vector<const Value *> trainableParams(const Graph &g) {
  std::vector<const Value *> out;
  bool fxFlags = false;
  for (const auto &p : g.params())
    fxFlags |= p->value && p->value->requiresGrad;
  if (fxFlags) {
    for (const auto &p : g.params())
      if (p->value && p->value->requiresGrad && !p->buffer && !p->value->uses.empty())
        out.push_back(p->value);
    return out;
  }
  // Values a gradient reaches, from the outputs back (nodes are topological).
  llvm::DenseSet<const Value *> reached;
  for (const Value *o : g.outputs)
    if (floating(o))
      reached.insert(o);
  const auto &nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node &n = **it;
    bool any = !n.subgraphs().empty();  // control flow: every operand, conservatively
    for (const Value *o : n.outputs)
      any |= o && reached.count(o);
    if (!any)
      continue;
    for (unsigned i = 0; i < n.inputs.size(); ++i)
      if (floating(n.inputs[i]) && !nonDifferentiableOperand(n, i))
        reached.insert(n.inputs[i]);
  }
  for (const auto &p : g.params()) {
    const Value *v = p->value;
    if (!v || !isFloating(v->type.dtype) || p->computed)
      continue;
    if (p->trained) {
      if (*p->trained)
        out.push_back(v);
      continue;
    }
    auto numel = v->type.shape.numElements();
    if (numel && *numel <= 1)
      continue;
    bool readInBody = false;  // captured by a control-flow body: kept, conservatively
    for (const Use &u : v->uses)
      readInBody |= u.user->graph != &g;
    if (reached.count(v) || readInBody)
      out.push_back(v);
  }
  return out;
}

}  // namespace graphlint
