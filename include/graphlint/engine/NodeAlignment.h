// Node alignment for `graphlint diff`: which node of the head graph is which
// node of the base graph, without trusting node names (exporters renumber
// them when any op is added). Two nodes can only be the same node when their
// identity agrees: the op, the module path, the user's source file and
// function, and the phase (forward or a joint graph's backward); the source
// *line* is not part of it, so a comment inserted above a layer moves no
// node. Among nodes of one identity, the execution order decides (a
// patience diff of the two identity sequences, Myers' O(ND) diff inside the
// gaps between unique anchors), then the structure: a node left over is
// matched to the leftover of the same identity whose producers and consumers
// are matched to its own, the nearest source line breaking ties.
// docs/diff.md "Alignment".
#pragma once

#include "graphlint/ir/Graph.h"

#include <cstdint>
#include <vector>

namespace graphlint {

struct NodeAlignment {
  /// Per node of the base main graph (by Node::index): the head node index
  /// it is, or -1 (removed). headToBase is the inverse (-1: added).
  std::vector<int> baseToHead, headToBase;
  /// Matched by the execution-order diff, and then by structure.
  unsigned bySequence = 0, byStructure = 0;
};

/// The identity a node keeps across re-exports (the hash of op, module
/// path, source file, source function and phase).
uint64_t nodeIdentity(const Node &n);

/// Aligns the main graphs' nodes (nested bodies go with their node).
NodeAlignment alignGraphs(const Graph &base, const Graph &head);

/// The longest common subsequence alignment of two sequences of identities,
/// as pairs (i, j), increasing in both: unique common identities anchor the
/// diff, the gaps between them go through Myers' algorithm (bounded: past
/// `maxEdits` differences a gap matches the k-th occurrence of each
/// identity to the k-th). Exposed for the tests.
std::vector<std::pair<unsigned, unsigned>> alignSequences(const std::vector<uint64_t> &a,
                                                          const std::vector<uint64_t> &b,
                                                          unsigned maxEdits = 1000);

}  // namespace graphlint
