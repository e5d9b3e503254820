// What graphlint diff keeps of each side and how it places a change, shared
// by the diff's parts (private to src/engine): ModelDiff.cpp aligns and
// compares nodes, findings and parameters; DiffPlaces.cpp puts a node at the
// user's source line in the head's numbering; DiffCosts.cpp copies what each
// node accounts for (bytes at the peak, FLOPs, kernels, its fusion group)
// while the analyses are alive, and compares fusion groups and attributes
// the metrics' changes to lines.
#pragma once

#include "graphlint/analyses/Analysis.h"
#include "graphlint/engine/ModelDiff.h"

#include <map>
#include <string>
#include <vector>

namespace graphlint::diffing {

/// The node of the main graph a node runs in (a nested body's node: its
/// control-flow node).
const Node *mainNodeOf(const Node *n);

// What each main-graph node of one side accounts for, copied while the
// model's analyses are alive.
struct SideFacts {
  std::vector<double> peakBytes, flops, kernels, seconds;
  double otherPeakBytes = 0;      // storages at the peak with no node (synthetic buffers)
  std::vector<int> group;         // fusion group index per node, -1 outside
  struct Group {
    unsigned kernels = 0;
    std::vector<unsigned> nodes;
  };
  std::vector<Group> groups;      // main-graph groups by FusionPlan index (others empty)
  struct Boundary {
    int from = -1, to = -1;       // group indices
    unsigned consumer = 0;
    std::string reason, detail;
    bool breaker = false;
  };
  std::vector<Boundary> boundaries;
};

void collectFacts(const Model &m, AnalysisContext &ctx, SideFacts &f);

/// A node's place: its source line, else its module path, else its label.
DiffPlace placeOf(const Node &n);

/// Places in the head's numbering: a base line maps to the head line its
/// matched nodes are at (the most common one); a line most of whose nodes
/// are gone, or only the base has, stays a base place.
class PlaceMap {
public:
  PlaceMap(const Graph &base, const Graph &head, const NodeAlignment &al);
  DiffPlace head(unsigned j) const { return placeOf(*head_.nodes()[j]); }
  DiffPlace base(unsigned i) const;

private:
  const Graph &base_, &head_;
  const NodeAlignment &al_;
  std::map<std::pair<std::string, unsigned>, unsigned> lines_;
};

/// Fusion groups split, merged, added, removed or with other kernel counts.
void diffFusion(ModelDiff &d, const Model &bm, const Model &hm, const SideFacts &fb, const SideFacts &fh,
                const NodeAlignment &al, const PlaceMap &places);

/// The source lines each moved metric's change comes from (after the metrics).
void attributeToLines(ModelDiff &d, const SideFacts &fb, const SideFacts &fh, const PlaceMap &places);

}  // namespace graphlint::diffing
