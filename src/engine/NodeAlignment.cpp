#include "graphlint/engine/NodeAlignment.h"

#include <llvm/ADT/DenseMap.h>

#include <algorithm>
#include <cstdlib>

namespace graphlint {

namespace {

using Pairs = std::vector<std::pair<unsigned, unsigned>>;

uint64_t fnv(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= 0xff;  // field separator
  h *= 1099511628211ull;
  return h;
}

// Myers' O((N+M)D) shortest edit script between a[a0,a1) and b[b0,b1),
// keeping each round's frontier for the walk back; false past maxEdits.
bool myers(const std::vector<uint64_t> &a, const std::vector<uint64_t> &b, unsigned a0, unsigned a1, unsigned b0,
           unsigned b1, unsigned maxEdits, Pairs &out) {
  const int n = static_cast<int>(a1 - a0), m = static_cast<int>(b1 - b0);
  const int max = std::min(n + m, static_cast<int>(maxEdits));
  const int off = max + 1;
  std::vector<int> v(2 * max + 3, 0);
  std::vector<std::vector<int>> trace;
  int found = -1;
  for (int d = 0; d <= max && found < 0; ++d) {
    trace.push_back(v);
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[a0 + x] == b[b0 + y])
        ++x, ++y;
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  if (found < 0)
    return false;
  // Walk back from (n, m): each round's snake is a run of matches.
  Pairs rev;
  int x = n, y = m;
  for (int d = found; d > 0; --d) {
    const std::vector<int> &pv = trace[d];  // the frontier before round d
    int k = x - y;
    int prevK = (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1])) ? k + 1 : k - 1;
    int prevX = pv[off + prevK], prevY = prevX - prevK;
    while (x > prevX && y > prevY)
      rev.push_back({a0 + --x, b0 + --y});
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0)
    rev.push_back({a0 + --x, b0 + --y});
  out.insert(out.end(), rev.rbegin(), rev.rend());
  return true;
}

// The k-th occurrence of each identity in a[a0,a1) with the k-th in
// b[b0,b1): linear, for gaps too different for Myers within its bound.
void byOccurrence(const std::vector<uint64_t> &a, const std::vector<uint64_t> &b, unsigned a0, unsigned a1,
                  unsigned b0, unsigned b1, Pairs &out) {
  llvm::DenseMap<uint64_t, std::vector<unsigned>> positions;
  for (unsigned i = a1; i-- > a0;)
    positions[a[i]].push_back(i);  // reversed: pop_back gives the first
  for (unsigned j = b0; j < b1; ++j) {
    auto it = positions.find(b[j]);
    if (it == positions.end() || it->second.empty())
      continue;
    out.push_back({it->second.back(), j});
    it->second.pop_back();
  }
}

// Patience diff: the identities unique in both ranges, in increasing order
// on both sides (their longest increasing subsequence), anchor the match;
// the gaps between anchors are aligned the same way, down to Myers.
void alignRange(const std::vector<uint64_t> &a, const std::vector<uint64_t> &b, unsigned a0, unsigned a1,
                unsigned b0, unsigned b1, unsigned maxEdits, Pairs &out) {
  while (a0 < a1 && b0 < b1 && a[a0] == b[b0])
    out.push_back({a0++, b0++});
  Pairs tail;
  while (a0 < a1 && b0 < b1 && a[a1 - 1] == b[b1 - 1])
    tail.push_back({--a1, --b1});
  if (a0 < a1 && b0 < b1) {
    struct Count {
      unsigned inA = 0, inB = 0, posA = 0;
    };
    llvm::DenseMap<uint64_t, Count> counts;
    for (unsigned i = a0; i < a1; ++i) {
      Count &c = counts[a[i]];
      ++c.inA;
      c.posA = i;
    }
    for (unsigned j = b0; j < b1; ++j)
      if (auto it = counts.find(b[j]); it != counts.end())
        ++it->second.inB;
    Pairs candidates;  // in b order
    for (unsigned j = b0; j < b1; ++j)
      if (auto it = counts.find(b[j]); it != counts.end() && it->second.inA == 1 && it->second.inB == 1)
        candidates.push_back({it->second.posA, j});
    // Longest increasing subsequence of the a positions (patience sorting).
    std::vector<unsigned> tops, prev(candidates.size(), ~0u);
    for (unsigned c = 0; c < candidates.size(); ++c) {
      auto at = std::lower_bound(tops.begin(), tops.end(), candidates[c].first,
                                 [&](unsigned t, unsigned pos) { return candidates[t].first < pos; });
      if (at != tops.begin())
        prev[c] = *(at - 1);
      if (at == tops.end())
        tops.push_back(c);
      else
        *at = c;
    }
    Pairs anchors;
    for (unsigned c = tops.empty() ? ~0u : tops.back(); c != ~0u; c = prev[c])
      anchors.push_back(candidates[c]);
    std::reverse(anchors.begin(), anchors.end());
    if (!anchors.empty()) {
      unsigned pa = a0, pb = b0;
      for (const auto &[i, j] : anchors) {
        alignRange(a, b, pa, i, pb, j, maxEdits, out);
        out.push_back({i, j});
        pa = i + 1;
        pb = j + 1;
      }
      alignRange(a, b, pa, a1, pb, b1, maxEdits, out);
    } else if (!myers(a, b, a0, a1, b0, b1, maxEdits, out)) {
      byOccurrence(a, b, a0, a1, b0, b1, out);
    }
  }
  out.insert(out.end(), tail.rbegin(), tail.rend());
}

// Where a value comes from, in terms both graphs share: the producer node
// (compared through the alignment), a parameter by name, a graph input by
// position.
struct Origin {
  enum Kind : uint8_t { None, Node, Param, Input } kind = None;
  int node = -1;
  const std::string *name = nullptr;
  int input = -1;
};

Origin originOf(const Value *v) {
  Origin o;
  if (!v)
    return o;
  if (v->producer) {
    if (v->producer->graph && !v->producer->graph->parentNode) {
      o.kind = Origin::Node;
      o.node = static_cast<int>(v->producer->index);
    }
  } else if (v->kind == Value::Kind::Param) {
    o.kind = Origin::Param;
    o.name = &v->name;
  } else if (v->kind == Value::Kind::GraphInput) {
    o.kind = Origin::Input;
    o.name = &v->name;
  }
  return o;
}

// How many of `h`'s producers and consumers are the matched counterparts of
// `b`'s: the structural neighbourhood two leftover nodes of one identity share.
unsigned neighbourhoodScore(const Node &b, const Node &h, const NodeAlignment &al) {
  unsigned score = 0;
  size_t n = std::min(b.inputs.size(), h.inputs.size());
  for (size_t k = 0; k < n; ++k) {
    Origin ob = originOf(b.inputs[k]), oh = originOf(h.inputs[k]);
    if (ob.kind != oh.kind || ob.kind == Origin::None)
      continue;
    if (ob.kind == Origin::Node ? al.baseToHead[ob.node] == oh.node : *ob.name == *oh.name)
      ++score;
  }
  auto usersOf = [](const Node &x) {
    std::vector<unsigned> u;
    for (const Value *out : x.outputs)
      if (out)
        for (const Use &use : out->uses)
          if (use.user->graph == x.graph)
            u.push_back(use.user->index);
    return u;
  };
  std::vector<unsigned> hu = usersOf(h);
  for (unsigned bu : usersOf(b)) {
    int mapped = al.baseToHead[bu];
    if (mapped >= 0 && std::find(hu.begin(), hu.end(), static_cast<unsigned>(mapped)) != hu.end())
      ++score;
  }
  return score;
}

// Each node's identity mixed with its inputs' origins: a producer's
// identity, or a parameter's or graph input's name.
std::vector<uint64_t> refinedIds(const Graph &g, const std::vector<uint64_t> &ids) {
  std::vector<uint64_t> out(ids);
  for (const auto &n : g.nodes()) {
    uint64_t h = ids[n->index];
    for (const Value *v : n->inputs) {
      Origin o = originOf(v);
      h = o.kind == Origin::Node ? fnv(h, std::to_string(ids[o.node]))
          : o.name               ? fnv(h, *o.name)
                                 : fnv(h, "-");
    }
    out[n->index] = h;
  }
  return out;
}

}  // namespace

uint64_t nodeIdentity(const Node &n) {
  uint64_t h = 1469598103934665603ull;
  h = fnv(h, n.qualifiedOp());
  h = fnv(h, n.modulePath);
  h = fnv(h, n.loc.file);
  h = fnv(h, n.loc.function);
  h = fnv(h, n.backwardPhase ? "backward" : "forward");
  return h;
}

std::vector<std::pair<unsigned, unsigned>> alignSequences(const std::vector<uint64_t> &a,
                                                          const std::vector<uint64_t> &b, unsigned maxEdits) {
  Pairs out;
  alignRange(a, b, 0, static_cast<unsigned>(a.size()), 0, static_cast<unsigned>(b.size()), maxEdits, out);
  std::sort(out.begin(), out.end());
  return out;
}

NodeAlignment alignGraphs(const Graph &base, const Graph &head) {
  auto ids = [](const Graph &g) {
    std::vector<uint64_t> v;
    v.reserve(g.nodes().size());
    for (const auto &n : g.nodes())
      v.push_back(nodeIdentity(*n));
    return v;
  };
  std::vector<uint64_t> a = ids(base), b = ids(head);
  NodeAlignment al;
  al.baseToHead.assign(a.size(), -1);
  al.headToBase.assign(b.size(), -1);
  auto match = [&](unsigned i, unsigned j) {
    al.baseToHead[i] = static_cast<int>(j);
    al.headToBase[j] = static_cast<int>(i);
    ++al.bySequence;
  };
  // First with each identity refined by where its inputs come from (the
  // producers' identities, parameters and graph inputs by name), so that
  // two MatMuls of one module read as different nodes when they read
  // different weights; then what is left by identity alone, in order.
  std::vector<uint64_t> ra = refinedIds(base, a), rb = refinedIds(head, b);
  for (const auto &[i, j] : alignSequences(ra, rb))
    match(i, j);
  std::vector<unsigned> leftA, leftB;
  std::vector<uint64_t> idsA, idsB;
  for (unsigned i = 0; i < a.size(); ++i)
    if (al.baseToHead[i] < 0) {
      leftA.push_back(i);
      idsA.push_back(a[i]);
    }
  for (unsigned j = 0; j < b.size(); ++j)
    if (al.headToBase[j] < 0) {
      leftB.push_back(j);
      idsB.push_back(b[j]);
    }
  for (const auto &[i, j] : alignSequences(idsA, idsB))
    match(leftA[i], leftB[j]);
  // Leftovers of one identity whose order crossed (a re-export that
  // scheduled two independent branches the other way round): matched by
  // their neighbourhood, then by the nearest source line, then by order.
  llvm::DenseMap<uint64_t, std::vector<unsigned>> leftBase;
  for (unsigned i = 0; i < a.size(); ++i)
    if (al.baseToHead[i] < 0)
      leftBase[a[i]].push_back(i);
  if (leftBase.empty())
    return al;
  for (int round = 0; round < 2; ++round) {
    for (unsigned j = 0; j < b.size(); ++j) {
      if (al.headToBase[j] >= 0)
        continue;
      auto it = leftBase.find(b[j]);
      if (it == leftBase.end() || it->second.empty())
        continue;
      const Node &h = *head.nodes()[j];
      int best = -1;
      unsigned bestScore = 0, bestLine = ~0u;
      constexpr size_t kMaxCandidates = 64;  // a bound for pathological graphs
      for (size_t c = 0; c < it->second.size() && c < kMaxCandidates; ++c) {
        const Node &bn = *base.nodes()[it->second[c]];
        unsigned score = neighbourhoodScore(bn, h, al);
        unsigned line = static_cast<unsigned>(std::abs(static_cast<int>(bn.loc.line) - static_cast<int>(h.loc.line)));
        if (best < 0 || score > bestScore || (score == bestScore && line < bestLine)) {
          best = static_cast<int>(c);
          bestScore = score;
          bestLine = line;
        }
      }
      // First round: only nodes the structure vouches for; the second pairs
      // what is left of one identity by line and order.
      if (best < 0 || (round == 0 && bestScore == 0))
        continue;
      unsigned i = it->second[best];
      it->second.erase(it->second.begin() + best);
      al.baseToHead[i] = static_cast<int>(j);
      al.headToBase[j] = static_cast<int>(i);
      ++al.byStructure;
    }
  }
  return al;
}

}  // namespace graphlint
