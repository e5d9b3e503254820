// Inductor-CPU's schedule, rebuilt from the plan (InductorCpuLaunches.h). The
// rules follow torch/_inductor (2.13/2.14): kernel/conv.py (channels-last
// operands under layout optimisation, always on for mkldnn CPU graphs with a
// convolution), scheduler.py (flush before every extern call; horizontal
// fusion of nodes that share a read), memory.py (reorder_for_peak_memory:
// baseline, LPMF, BFS and DFS orders, the least estimated peak wins, ties to
// the earlier method; graph inputs named arg*/primals_* are not freeable).
#include "InductorCpuLaunches.h"

#include <llvm/ADT/STLExtras.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <queue>

namespace graphlint::fusion_detail {

bool contiguousIsChannelsLast(const Shape &s) {
  if (!s.rankKnown || s.rank() != 4)
    return true;  // only 2-D convolutions are converted
  int64_t d[4];
  for (int i = 0; i < 4; ++i)
    d[i] = s.dims[i].isStatic() ? std::max<int64_t>(s.dims[i].value, 1) : 2;
  const int64_t stride[4] = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  int64_t prev = 0;
  for (int dim : {1, 3, 2, 0}) {  // channels-last, innermost first: C, W, H, N
    if (d[dim] == 1)
      continue;
    if (stride[dim] < prev)
      return false;
    prev = stride[dim];
  }
  return true;
}

namespace {

struct SNode {
  int64_t order = 0;     // creation order: the lowering realises a C++ group at its last node
  bool library = false;  // an extern call: flushes the open C++ function
  int group = -1;        // -1: a layout copy
  unsigned conv = 0;     // copy: the group of the first convolution it feeds
  std::vector<unsigned> deps, succs, reads, writes;
  uint64_t size = 0;     // bytes it allocates
};

struct Buffer {
  uint64_t bytes = 0;  // 0 for graph inputs and parameters: not freeable
  bool output = false;
  std::vector<unsigned> readers;
};

bool isLibraryKind(GroupKind k) { return k != GroupKind::Pointwise && k != GroupKind::Reduction; }

bool isConv2d(const Node &n) {
  if (n.atenName() != "convolution" && n.opType != "Conv" && n.opType != "ConvTranspose")
    return false;
  return n.inputs.size() > 1 && n.inputs[1] && n.inputs[1]->type.shape.rankKnown &&
         n.inputs[1]->type.shape.rank() == 4;
}

bool isConcat(const Node &n) { return n.atenName() == "cat" || n.opType == "Concat"; }

class Scheduler {
public:
  Scheduler(const Graph &g, const std::vector<FusionGroup> &groups, const llvm::DenseMap<const Node *, unsigned> &gi)
      : g_(g), groups_(groups), groupIndex_(gi) {}

  InductorCpuLaunches run();

private:
  using Source = std::pair<const Value *, int>;  // the buffer, its group (-1: graph input/param)
  const std::vector<Source> &sources(const Value *v, unsigned depth = 0);
  unsigned buffer(const Value *v, int group);
  void addRead(unsigned s, unsigned b);
  void build();
  std::vector<unsigned> baseline() const;
  std::vector<unsigned> bfs(const std::vector<unsigned> &index) const;
  std::vector<unsigned> dfs(const std::vector<unsigned> &index) const;
  std::vector<unsigned> lpmf(const std::vector<unsigned> &index) const;
  uint64_t peak(const std::vector<unsigned> &order) const;

  const Graph &g_;
  const std::vector<FusionGroup> &groups_;
  const llvm::DenseMap<const Node *, unsigned> &groupIndex_;
  std::vector<SNode> nodes_;
  std::vector<Buffer> bufs_;
  llvm::DenseMap<unsigned, unsigned> snodeOfGroup_;
  llvm::DenseMap<const Value *, unsigned> bufOf_;
  llvm::DenseMap<const Value *, std::vector<Source>> memo_;
  llvm::DenseMap<unsigned, unsigned> copiesOf_;
};

const std::vector<Scheduler::Source> &Scheduler::sources(const Value *v, unsigned depth) {
  auto it = memo_.find(v);
  if (it != memo_.end())
    return it->second;
  std::vector<Source> out;
  if (v && v->kind == Value::Kind::NodeOutput && v->producer && v->producer->graph == &g_) {
    unsigned gid = groupIndex_.lookup(v->producer);
    if (snodeOfGroup_.count(gid)) {
      out.push_back({v, static_cast<int>(gid)});
    } else if (depth < 64) {  // a view or host value: look through it
      for (const Value *in : v->producer->inputs)
        for (const Source &s : sources(in, depth + 1))
          if (!llvm::is_contained(out, s))
            out.push_back(s);
    }
  } else if (v && v->kind != Value::Kind::Missing) {
    out.push_back({v, -1});
  }
  return memo_[v] = std::move(out);
}

unsigned Scheduler::buffer(const Value *v, int group) {
  auto [it, fresh] = bufOf_.try_emplace(v, static_cast<unsigned>(bufs_.size()));
  if (fresh) {
    Buffer b;
    if (group >= 0) {
      b.bytes = v->type.byteSize().value_or(0);
      unsigned w = snodeOfGroup_.lookup(static_cast<unsigned>(group));
      nodes_[w].writes.push_back(it->second);
      nodes_[w].size += b.bytes;
    }
    bufs_.push_back(std::move(b));
  }
  return it->second;
}

void Scheduler::addRead(unsigned s, unsigned b) {
  if (!llvm::is_contained(nodes_[s].reads, b)) {
    nodes_[s].reads.push_back(b);
    bufs_[b].readers.push_back(s);
  }
}

void Scheduler::build() {
  for (const FusionGroup &grp : groups_) {
    if (grp.graph != &g_ || grp.kernels == 0 || grp.nodes.empty())
      continue;
    SNode s;
    s.group = static_cast<int>(grp.id);
    s.library = isLibraryKind(grp.kind);
    unsigned lo = grp.nodes.front()->index, hi = lo;
    for (const Node *n : grp.nodes)
      lo = std::min(lo, n->index), hi = std::max(hi, n->index);
    // A library call is created at its node; a C++ group's buffer when its
    // last node is lowered (pointwise values are realised lazily).
    s.order = 2 * static_cast<int64_t>(s.library ? lo : hi);
    snodeOfGroup_[grp.id] = static_cast<unsigned>(nodes_.size());
    nodes_.push_back(std::move(s));
  }
  auto depend = [&](unsigned s, unsigned on) {
    if (s != on && !llvm::is_contained(nodes_[s].deps, on)) {
      nodes_[s].deps.push_back(on);
      nodes_[on].succs.push_back(s);
    }
  };
  for (unsigned s = 0, e = static_cast<unsigned>(nodes_.size()); s < e; ++s) {
    const FusionGroup &grp = groups_[static_cast<unsigned>(nodes_[s].group)];
    for (const Node *n : grp.nodes)
      for (const Value *in : n->inputs)
        for (const Source &src : std::vector<Source>(sources(in)))
          if (src.second != nodes_[s].group) {
            addRead(s, buffer(src.first, src.second));
            if (src.second >= 0)
              depend(s, snodeOfGroup_.lookup(static_cast<unsigned>(src.second)));
          }
  }
  for (const Value *out : g_.outputs)
    for (const Source &src : std::vector<Source>(sources(out))) {
      unsigned b = buffer(src.first, src.second);
      // A convolution's channels-last result leaves the graph in the strides
      // eager PyTorch would give it (config.keep_output_stride): a copy.
      const Node *p = src.second >= 0 ? src.first->producer : nullptr;
      if (p && isConv2d(*p) && out->type.shape.rankKnown && out->type.shape.rank() == 4 &&
          !contiguousIsChannelsLast(out->type.shape)) {
        SNode c;  // made when the node returning it is lowered (graph.py run_node)
        c.order = 2 * static_cast<int64_t>(out->producer ? out->producer->index : p->index) + 1;
        c.conv = static_cast<unsigned>(src.second);
        Buffer copy;
        copy.bytes = out->type.byteSize().value_or(0);
        copy.output = true;
        c.writes.push_back(static_cast<unsigned>(bufs_.size()));
        c.size = copy.bytes;
        bufs_.push_back(std::move(copy));
        unsigned cs = static_cast<unsigned>(nodes_.size());
        nodes_.push_back(std::move(c));
        addRead(cs, b);
        depend(cs, snodeOfGroup_.lookup(static_cast<unsigned>(src.second)));
        ++copiesOf_[static_cast<unsigned>(src.second)];
        continue;
      }
      bufs_[b].output = true;
    }

  // Channels-last copies of convolution operands, one per source tensor: the
  // scheduler fuses copies that read the same tensor (a weight shared by the
  // heads of several FPN levels, a concat read by several branches).
  llvm::DenseMap<const Value *, unsigned> copyOf;
  // The scheduler fuses two nodes only within 64 positions of each other in
  // creation order (are_long_distant_nodes): a copy's position is its
  // convolution's rank among the groups plus the copies made before it.
  std::vector<int64_t> keys;
  for (const SNode &sn : nodes_)
    keys.push_back(sn.order);
  std::sort(keys.begin(), keys.end());
  llvm::DenseMap<unsigned, std::pair<int64_t, int64_t>> span;  // copy -> first, last position
  int64_t copiesSoFar = 0;  // each convolution's copy is a node before fusion, shared or not
  for (const auto &np : g_.nodes()) {
    const Node &n = *np;
    auto cs = snodeOfGroup_.find(groupIndex_.lookup(&n));
    if (!isConv2d(n) || cs == snodeOfGroup_.end() || !nodes_[cs->second].library)
      continue;
    for (unsigned operandIdx : {0u, 1u}) {
      const Value *operand = n.inputs[operandIdx];
      const std::vector<Source> srcs = operand ? sources(operand) : std::vector<Source>{};
      if (srcs.size() != 1 || contiguousIsChannelsLast(operand->type.shape))
        continue;
      auto [src, sg] = srcs.front();
      // Graph inputs and parameters have fixed contiguous layouts; a concat's
      // buffer and a non-convolution library call's output are contiguous; a
      // convolution's output is channels-last and a C++ group's layout is
      // still free, so the lowering fixes it to channels-last without a copy.
      bool fixedContiguous = sg < 0;
      if (sg >= 0 && src->producer)
        fixedContiguous = isConcat(*src->producer) ||
                          (isLibraryKind(groups_[static_cast<unsigned>(sg)].kind) && !isConv2d(*src->producer));
      if (!fixedContiguous)
        continue;
      int64_t pos = (std::lower_bound(keys.begin(), keys.end(), nodes_[cs->second].order) - keys.begin()) +
                    copiesSoFar++;
      auto [it, fresh] = copyOf.try_emplace(src, static_cast<unsigned>(nodes_.size()));
      if (!fresh) {
        auto &[first, last] = span[it->second];
        if (std::max(std::abs(first - pos), std::abs(pos - last)) > 64)
          fresh = true, it->second = static_cast<unsigned>(nodes_.size());  // too far: a copy of its own
        else
          last = std::max(last, pos);
      }
      if (fresh) {
        span[it->second] = {pos, pos};
        SNode c;
        c.order = 2 * static_cast<int64_t>(n.index) - 1;
        c.conv = static_cast<unsigned>(nodes_[cs->second].group);
        nodes_.push_back(std::move(c));
        addRead(it->second, buffer(src, sg));
        if (sg >= 0)
          depend(it->second, snodeOfGroup_.lookup(static_cast<unsigned>(sg)));
        ++copiesOf_[nodes_[it->second].conv];
      }
      // Each convolution gets its own copy buffer (the fused node writes one
      // per reader), so each frees its own when it runs: the peak-memory
      // orders see that, and interleave the FPN levels around a shared weight.
      Buffer copy;
      copy.bytes = operand->type.byteSize().value_or(0);
      nodes_[it->second].writes.push_back(static_cast<unsigned>(bufs_.size()));
      nodes_[it->second].size += copy.bytes;
      bufs_.push_back(std::move(copy));
      depend(cs->second, it->second);
      addRead(cs->second, nodes_[it->second].writes.back());
    }
  }
}

// Visits `roots` in order, each node's dependencies first (sorted by `less`),
// iteratively: graphs of 10^5 nodes would overflow the stack.
template <typename Less> std::vector<unsigned> depsFirst(const std::vector<SNode> &nodes,
                                                         const std::vector<unsigned> &roots, Less less) {
  std::vector<char> seen(nodes.size(), 0);
  std::vector<unsigned> out;
  for (unsigned root : roots) {
    std::vector<std::pair<unsigned, size_t>> stack;
    if (!seen[root])
      stack.push_back({root, 0}), seen[root] = 1;
    while (!stack.empty()) {
      auto &[s, next] = stack.back();
      std::vector<unsigned> deps = nodes[s].deps;
      std::sort(deps.begin(), deps.end(), less);
      if (next < deps.size()) {
        unsigned d = deps[next++];
        if (!seen[d])
          seen[d] = 1, stack.push_back({d, 0});
        continue;
      }
      out.push_back(s);
      stack.pop_back();
    }
  }
  return out;
}

// scheduler.py topological_sort_schedule: creation order, dependencies first.
std::vector<unsigned> Scheduler::baseline() const {
  auto earlier = [&](unsigned a, unsigned b) { return nodes_[a].order < nodes_[b].order; };
  std::vector<unsigned> byOrder(nodes_.size());
  std::iota(byOrder.begin(), byOrder.end(), 0u);
  std::stable_sort(byOrder.begin(), byOrder.end(), earlier);
  return depsFirst(nodes_, byOrder, earlier);
}

// memory.py topological_sort_bfs: the ready node whose predecessors ran earliest.
std::vector<unsigned> Scheduler::bfs(const std::vector<unsigned> &index) const {
  std::vector<int64_t> ran(nodes_.size(), -1);
  std::vector<size_t> indeg(nodes_.size());
  using Entry = std::pair<std::vector<int64_t>, unsigned>;  // priority, baseline index
  auto later = [](const Entry &a, const Entry &b) { return a.first != b.first ? a.first > b.first : a.second > b.second; };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> ready(later);
  auto push = [&](unsigned s) {
    std::vector<int64_t> p;
    for (unsigned d : nodes_[s].deps)
      p.push_back(ran[d]);
    std::sort(p.begin(), p.end());
    ready.push({std::move(p), index[s]});
  };
  std::vector<unsigned> byIndex(nodes_.size());
  for (unsigned s = 0; s < nodes_.size(); ++s)
    byIndex[index[s]] = s;
  for (unsigned s = 0; s < nodes_.size(); ++s)
    if ((indeg[s] = nodes_[s].deps.size()) == 0)
      push(s);
  std::vector<unsigned> out;
  while (!ready.empty()) {
    unsigned s = byIndex[ready.top().second];
    ready.pop();
    ran[s] = static_cast<int64_t>(out.size());
    out.push_back(s);
    for (unsigned t : nodes_[s].succs)
      if (--indeg[t] == 0)
        push(t);
  }
  return out;
}

// memory.py topological_sort_dfs: visit by (bytes written + bytes read, index).
std::vector<unsigned> Scheduler::dfs(const std::vector<unsigned> &index) const {
  std::vector<uint64_t> weight(nodes_.size());
  for (unsigned s = 0; s < nodes_.size(); ++s) {
    weight[s] = nodes_[s].size;
    for (unsigned b : nodes_[s].reads)
      weight[s] += bufs_[b].bytes;
  }
  auto lighter = [&](unsigned a, unsigned b) { return std::tie(weight[a], index[a]) < std::tie(weight[b], index[b]); };
  std::vector<unsigned> roots(nodes_.size());
  std::iota(roots.begin(), roots.end(), 0u);
  std::sort(roots.begin(), roots.end(), lighter);
  return depsFirst(nodes_, roots, lighter);
}

// memory.py topological_sort_lpmf: least peak memory first.
std::vector<unsigned> Scheduler::lpmf(const std::vector<unsigned> &index) const {
  std::vector<size_t> indeg(nodes_.size()), outdeg(bufs_.size());
  std::vector<uint64_t> toFree(nodes_.size(), 0);
  for (unsigned b = 0; b < bufs_.size(); ++b)
    outdeg[b] = bufs_[b].readers.size() + (bufs_[b].output ? 1 : 0);
  uint64_t live = 0, maxMem = 0;
  for (const Buffer &b : bufs_)
    if (b.output)
      maxMem += b.bytes;
  uint64_t gap = maxMem - live;
  std::vector<unsigned> ready;
  for (unsigned s = 0; s < nodes_.size(); ++s) {
    for (unsigned b : nodes_[s].reads)
      if (outdeg[b] == 1)
        toFree[s] += bufs_[b].bytes;
    for (unsigned b : nodes_[s].writes)
      if (outdeg[b] == 0)
        toFree[s] += bufs_[b].bytes;
    if ((indeg[s] = nodes_[s].deps.size()) == 0)
      ready.push_back(s);
  }
  std::vector<unsigned> out;
  while (!ready.empty()) {
    auto key = [&](unsigned s) {
      int64_t size = static_cast<int64_t>(nodes_[s].size);
      return std::make_tuple(nodes_[s].size > gap ? size : 0, size - static_cast<int64_t>(toFree[s]), index[s]);
    };
    auto best = std::min_element(ready.begin(), ready.end(), [&](unsigned a, unsigned b) { return key(a) < key(b); });
    unsigned s = *best;
    ready.erase(best);
    out.push_back(s);
    live += nodes_[s].size;
    maxMem = std::max(maxMem, live);
    live -= std::min(live, toFree[s]);
    gap = maxMem - live;
    for (unsigned t : nodes_[s].succs)
      if (--indeg[t] == 0)
        ready.push_back(t);
    for (unsigned b : nodes_[s].reads)
      if (--outdeg[b] == 1)
        for (unsigned r : bufs_[b].readers)
          toFree[r] += bufs_[b].bytes;
  }
  return out;
}

// memory.py estimate_peak_memory: a buffer lives from its writer's step to
// its last reader's (graph outputs to the end).
uint64_t Scheduler::peak(const std::vector<unsigned> &order) const {
  std::vector<unsigned> step(nodes_.size());
  for (unsigned i = 0; i < order.size(); ++i)
    step[order[i]] = i;
  std::vector<uint64_t> alloc(order.size(), 0), freed(order.size(), 0);
  for (unsigned s = 0; s < nodes_.size(); ++s)
    for (unsigned b : nodes_[s].writes) {
      alloc[step[s]] += bufs_[b].bytes;
      if (bufs_[b].output)
        continue;
      unsigned last = step[s];
      for (unsigned r : bufs_[b].readers)
        last = std::max(last, step[r]);
      freed[last] += bufs_[b].bytes;
    }
  uint64_t cur = 0, top = 0;
  for (unsigned i = 0; i < order.size(); ++i) {
    cur += alloc[i];
    top = std::max(top, cur);
    cur -= std::min(cur, freed[i]);
  }
  return top;
}

InductorCpuLaunches Scheduler::run() {
  build();
  InductorCpuLaunches out;
  for (auto [gid, n] : copiesOf_)
    out.layoutCopiesOf[gid] = n;
  if (nodes_.empty())
    return out;
  std::vector<unsigned> base = baseline();
  std::vector<unsigned> index(nodes_.size());
  for (unsigned i = 0; i < base.size(); ++i)
    index[base[i]] = i;
  std::vector<std::pair<const char *, std::vector<unsigned>>> orders;
  orders.push_back({"baseline", std::move(base)});
  // LPMF scans the ready set at every step: quadratic on very wide graphs.
  if (nodes_.size() <= 20000)
    orders.push_back({"lpmf", lpmf(index)});
  orders.push_back({"bfs", bfs(index)});
  orders.push_back({"dfs", dfs(index)});
  size_t best = 0;
  uint64_t bestPeak = UINT64_MAX;
  for (size_t i = 0; i < orders.size(); ++i) {
    if (orders[i].second.size() != nodes_.size())
      continue;  // (a cycle would leave nodes out: never the choice)
    uint64_t p = peak(orders[i].second);
    if (p < bestPeak)
      bestPeak = p, best = i;
  }
  out.order = orders[best].first;
  // Runs of C++ groups between library calls are one C++ function each.
  std::optional<unsigned> open;      // the launch of the open C++ function
  std::optional<unsigned> copyOnly;  // an open function holding copies only: the conv it is charged to
  for (unsigned s : orders[best].second) {
    const SNode &n = nodes_[s];
    if (n.library) {
      if (copyOnly)
        ++out.copyOnlyLaunchesOf[*copyOnly];
      open.reset(), copyOnly.reset();
      out.launchOf[static_cast<unsigned>(n.group)] = static_cast<unsigned>(n.group);
    } else if (n.group < 0) {
      if (!open && !copyOnly)
        copyOnly = n.conv;
    } else {
      if (!open)
        open = static_cast<unsigned>(n.group);
      copyOnly.reset();  // the copies share this group's function
      out.launchOf[static_cast<unsigned>(n.group)] = *open;
    }
  }
  if (copyOnly)
    ++out.copyOnlyLaunchesOf[*copyOnly];
  return out;
}

}  // namespace

InductorCpuLaunches scheduleInductorCpu(const Graph &g, const std::vector<FusionGroup> &groups,
                                        const llvm::DenseMap<const Node *, unsigned> &groupIndex) {
  return Scheduler(g, groups, groupIndex).run();
}

void assignInductorCpuLaunches(const Graph &g, std::vector<FusionGroup> &groups,
                               const llvm::DenseMap<const Node *, unsigned> &groupIndex) {
  InductorCpuLaunches l = scheduleInductorCpu(g, groups, groupIndex);
  for (auto [gid, launch] : l.launchOf) {
    groups[gid].launch = launch;
    if (launch != gid)
      groups[gid].kernels = 0;  // its loop nest runs inside the launch's C++ function
  }
  for (auto [gid, n] : l.layoutCopiesOf)
    groups[gid].layoutCopies = n;
  for (auto [gid, n] : l.copyOnlyLaunchesOf)
    groups[gid].kernels += n;
}

}  // namespace graphlint::fusion_detail
