// Reads a measured torch.profiler trace (Kineto's Chrome trace JSON) into a
// MeasuredRun (RunComparison.h): the last ProfilerStep#N, its phases (the
// autograd engine's evaluate_function events are the backward,
// `Optimizer.step#...` record_functions the optimizer, what runs before the
// backward the forward), every cpu_op with the one enclosing it, the
// `[memory]` events of profile_memory=True, and GPU kernels split into NCCL
// and compute.
#include "graphlint/engine/RunComparison.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace graphlint {

namespace {

llvm::Error traceError(const std::string &path, const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.c_str(), why.c_str());
}

struct Event {
  std::string name, cat;
  char ph = 'X';
  double ts = 0, dur = 0;  // microseconds
  int64_t pid = 0, tid = 0;
  const llvm::json::Object *args = nullptr;
};

int64_t idOf(const llvm::json::Value *v) {
  if (!v)
    return 0;
  if (auto i = v->getAsInteger())
    return *i;
  if (auto s = v->getAsString())  // Kineto writes some pids and tids as strings
    return static_cast<int64_t>(std::hash<std::string>()(s->str()));
  return 0;
}

double numberOf(const llvm::json::Object *o, llvm::StringRef key) {
  if (!o)
    return 0;
  if (const llvm::json::Value *v = o->get(key))
    if (auto d = v->getAsNumber())
      return *d;
  return 0;
}

// Total length of the union of intervals, and of its intersection with another union.
struct Intervals {
  std::vector<std::pair<double, double>> v;
  void merge() {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<double, double>> out;
    for (auto &i : v)
      if (!out.empty() && i.first <= out.back().second)
        out.back().second = std::max(out.back().second, i.second);
      else
        out.push_back(i);
    v = std::move(out);
  }
  double length() const {
    double s = 0;
    for (auto &i : v)
      s += i.second - i.first;
    return s;
  }
  double overlap(const Intervals &o) const {
    double s = 0;
    size_t i = 0, j = 0;
    while (i < v.size() && j < o.v.size()) {
      double lo = std::max(v[i].first, o.v[j].first), hi = std::min(v[i].second, o.v[j].second);
      if (hi > lo)
        s += hi - lo;
      (v[i].second < o.v[j].second ? i : j)++;
    }
    return s;
  }
};

}  // namespace

llvm::Expected<MeasuredRun> readMeasuredTrace(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return traceError(path, buf.getError().message());
  llvm::StringRef text = (*buf)->getBuffer();
  if (text.startswith("\x1f\x8b"))
    return traceError(path, "a gzip file: gunzip it first");
  auto parsed = llvm::json::parse(text);
  if (!parsed)
    return traceError(path, "not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Array *raw = nullptr;
  if (const llvm::json::Object *root = parsed->getAsObject())
    raw = root->getArray("traceEvents");
  else
    raw = parsed->getAsArray();
  if (!raw)
    return traceError(path, "no traceEvents: not a Chrome trace");

  std::vector<Event> events;
  events.reserve(raw->size());
  for (const llvm::json::Value &v : *raw) {
    const llvm::json::Object *o = v.getAsObject();
    if (!o)
      continue;
    Event e;
    auto ph = o->getString("ph");
    if (!ph || ph->empty())
      continue;
    e.ph = (*ph)[0];
    if (e.ph != 'X' && e.ph != 'i' && e.ph != 'I')
      continue;
    e.name = o->getString("name").getValueOr("").str();
    e.cat = o->getString("cat").getValueOr("").str();
    e.ts = o->getNumber("ts").getValueOr(0);
    e.dur = o->getNumber("dur").getValueOr(0);
    e.pid = idOf(o->get("pid"));
    e.tid = idOf(o->get("tid"));
    e.args = o->getObject("args");
    events.push_back(std::move(e));
  }

  MeasuredRun run;
  run.path = path;
  // The step: the last ProfilerStep#N (the others are warm-up).
  double lo = -1e300, hi = 1e300;
  for (const Event &e : events)
    if (e.ph == 'X' && llvm::StringRef(e.name).startswith("ProfilerStep#") && (!run.hasStep || e.ts >= lo)) {
      run.hasStep = true;
      run.stepName = e.name;
      lo = e.ts;
      hi = e.ts + e.dur;
    }
  auto inStep = [&](const Event &e) { return e.ts >= lo && e.ts <= hi; };
  if (run.hasStep)
    run.stepSeconds = (hi - lo) * 1e-6;

  // Phases.
  double bwdStart = 1e300, bwdEnd = -1e300, optStart = 1e300, firstOp = 1e300, lastOp = -1e300;
  for (const Event &e : events) {
    if (e.ph != 'X' || !inStep(e))
      continue;
    llvm::StringRef n(e.name);
    if (e.cat == "cpu_op") {
      firstOp = std::min(firstOp, e.ts);
      lastOp = std::max(lastOp, e.ts + e.dur);
    }
    if (n.startswith("autograd::engine::evaluate_function")) {
      run.hasBackward = true;
      bwdStart = std::min(bwdStart, e.ts);
      bwdEnd = std::max(bwdEnd, e.ts + e.dur);
    } else if (n.startswith("Optimizer.step#")) {
      run.hasOptimizer = true;
      run.optimizerSeconds += e.dur * 1e-6;
      optStart = std::min(optStart, e.ts);
    }
  }
  if (!run.hasStep && firstOp <= lastOp) {
    lo = firstOp;
    hi = lastOp;
    run.stepSeconds = (hi - lo) * 1e-6;
  }
  double forwardEnd = run.hasBackward ? bwdStart : run.hasOptimizer ? optStart : hi;
  run.forwardSeconds = std::max(0.0, forwardEnd - lo) * 1e-6;
  if (run.hasBackward)
    run.backwardSeconds = (bwdEnd - bwdStart) * 1e-6;

  // The optimizer's record_functions: its ops are the optimizer metric's,
  // not the graph's.
  Intervals optimizer;
  for (const Event &e : events)
    if (e.ph == 'X' && inStep(e) && llvm::StringRef(e.name).startswith("Optimizer."))
      optimizer.v.push_back({e.ts, e.ts + e.dur});
  optimizer.merge();
  auto inOptimizer = [&](double ts) {
    for (const auto &i : optimizer.v)
      if (ts >= i.first && ts < i.second)
        return true;
    return false;
  };

  // cpu_ops and memory events per thread, in time order, with the op
  // enclosing each (a stack of open ops).
  std::map<std::pair<int64_t, int64_t>, std::vector<const Event *>> threads;
  std::vector<const Event *> memory;
  for (const Event &e : events) {
    if (!inStep(e))
      continue;
    if (e.ph == 'X' && e.cat == "cpu_op")
      threads[{e.pid, e.tid}].push_back(&e);
    else if (e.name == "[memory]") {
      threads[{e.pid, e.tid}].push_back(&e);
      memory.push_back(&e);
    }
  }
  std::unordered_map<const Event *, std::string> allocatedBy;
  for (auto &[key, list] : threads) {
    std::stable_sort(list.begin(), list.end(), [](const Event *a, const Event *b) {
      return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
    });
    std::vector<std::pair<double, int>> open;  // end, index into run.ops
    for (const Event *e : list) {
      while (!open.empty() && open.back().first <= e->ts && !(e->ph != 'X' && open.back().first == e->ts))
        open.pop_back();
      if (e->ph != 'X') {
        // The outermost op names what the user called (aten::conv2d, a
        // backward function), not the aten::empty inside it.
        if (!open.empty())
          allocatedBy[e] = run.ops[static_cast<size_t>(open.front().second)].name;
        continue;
      }
      MeasuredRun::Op op{e->name, (e->ts - lo) * 1e-6, e->dur * 1e-6, open.empty() ? -1 : open.back().second,
                         inOptimizer(e->ts)};
      run.ops.push_back(op);
      open.push_back({e->ts + e->dur, static_cast<int>(run.ops.size() - 1)});
    }
  }

  // Memory: the device with the most events (CUDA when both), the peak of
  // its running total and what was live then.
  std::stable_sort(memory.begin(), memory.end(), [](const Event *a, const Event *b) { return a->ts < b->ts; });
  std::map<int64_t, size_t> perDevice;
  for (const Event *e : memory)
    ++perDevice[static_cast<int64_t>(numberOf(e->args, "Device Type"))];
  if (!perDevice.empty()) {
    int64_t device = perDevice.count(1) ? 1 : perDevice.begin()->first;
    run.hasMemory = true;
    run.memoryDevice = device == 0 ? "cpu" : device == 1 ? "cuda" : "device " + std::to_string(device);
    run.memoryRelative = device == 0;
    std::unordered_map<int64_t, std::pair<uint64_t, std::string>> live;
    std::unordered_map<int64_t, std::pair<uint64_t, std::string>> liveAtPeak;
    for (const Event *e : memory) {
      if (static_cast<int64_t>(numberOf(e->args, "Device Type")) != device)
        continue;
      auto addr = static_cast<int64_t>(numberOf(e->args, "Addr"));
      double bytes = numberOf(e->args, "Bytes");
      if (bytes > 0)
        live[addr] = {static_cast<uint64_t>(bytes), allocatedBy.count(e) ? allocatedBy[e] : std::string()};
      else
        live.erase(addr);
      auto total = static_cast<uint64_t>(std::max(0.0, numberOf(e->args, "Total Allocated")));
      run.peakReserved = std::max(run.peakReserved, static_cast<uint64_t>(std::max(0.0, numberOf(e->args, "Total Reserved"))));
      if (total > run.peakAllocated) {
        run.peakAllocated = total;
        liveAtPeak = live;
      }
    }
    for (auto &[addr, a] : liveAtPeak)
      run.atPeak.push_back({a.first, a.second});
    std::sort(run.atPeak.begin(), run.atPeak.end(), [](const MeasuredRun::Allocation &a, const MeasuredRun::Allocation &b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.op < b.op;
    });
    if (run.atPeak.size() > 10)
      run.atPeak.resize(10);
  }

  // GPU kernels: NCCL's against the rest, HTA's way (hidden / communication).
  Intervals comm, compute;
  for (const Event &e : events)
    if (e.ph == 'X' && e.cat == "kernel" && inStep(e))
      (llvm::StringRef(e.name).lower().find("nccl") != std::string::npos ? comm : compute).v.push_back({e.ts, e.ts + e.dur});
  comm.merge();
  compute.merge();
  if (!comm.v.empty()) {
    run.hasComm = true;
    run.commSeconds = comm.length() * 1e-6;
    run.hiddenCommSeconds = comm.overlap(compute) * 1e-6;
  }
  run.computeSeconds = compute.length() * 1e-6;
  return run;
}

}  // namespace graphlint
