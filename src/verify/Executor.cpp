// The planner (ExecPlan) and the dispatcher (runPlan) shared by every backend.
#include "graphlint/verify/Executor.h"

#include <llvm/ADT/DenseMap.h>

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/analyses/Liveness.h"

#include <onnx/defs/schema.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace graphlint::verify {

ExecPlan::ExecPlan(const Graph &g) : graph_(&g) {
  for (const auto &p : g.params())
    if (p->value)
      resident_.push_back(p->value);
  for (const Value *v : g.inputs)
    if (std::find(resident_.begin(), resident_.end(), v) == resident_.end())
      resident_.push_back(v);
  // The memory plan's liveness (module argument holds and nested-body reads
  // included), so that the run measures the schedule the plan predicts.
  Liveness live(g);
  auto nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i)
    steps_.push_back({nodes[i].get(), {}});
  for (const auto &np : nodes)
    for (const Value *v : np->outputs) {
      if (!v || v->isGraphOutput())
        continue;
      // An output nothing reads dies right after its producer.
      int64_t last = std::max(live.lastRead(v), static_cast<int64_t>(np->index));
      if (last < static_cast<int64_t>(steps_.size()))
        steps_[static_cast<size_t>(last)].freeAfter.push_back(v);
    }
  // Deterministic order of frees within a step.
  for (PlanStep &s : steps_)
    std::sort(s.freeAfter.begin(), s.freeAfter.end(),
              [](const Value *a, const Value *b) { return a->name < b->name; });
}

std::optional<std::pair<const Node *, std::string>> ExecPlan::firstUnplannable() const {
  for (const PlanStep &s : steps_) {
    if (!s.node->subgraphs().empty())
      return std::make_pair(s.node, std::string("control flow (nested graphs) is not executed by verify"));
    for (const Value *v : s.node->outputs)
      if (v && v->type.kind != TypeKind::Tensor && v->type.kind != TypeKind::Unknown)
        return std::make_pair(s.node, "output '" + v->name + "' is not a dense tensor");
  }
  return std::nullopt;
}

uint64_t allocatorRound(uint64_t bytes) { return (bytes + 511) / 512 * 512; }

std::optional<uint64_t> plannedPeakBytes(const ExecPlan &plan) {
  auto sizeOf = [](const Value *v) -> std::optional<uint64_t> {
    auto b = v->type.byteSize();
    return b ? std::optional<uint64_t>(allocatorRound(*b)) : std::nullopt;
  };
  uint64_t live = 0;
  for (const Value *v : plan.resident()) {
    auto b = sizeOf(v);
    if (!b)
      return std::nullopt;
    live += *b;
  }
  uint64_t peak = live;
  llvm::DenseMap<const Value *, uint64_t> held;
  for (const PlanStep &s : plan.steps()) {
    for (const Value *v : s.node->outputs) {
      if (!v)
        continue;
      auto b = sizeOf(v);
      if (!b)
        return std::nullopt;
      held[v] = *b;
      live += *b;
    }
    peak = std::max(peak, live);
    for (const Value *v : s.freeAfter)
      live -= held.lookup(v);
  }
  return peak;
}

std::optional<std::string> arityProblem(const Node &n) {
  // The installed schema speaks for this node only at its own version (an
  // opset-18 ReduceMean takes axes as an input; the library's -13 does not).
  const onnx::OpSchema *schema = n.op && n.op->schemaCurrent ? n.op->schema : nullptr;
  if (n.outputs.empty() || !n.outputs[0])
    return std::string("it has no output");
  if (!schema)
    return std::nullopt;
  auto present = [](llvm::ArrayRef<Value *> vs) {
    size_t k = 0;
    for (const Value *v : vs)
      k += v != nullptr;
    return k;
  };
  if (n.inputs.size() < static_cast<size_t>(schema->min_input()) ||
      n.inputs.size() > static_cast<size_t>(schema->max_input()))
    return fmt::format("it has {} inputs; {} takes {} to {}", n.inputs.size(), n.opType, schema->min_input(),
                       schema->max_input());
  if (n.outputs.size() < static_cast<size_t>(schema->min_output()) ||
      n.outputs.size() > static_cast<size_t>(schema->max_output()))
    return fmt::format("it has {} outputs; {} produces {} to {}", n.outputs.size(), n.opType, schema->min_output(),
                       schema->max_output());
  const auto &formals = schema->inputs();
  for (size_t i = 0; i < n.inputs.size() && i < formals.size(); ++i)
    if (!n.inputs[i] && formals[i].GetOption() == onnx::OpSchema::Single)
      return fmt::format("its required input {} ('{}') is missing", i, formals[i].GetName());
  if (present(n.inputs) < static_cast<size_t>(schema->min_input()))
    return fmt::format("it has {} of the {} inputs {} needs", present(n.inputs), schema->min_input(), n.opType);
  return std::nullopt;
}

RunRecord runPlan(const ExecPlan &plan, Backend &backend, unsigned runIndex) {
  RunRecord r;
  for (const Value *v : plan.resident())
    r.residentBytes += allocatorRound(backend.bytesOf(*v));
  uint64_t live = r.residentBytes;
  r.peakBytes = live;
  llvm::DenseMap<const Value *, uint64_t> held;
  auto blocker = plan.firstUnplannable();
  backend.beginRun(runIndex);
  for (const PlanStep &s : plan.steps()) {
    const Node &n = *s.node;
    std::optional<std::string> why;
    if (blocker && blocker->first == &n)
      why = blocker->second;
    else if (auto bad = arityProblem(n)) {
      r.stoppedAt = &n;
      r.stopReason = fmt::format("{} cannot run: {}", n.qualifiedOp(), *bad);
      break;
    } else
      why = backend.unsupported(n);
    if (why) {
      r.stoppedAt = &n;
      r.stopReason = fmt::format("{} is not supported by the {} backend: {}", n.qualifiedOp(), backend.name(), *why);
      break;
    }
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error e = backend.execute(n)) {
      r.stoppedAt = &n;
      r.stopReason = llvm::toString(std::move(e));
      break;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.nodes.push_back({&n, seconds, 1});
    for (const Value *v : n.outputs) {
      if (!v)
        continue;
      uint64_t b = allocatorRound(backend.bytesOf(*v));
      held[v] = b;
      live += b;
    }
    r.peakBytes = std::max(r.peakBytes, live);
    for (const Value *v : s.freeAfter) {
      live -= held.lookup(v);
      held.erase(v);
      backend.release(*v);
    }
  }
  backend.endRun();
  backend.annotate(r);
  r.seconds = 0;
  for (const NodeRecord &nr : r.nodes)
    r.seconds += nr.seconds;
  return r;
}

}  // namespace graphlint::verify
