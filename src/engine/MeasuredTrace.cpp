// Reads a measured torch.profiler trace (Kineto's Chrome trace JSON, plain or
// gzipped) into a MeasuredRun (RunComparison.h): the step (the last
// ProfilerStep#N or the annotation --step names), its phases (the autograd
// engine's evaluate_function events are the backward, `Optimizer.step#...`
// record_functions the optimizer, what runs before the backward the
// forward), every cpu_op with the one enclosing it, the `[memory]` events of
// profile_memory=True, and the device's kernels: each one's time charged to
// the ops that launched it (the launch's correlation id), NCCL's split from
// the rest. A folder is one trace per rank (HTA's layout).
#include "graphlint/engine/RunComparison.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <zlib.h>

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
  int64_t correlation = -1;  // a launch's or a device event's (args.correlation)
  const llvm::json::Object *args = nullptr;
};

// What the device ran: kernels, copies and fills (Kineto's categories).
bool onDevice(const Event &e) { return e.cat == "kernel" || e.cat == "gpu_memcpy" || e.cat == "gpu_memset"; }
bool isNccl(const Event &e) { return llvm::StringRef(e.name).lower().find("nccl") != std::string::npos; }

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
  /// After merge(): whether `t` lies in one of the intervals.
  bool contains(double t) const {
    auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(t, 1e300));
    return it != v.begin() && t < std::prev(it)->second;
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

// The whole gzip stream of `in`, at most kMaxTraceBytes of it.
constexpr uint64_t kMaxTraceBytes = uint64_t(4) << 30;
llvm::Expected<std::string> gunzip(const std::string &path, llvm::StringRef in) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK)  // 32: a gzip or zlib header
    return traceError(path, "zlib could not start");
  std::string out;
  std::vector<char> chunk(1 << 16);
  size_t fed = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0 && fed < in.size()) {
      size_t n = std::min<size_t>(in.size() - fed, 1u << 30);
      z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data() + fed));
      z.avail_in = static_cast<uInt>(n);
      fed += n;
    }
    z.next_out = reinterpret_cast<Bytef *>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      return traceError(path, rc == Z_BUF_ERROR ? "a gzip file that ends early" : "not a valid gzip stream");
    }
    out.append(chunk.data(), chunk.size() - z.avail_out);
    if (out.size() > kMaxTraceBytes) {
      inflateEnd(&z);
      return traceError(path, "decompresses to more than 4 GiB");
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace

llvm::Expected<MeasuredRun> readMeasuredTrace(const std::string &path, const TraceOptions &opts) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return traceError(path, buf.getError().message());
  llvm::StringRef text = (*buf)->getBuffer();
  std::string inflated;
  if (text.startswith("\x1f\x8b")) {
    auto out = gunzip(path, text);
    if (!out)
      return out.takeError();
    inflated = std::move(*out);
    text = inflated;
  }
  auto parsed = llvm::json::parse(text);
  if (!parsed)
    return traceError(path, "not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Array *raw = nullptr;
  const llvm::json::Object *root = parsed->getAsObject();
  if (root)
    raw = root->getArray("traceEvents");
  else
    raw = parsed->getAsArray();
  if (!raw)
    return traceError(path, "no traceEvents: not a Chrome trace");

  MeasuredRun run;
  run.path = path;
  if (root) {
    if (const llvm::json::Object *dist = root->getObject("distributedInfo")) {
      run.rank = static_cast<int>(dist->getInteger("rank").getValueOr(-1));
      run.worldSize = static_cast<int>(dist->getInteger("world_size").getValueOr(0));
    }
    if (const llvm::json::Array *props = root->getArray("deviceProperties"))
      if (!props->empty())
        if (const llvm::json::Object *first = props->front().getAsObject())
          run.deviceName = first->getString("name").getValueOr("").str();
  }

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
    e.dur = std::max(0.0, o->getNumber("dur").getValueOr(0));
    e.pid = idOf(o->get("pid"));
    e.tid = idOf(o->get("tid"));
    e.args = o->getObject("args");
    if (e.args)
      if (const llvm::json::Value *c = e.args->get("correlation"))
        e.correlation = idOf(c);
    events.push_back(std::move(e));
  }

  // The step: the last host event named --step (default the last
  // ProfilerStep#N: the others are warm-up) that holds an op (the profiler
  // may stop inside an empty last step). Kineto copies the step annotations
  // onto the device (gpu_user_annotation); those are not it.
  std::vector<double> opStarts;
  for (const Event &e : events)
    if (e.ph == 'X' && e.cat == "cpu_op")
      opStarts.push_back(e.ts);
  std::sort(opStarts.begin(), opStarts.end());
  auto holdsOp = [&](const Event &e) {
    auto it = std::lower_bound(opStarts.begin(), opStarts.end(), e.ts);
    return it != opStarts.end() && *it <= e.ts + e.dur;
  };
  double lo = -1e300, hi = 1e300;
  bool named = false;
  for (const Event &e : events) {
    if (e.ph != 'X' || onDevice(e) || e.cat == "gpu_user_annotation")
      continue;
    llvm::StringRef n(e.name);
    if (!(opts.step.empty() ? n.startswith("ProfilerStep#") : n.contains(opts.step)))
      continue;
    named = true;
    if ((!run.hasStep || e.ts >= lo) && (opStarts.empty() || holdsOp(e))) {
      run.hasStep = true;
      run.stepName = e.name;
      lo = e.ts;
      hi = e.ts + e.dur;
    }
  }
  if (!opts.step.empty() && !named)
    return traceError(path, "no event named '" + opts.step + "' (--step) in the trace");
  auto inStep = [&](double ts) { return ts >= lo && ts <= hi; };
  if (run.hasStep)
    run.stepSeconds = run.hostStepSeconds = (hi - lo) * 1e-6;

  // Phases, on the host.
  double bwdStart = 1e300, bwdEnd = -1e300, optStart = 1e300, firstOp = 1e300, lastOp = -1e300;
  Intervals backward, optimizer;
  for (const Event &e : events) {
    if (e.ph != 'X' || onDevice(e) || !inStep(e.ts))
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
      backward.v.push_back({e.ts, e.ts + e.dur});
    } else if (n.startswith("Optimizer.step#")) {
      run.hasOptimizer = true;
      run.optimizerSeconds += e.dur * 1e-6;
      optStart = std::min(optStart, e.ts);
    }
    // The optimizer's record_functions: its ops are the optimizer metric's,
    // not the graph's.
    if (n.startswith("Optimizer."))
      optimizer.v.push_back({e.ts, e.ts + e.dur});
  }
  backward.merge();
  optimizer.merge();
  if (!run.hasStep && firstOp <= lastOp) {
    lo = firstOp;
    hi = lastOp;
    run.stepSeconds = run.hostStepSeconds = (hi - lo) * 1e-6;
  }
  double forwardEnd = run.hasBackward ? bwdStart : run.hasOptimizer ? optStart : hi;
  run.forwardSeconds = std::max(0.0, forwardEnd - lo) * 1e-6;
  if (run.hasBackward)
    run.backwardSeconds = (bwdEnd - bwdStart) * 1e-6;

  // cpu_ops, launches and memory events per thread, in time order, with the
  // op enclosing each (a stack of open ops).
  std::map<std::pair<int64_t, int64_t>, std::vector<const Event *>> threads;
  std::vector<const Event *> memory;
  for (const Event &e : events) {
    if (!inStep(e.ts) || onDevice(e))
      continue;
    if (e.ph == 'X' && (e.cat == "cpu_op" || e.cat == "python_function" || e.correlation >= 0))
      threads[{e.pid, e.tid}].push_back(&e);
    else if (e.name == "[memory]") {
      threads[{e.pid, e.tid}].push_back(&e);
      memory.push_back(&e);
    }
  }
  std::unordered_map<const Event *, std::string> allocatedBy;
  std::unordered_map<int64_t, std::pair<int, double>> launches;  // correlation -> innermost op, launch time
  for (auto &[key, list] : threads) {
    std::stable_sort(list.begin(), list.end(), [](const Event *a, const Event *b) {
      return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
    });
    std::vector<std::pair<double, int>> open;    // end, index into run.ops
    std::vector<std::pair<double, int>> python;  // end, index into run.frames
    for (const Event *e : list) {
      bool op = e->ph == 'X' && e->cat == "cpu_op";
      while (!open.empty() && open.back().first <= e->ts && !(!op && open.back().first == e->ts))
        open.pop_back();
      while (!python.empty() && python.back().first <= e->ts)
        python.pop_back();
      if (e->cat == "python_function") {
        // "path/to/file.py(244): forward"; "nn.Module: X" and "<built-in ...>" have no line.
        llvm::StringRef n(e->name), path, rest;
        std::tie(path, rest) = n.split("): ");
        size_t open_ = path.rfind('(');
        unsigned line = 0;
        std::string key;
        if (!rest.empty() && open_ != llvm::StringRef::npos && !path.substr(open_ + 1).getAsInteger(10, line))
          key = functionKey(path.substr(0, open_), line, rest);
        run.frames.push_back({std::move(key), python.empty() ? -1 : python.back().second});
        python.push_back({e->ts + e->dur, static_cast<int>(run.frames.size() - 1)});
        continue;
      }
      if (!op) {
        if (e->correlation >= 0 && e->ph == 'X')
          launches[e->correlation] = {open.empty() ? -1 : open.back().second, e->ts};
        // The outermost op names what the user called (aten::conv2d, a
        // backward function), not the aten::empty inside it.
        else if (!open.empty())
          allocatedBy[e] = run.ops[static_cast<size_t>(open.front().second)].name;
        continue;
      }
      MeasuredRun::Op o{e->name,
                        (e->ts - lo) * 1e-6,
                        e->dur * 1e-6,
                        e->dur * 1e-6,
                        open.empty() ? -1 : open.back().second,
                        optimizer.contains(e->ts),
                        python.empty() ? -1 : python.back().second,
                        backward.contains(e->ts)};
      run.ops.push_back(o);
      open.push_back({e->ts + e->dur, static_cast<int>(run.ops.size() - 1)});
    }
  }

  // The device: each kernel, copy or fill launched in the step, charged to
  // the op that launched it and every op enclosing that one, and to the
  // phase its launch ran in. Without launch events (a trace of the device
  // alone) a device event counts when it starts in the step.
  Intervals comm, compute, phase[3];  // forward, backward, optimizer
  double first = 1e300, last = -1e300;
  std::vector<double> deviceSeconds(run.ops.size(), 0.0);
  for (const Event &e : events) {
    if (e.ph != 'X' || !onDevice(e))
      continue;
    auto launch = e.correlation >= 0 ? launches.find(e.correlation) : launches.end();
    if (launch == launches.end() && (!launches.empty() || !inStep(e.ts)))
      continue;
    double launchedAt = launch == launches.end() ? e.ts : launch->second.second;
    first = std::min(first, e.ts);
    last = std::max(last, e.ts + e.dur);
    if (e.cat == "kernel" && isNccl(e)) {
      comm.v.push_back({e.ts, e.ts + e.dur});
      continue;
    }
    compute.v.push_back({e.ts, e.ts + e.dur});
    int p = optimizer.contains(launchedAt) ? 2 : backward.contains(launchedAt) ? 1 : 0;
    phase[p].v.push_back({e.ts, e.ts + e.dur});
    for (int o = launch == launches.end() ? -1 : launch->second.first; o >= 0; o = run.ops[static_cast<size_t>(o)].parent)
      deviceSeconds[static_cast<size_t>(o)] += e.dur * 1e-6;
  }
  comm.merge();
  compute.merge();
  if (!comm.v.empty()) {
    run.hasComm = true;
    run.commSeconds = comm.length() * 1e-6;
    run.hiddenCommSeconds = comm.overlap(compute) * 1e-6;
  }
  run.computeSeconds = compute.length() * 1e-6;
  if (first <= last) {
    // A device run: what the device did, not how long the host took to ask.
    run.onDevice = true;
    run.stepSeconds = (last - first) * 1e-6;
    run.deviceBusySeconds = run.computeSeconds;
    for (Intervals &i : phase)
      i.merge();
    run.forwardSeconds = phase[0].length() * 1e-6;
    run.backwardSeconds = phase[1].length() * 1e-6;
    if (run.hasOptimizer)
      run.optimizerSeconds = phase[2].length() * 1e-6;
    for (size_t i = 0; i < run.ops.size(); ++i)
      run.ops[i].seconds = deviceSeconds[i];
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
  return run;
}

llvm::Expected<std::vector<MeasuredRun>> readMeasuredTraces(const std::string &path, const TraceOptions &opts) {
  std::vector<MeasuredRun> runs;
  if (!llvm::sys::fs::is_directory(path)) {
    auto one = readMeasuredTrace(path, opts);
    if (!one)
      return one.takeError();
    runs.push_back(std::move(*one));
    return runs;
  }
  // HTA's layout: one trace per rank in the folder.
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if ((name.endswith(".json") || name.endswith(".json.gz")) && llvm::sys::fs::is_regular_file(it->path()))
      files.push_back(it->path());
  }
  if (ec)
    return traceError(path, ec.message());
  if (files.empty())
    return traceError(path, "a folder with no .json or .json.gz trace in it");
  std::sort(files.begin(), files.end());
  for (const std::string &f : files) {
    auto one = readMeasuredTrace(f, opts);
    if (!one)
      return one.takeError();
    runs.push_back(std::move(*one));
  }
  std::stable_sort(runs.begin(), runs.end(), [](const MeasuredRun &a, const MeasuredRun &b) { return a.rank < b.rank; });
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].rank >= 0 && runs[i].rank == runs[i - 1].rank)
      return traceError(path, "two traces of rank " + std::to_string(runs[i].rank) + ": " + runs[i - 1].path +
                                  " and " + runs[i].path + " (one trace per rank)");
  return runs;
}

}  // namespace graphlint
