// GL111 cross-device: an op reads tensors that live on different devices, or
// the graph copies a tensor between devices (ONNX Runtime's MemcpyToHost /
// MemcpyFromHost, FX `_to_copy`/`to`/`cpu`/`cuda` that change the device).
// Every such copy is a PCIe transfer and a point no fusion group can span.
// Devices come from the FX frontend (Value::device); ONNX graphs only show the
// explicit Memcpy nodes an ONNX Runtime-optimised model contains.
#include "graphlint/ir/Display.h"
#include "graphlint/ir/Verifier.h"
#include "graphlint/analyses/FusionPlan.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <set>
#include <vector>

namespace graphlint {
namespace {

bool known(const Device &d) { return d.kind != Device::Kind::Unknown && d.kind != Device::Kind::Meta; }

std::string sizeText(const Value &v) {
  auto bytes = v.type.byteSize();
  if (!bytes)
    return v.type.str();
  return fmt::format("{}, {}", v.type.str(), formatBytes(static_cast<double>(*bytes)));
}

// PyTorch lets a 0-dim CPU tensor join a CUDA op: its value travels as a
// kernel argument, with no copy and no sync.
bool cpuScalar(const Value &v) {
  return v.device.kind == Device::Kind::CPU && v.type.shape.rankKnown && v.type.shape.rank() == 0;
}

void setBreak(Diagnostic &d, const FusionPlan &plan, const Node &n) {
  d.reason = std::string(breakReasonName(BreakReason::CrossDevice));
  d.fusionId = plan.groupOf(n).id;
}

class CrossDevice final : public Rule {
public:
  static constexpr RuleInfo kInfo{"GL111", "cross-device", Severity::Warning,
      "an op reads tensors on different devices, or the graph copies between devices"};
  const RuleInfo &info() const override { return kInfo; }

  void check(const Model &m, AnalysisContext &ctx, DiagnosticSink &sink) const override {
    const FusionPlan &plan = ctx.get<FusionPlan>();
    std::set<const Node *> returns;  // copies back that a round trip's finding already names
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &np : g.nodes()) {
        const Node &n = *np;
        if (n.opType == "MemcpyToHost" || n.opType == "MemcpyFromHost")
          reportMemcpy(n, plan, sink);
        else if (!reportMixedReads(n, plan, sink) && !returns.count(&n))
          reportDeviceChange(n, plan, sink, returns);
      }
    });
  }

private:
  static void reportMemcpy(const Node &n, const FusionPlan &plan, DiagnosticSink &sink) {
    bool toHost = n.opType == "MemcpyToHost";
    const Value *in = n.inputs.empty() ? nullptr : n.inputs[0];
    const Value *out = n.outputs.empty() ? nullptr : n.outputs[0];
    std::string what = in ? fmt::format("'{}' ({})", in->name, sizeText(*in)) : std::string("its input");
    Diagnostic &d = sink.report(n, fmt::format("{} copies {} {}: a device-host transfer in the middle of the graph",
                                               describeNode(n), what,
                                               toHost ? "from GPU memory to the host" : "from the host to GPU memory"));
    setBreak(d, plan, n);
    // The op on the host side is the one that made the runtime insert the copy.
    if (toHost && out)
      for (const Use &u : out->uses)
        d.note(fmt::format("{} reads the copy on the host: the runtime placed it on the CPU", describeNode(*u.user)));
    if (!toHost && in && in->kind == Value::Kind::NodeOutput && in->producer)
      d.note(fmt::format("{} produced '{}' on the host: the runtime placed it on the CPU",
                         describeNode(*in->producer), in->name));
    d.note("keep the computation on one device: give the op that fell back to the CPU a GPU kernel "
           "(a supported op, opset or dtype), or move that work out of the per-step graph");
  }

  // An op whose inputs live on different devices.
  static bool reportMixedReads(const Node &n, const FusionPlan &plan, DiagnosticSink &sink) {
    bool accelerator = false;
    for (const Value *v : n.inputs)
      accelerator |= v && known(v->device) && v->device.kind != Device::Kind::CPU;
    const Value *first = nullptr, *other = nullptr;
    for (const Value *v : n.inputs) {
      if (!v || !known(v->device) || (accelerator && cpuScalar(*v)))
        continue;
      if (!first)
        first = v;
      else if (!(v->device == first->device) && !other)
        other = v;
    }
    if (!other)
      return false;
    Diagnostic &d = sink.report(
        n, fmt::format("{} reads tensors on different devices: '{}' ({}) on {} and '{}' ({}) on {}", describeNode(n),
                       first->name, sizeText(*first), first->device.str(), other->name, sizeText(*other),
                       other->device.str()));
    setBreak(d, plan, n);
    d.note("eager PyTorch rejects most such ops (\"Expected all tensors to be on the same device\"); a "
           "compiler that accepts them copies one operand across devices every step");
    // The host-side operand is the one to move; between two GPUs, the second.
    const Value *stray = first->device.kind == Device::Kind::CPU ? first : other;
    const Value *home = stray == first ? other : first;
    d.note(fmt::format("create or move '{}' on {} once, outside the step (register it as a buffer, "
                       "pass device= to its factory)",
                       stray->name, home->device.str()));
    return true;
  }

  // The first input on a known device: where a copy reads from.
  static const Value *copySource(const Node &n) {
    for (const Value *v : n.inputs)
      if (v && known(v->device))
        return v;
    return nullptr;
  }

  // Copies that bring what `copy` moved to `there` back to `home`: followed
  // through the ops that keep it on `there` (work done on the host between
  // `.cpu()` and `.to(x.device)`), a bounded walk.
  static std::vector<const Node *> copiesBack(const Value &moved, const Device &home, unsigned *between) {
    std::vector<const Node *> back;
    std::vector<const Value *> work{&moved};
    std::set<const Node *> seen;
    while (!work.empty() && seen.size() < 64) {
      const Value *v = work.back();
      work.pop_back();
      for (const Use &u : v->uses) {
        const Node *user = u.user;
        if (!user || !seen.insert(user).second)
          continue;
        bool returns = false, stays = false;
        for (const Value *out : user->outputs) {
          if (!out || !known(out->device))
            continue;
          returns |= out->device == home;
          stays |= out->device == moved.device;
        }
        if (returns && copySource(*user) && copySource(*user)->device == moved.device)
          back.push_back(user);
        else if (stays) {
          ++*between;
          for (const Value *out : user->outputs)
            if (out && out->device == moved.device)
              work.push_back(out);
        }
      }
    }
    return back;
  }

  // A node whose output lives on another device than its inputs: a copy.
  // One that comes back (`.cpu()` then `.to(x.device)`) is one finding, at
  // the first copy, naming both.
  static void reportDeviceChange(const Node &n, const FusionPlan &plan, DiagnosticSink &sink,
                                 std::set<const Node *> &returns) {
    const Value *in = copySource(n);
    if (!in)
      return;
    for (const Value *out : n.outputs) {
      if (!out || !known(out->device) || out->device == in->device)
        continue;
      unsigned between = 0;
      std::vector<const Node *> back = copiesBack(*out, in->device, &between);
      std::string msg = fmt::format("{} copies '{}' ({}) from {} to {}", describeNode(n), in->name, sizeText(*in),
                                    in->device.str(), out->device.str());
      if (!back.empty()) {
        const Node &b = *back.front();
        msg = fmt::format("{} makes a round trip {} -> {} -> {} with '{}' ({}): {} copies it back{}", describeNode(n),
                          in->device.str(), out->device.str(), in->device.str(), in->name, sizeText(*in),
                          describeNode(b),
                          b.loc.valid() ? fmt::format(" at {}:{}", b.loc.file, b.loc.line) : std::string());
        returns.insert(back.begin(), back.end());
      }
      Diagnostic &d = sink.report(n, msg);
      setBreak(d, plan, n);
      if (!back.empty()) {
        d.note(between ? fmt::format("{} op(s) run on {} in between; the step waits for both transfers",
                                     between, out->device.str())
                       : fmt::format("nothing runs on {} in between: both transfers (and the sync of the copy to "
                                     "the host) buy nothing",
                                     out->device.str()));
        d.note(fmt::format("remove the round trip: keep '{}' on {}{}", in->name, in->device.str(),
                           between ? " and do the work in between there" : ""));
        return;
      }
      d.notes.push_back(
          {out->device.kind == Device::Kind::CPU
               ? std::string("a copy to the host also waits for the GPU to finish the queued work that produces it")
               : fmt::format("the copy runs every step; the graph cannot fuse across it"),
           std::nullopt});
      d.note(fmt::format("keep '{}' on {} (create it there, or move it once outside the step)", in->name,
                         out->device.str()));
      return;
    }
  }
};

}  // namespace

GRAPHLINT_DEFINE_RULE(CrossDevice)

}  // namespace graphlint
