#include "DiffSides.h"

#include "graphlint/ir/Display.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphlint::diffing {

// The node of the main graph a node runs in (a nested body's node: its
// control-flow node).
const Node *mainNodeOf(const Node *n) {
  while (n && n->graph && n->graph->parentNode)
    n = n->graph->parentNode;
  return n;
}

namespace {

std::string sourceText(const std::string &file, unsigned line) { return fmt::format("{}:{}", file, line); }

}  // namespace

DiffPlace placeOf(const Node &n) {
  DiffPlace p;
  p.module = n.modulePath;
  if (n.loc.valid()) {
    p.file = n.loc.file;
    p.line = n.loc.line;
    p.source = sourceText(p.file, p.line);
  } else {
    p.source = !n.modulePath.empty() ? n.modulePath : nodeLabel(n);
  }
  return p;
}

PlaceMap::PlaceMap(const Graph &base, const Graph &head, const NodeAlignment &al)
    : base_(base), head_(head), al_(al) {
    std::map<std::pair<std::string, unsigned>, std::map<unsigned, unsigned>> votes;
    std::map<std::pair<std::string, unsigned>, unsigned> nodes;
    for (size_t i = 0; i < al.baseToHead.size(); ++i) {
      const SourceLoc &lb = base.nodes()[i]->loc;
      if (!lb.valid())
        continue;
      ++nodes[{lb.file, lb.line}];
      int j = al.baseToHead[i];
      if (j < 0)
        continue;
      const SourceLoc &lh = head.nodes()[j]->loc;
      if (lh.valid() && lb.file == lh.file)
        ++votes[{lb.file, lb.line}][lh.line];
    }
    // A line most of whose nodes are gone is gone: the odd view or detach
    // of it matched elsewhere does not carry it to another line.
    for (const auto &[key, counts] : votes) {
      auto best = std::max_element(counts.begin(), counts.end(),
                                   [](const auto &a, const auto &b) { return a.second < b.second; });
      if (2 * best->second >= nodes[key])
        lines_[key] = best->first;
    }
  }
DiffPlace PlaceMap::base(unsigned i) const {
    if (int j = al_.baseToHead[i]; j >= 0)
      return head(static_cast<unsigned>(j));
    const Node &n = *base_.nodes()[i];
    DiffPlace p = placeOf(n);
    if (!n.loc.valid())
      return p;
    if (auto it = lines_.find({n.loc.file, n.loc.line}); it != lines_.end()) {
      p.line = it->second;
      p.source = sourceText(p.file, p.line);
    } else {
      p.baseSide = true;
    }
    return p;
  }

}  // namespace graphlint::diffing
