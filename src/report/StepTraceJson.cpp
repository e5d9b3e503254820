// `--emit-trace FILE.json` (docs/viewers.md): the predicted step trace as
// torch.profiler's Chrome trace JSON (Kineto's layout): one process per rank
// holding the GPU streams as threads (compute on stream 7, collectives on
// stream 20, named as NCCL names its kernels so that trace tools classify
// them), a CPU thread with the ProfilerStep#0 annotation and one
// cudaLaunchKernel per kernel (correlation ids link them), `distributedInfo`
// and counter tracks for the allocated and reserved bytes. Times are
// microseconds with nanosecond decimals. Events on one track never partly
// overlap, so Perfetto and chrome://tracing nest them.
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace graphlint {

namespace {

constexpr int kComputeStream = 7, kCommStream = 20, kCpuThread = 1;

// Microseconds, rounded to the nanosecond as Kineto writes them.
double us(double seconds) { return std::round(seconds * 1e9) / 1e3; }

std::string ncclKernelName(const StepTrace::Collective &c) {
  std::string k = c.kind == "all_reduce"       ? "AllReduce"
                  : c.kind == "reduce_scatter" ? "ReduceScatter"
                  : c.kind == "all_gather"     ? "AllGather"
                                               : c.kind;
  std::string algo = c.algorithm == "tree" ? "TREE" : "RING";
  return fmt::format("ncclDevKernel_{}_Sum_f32_{}_LL(ncclDevKernelArgsStorage<4096ul>)", k, algo);
}

struct Launch {
  double ts = 0;
  uint64_t correlation = 0, externalId = 0;
};

}  // namespace

void renderStepTrace(const StepTrace &t, const std::string &title, llvm::raw_ostream &os) {
  const int pid = static_cast<int>(t.rank);
  const int cpuPid = 1000 + static_cast<int>(t.rank);
  llvm::json::OStream j(os);
  std::vector<Launch> launches;
  uint64_t next = 1;
  auto meta = [&](const char *name, int p, int tid, const std::string &value, int sort) {
    j.object([&] {
      j.attribute("ph", "M");
      j.attribute("name", name);
      j.attribute("pid", p);
      j.attribute("tid", tid);
      j.attributeObject("args", [&] { j.attribute("name", value); });
    });
    j.object([&] {
      j.attribute("ph", "M");
      j.attribute("name", std::string(name) == "process_name" ? "process_sort_index" : "thread_sort_index");
      j.attribute("pid", p);
      j.attribute("tid", tid);
      j.attributeObject("args", [&] { j.attribute("sort_index", sort); });
    });
  };
  j.object([&] {
    j.attribute("schemaVersion", 1);
    j.attributeObject("distributedInfo", [&] {
      j.attribute("backend", "nccl");
      j.attribute("rank", static_cast<int64_t>(t.rank));
      j.attribute("world_size", static_cast<int64_t>(t.worldSize));
    });
    j.attributeArray("deviceProperties", [&] {
      j.object([&] {
        j.attribute("id", 0);
        j.attribute("name", t.target);
      });
    });
    j.attribute("displayTimeUnit", "ms");
    j.attributeObject("graphlint", [&] {
      j.attribute("predicted", true);
      j.attribute("model", title);
      j.attribute("train", t.train);
      j.attribute("step_seconds", t.stepSeconds);
      j.attribute("forward_seconds", t.forwardSeconds);
      j.attribute("backward_seconds", t.backwardSeconds);
      j.attribute("optimizer_seconds", t.optimizerSeconds);
      j.attribute("comm_seconds", t.commSeconds);
      j.attribute("exposed_comm_seconds", t.exposedSeconds);
      j.attribute("overlap_ratio", t.overlapRatio);
      j.attributeArray("caveats", [&] {
        for (const std::string &c : t.caveats)
          j.value(c);
      });
    });
    j.attributeArray("traceEvents", [&] {
      meta("process_name", pid, 0, fmt::format("GPU {} (rank {}, predicted by graphlint)", t.rank, t.rank), pid);
      meta("thread_name", pid, kComputeStream, fmt::format("stream {} (compute)", kComputeStream), 0);
      if (!t.collectives.empty())
        meta("thread_name", pid, kCommStream, fmt::format("stream {} (nccl)", kCommStream), 1);
      meta("process_name", cpuPid, 0, fmt::format("rank {} host (predicted by graphlint)", t.rank), 100 + pid);
      meta("thread_name", cpuPid, kCpuThread, "python main thread", 0);
      auto kernel = [&](const std::string &name, int stream, double start, double seconds,
                        const std::function<void()> &args) {
        uint64_t id = next++;
        launches.push_back({us(start), id, id});
        j.object([&] {
          j.attribute("ph", "X");
          j.attribute("cat", "kernel");
          j.attribute("name", name);
          j.attribute("pid", pid);
          j.attribute("tid", stream);
          j.attribute("ts", us(start));
          j.attribute("dur", us(start + seconds) - us(start));
          j.attributeObject("args", [&] {
            j.attribute("External id", static_cast<int64_t>(id));
            j.attribute("correlation", static_cast<int64_t>(id));
            j.attribute("device", 0);
            j.attribute("stream", stream);
            args();
          });
        });
      };
      for (const StepTrace::Kernel &k : t.kernels)
        kernel(k.name, kComputeStream, k.startSeconds, k.seconds, [&] {
          j.attribute("fusion group", static_cast<int64_t>(k.groupId));
          j.attribute("group kind", k.groupKind);
          j.attribute("op", k.ops);
          j.attribute("source", k.source);
          j.attribute("module", k.module);
          j.attribute("phase", k.phase);
          j.attribute("flops", k.flops);
          j.attribute("bytes", k.bytes);
        });
      if (t.train && t.optimizerSeconds > 0)
        kernel("Optimizer.step (fused)", kComputeStream, t.optimizerStartSeconds, t.optimizerSeconds,
               [&] { j.attribute("phase", "optimizer"); });
      for (const StepTrace::Collective &c : t.collectives)
        kernel(ncclKernelName(c), kCommStream, c.startSeconds, c.endSeconds - c.startSeconds, [&] {
          j.attribute("Collective name", c.kind);
          j.attribute("algorithm", c.algorithm);
          j.attribute("phase", c.phase);
          j.attribute("In msg nelems", static_cast<int64_t>(c.bytes / 4));
          j.attribute("Out msg nelems", static_cast<int64_t>(c.bytes / 4));
          j.attribute("bytes", c.bytes);
          j.attribute("dtype", "Float");
          j.attribute("Process Group Name", c.group);
          j.attribute("Group size", static_cast<int64_t>(c.ranks));
        });
      // The host: the step annotation, and each launch inside it, one after
      // another (a launch lasts until the next one, at most 1 us). Kernels on
      // two streams can start together: the later launch then starts when the
      // one before it ends, 1 ns on, since an event of no duration at the
      // start of another is misread by viewers that turn complete events into
      // begin/end pairs (speedscope: tests/viewers/trace_viewer_chromium_test.py).
      double stepUs = us(t.stepSeconds);
      j.object([&] {
        j.attribute("ph", "X");
        j.attribute("cat", "user_annotation");
        j.attribute("name", "ProfilerStep#0");
        j.attribute("pid", cpuPid);
        j.attribute("tid", kCpuThread);
        j.attribute("ts", 0.0);
        j.attribute("dur", stepUs);
        j.attributeObject("args", [&] { j.attribute("External id", static_cast<int64_t>(0)); });
      });
      std::stable_sort(launches.begin(), launches.end(), [](const Launch &a, const Launch &b) { return a.ts < b.ts; });
      const double oneNs = 1e-3;
      double free = 0;  // where the host is free to launch again
      for (size_t i = 0; i < launches.size(); ++i) {
        const Launch &l = launches[i];
        double start = std::max(l.ts, free);
        double next = i + 1 < launches.size() ? launches[i + 1].ts : stepUs;
        double end = std::min({start + 1.0, std::max(next, start + oneNs), stepUs});
        free = end;
        j.object([&] {
          j.attribute("ph", "X");
          j.attribute("cat", "cuda_runtime");
          j.attribute("name", "cudaLaunchKernel");
          j.attribute("pid", cpuPid);
          j.attribute("tid", kCpuThread);
          // Not rounded: a viewer's ts + dur then gives back exactly the next
          // launch's ts (Sterbenz), so that back-to-back launches do not overlap.
          j.attribute("ts", start);
          j.attribute("dur", std::max(0.0, end - start));
          j.attributeObject("args", [&] {
            j.attribute("External id", static_cast<int64_t>(l.externalId));
            j.attribute("correlation", static_cast<int64_t>(l.correlation));
          });
        });
      }
      for (const StepTrace::Counter &c : t.memory)
        j.object([&] {
          j.attribute("ph", "C");
          j.attribute("name", "GPU memory");
          j.attribute("pid", pid);
          j.attribute("tid", 0);
          j.attribute("ts", us(c.seconds));
          j.attributeObject("args", [&] {
            j.attribute("allocated", static_cast<int64_t>(c.allocated));
            j.attribute("reserved", static_cast<int64_t>(c.reserved));
          });
        });
    });
  });
  os << "\n";
}

}  // namespace graphlint
