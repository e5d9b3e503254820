// A plain-data copy of a model's FusionPlan, taken by the driver while the
// model is alive (the plan points into it) and carried in the FileReport to
// the reporters: the JSON `fusion` section, the `--fusion` text table and the
// `--emit-dot` Graphviz writer render this, never the plan or the model.
#pragma once

#include "graphlint/ir/Display.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphlint {

class Model;
class FusionPlan;

struct FusionSummary {
  struct Graph {
    std::string path;            // "main", "main/If:then_branch"
    int parent = -1;             // index of the enclosing graph; -1 for main
    int parentNode = -1;         // index (in `nodes`) of the control-flow node owning it
    std::string attribute;       // "then_branch", "body", ... ("" for main)
  };
  /// label (the node name, or "#<1-based index>" when unnamed), name ("" when
  /// unnamed), qualified op, 0-based index in its graph; and:
  struct Node : NodeNaming {
    unsigned graph = 0;          // index into `graphs`
    unsigned group = 0;          // FusionGroup id
  };
  struct Group {
    unsigned id = 0;
    std::string kind;            // groupKindName
    unsigned graph = 0;          // index into `graphs`
    std::vector<unsigned> nodes; // indices into `nodes`, in execution order
    unsigned kernels = 0;
    unsigned launch = 0;         // FusionGroup::launch
    unsigned layoutCopies = 0;   // FusionGroup::layoutCopies
  };
  struct Boundary {
    unsigned fromGroup = 0, toGroup = 0;
    unsigned producer = 0, consumer = 0;  // indices into `nodes`
    std::string value;           // name of the tensor crossing the boundary
    std::string reason;          // breakReasonName
    bool breaker = false;        // isFusionBreaker(reason)
    std::string detail;          // "f16 -> f32", "cuda:0", or ""
  };
  /// A data edge producer -> consumer between two nodes of the model (also
  /// into a nested body, for values the body reads from an enclosing graph).
  /// Only filled when the driver is asked for edges (--emit-dot).
  struct Edge {
    unsigned from = 0, to = 0;   // indices into `nodes`
    std::string value;
    int boundary = -1;           // index into `boundaries` when this edge is one
  };

  bool present = false;          // false for fatal files or when not requested
  std::string backend;
  std::vector<Graph> graphs;     // main first, then nested bodies outer first
  std::vector<Node> nodes;       // every node of every graph, graph by graph
  std::vector<Group> groups;     // by id
  std::vector<Boundary> boundaries;
  std::vector<Edge> edges;
  unsigned kernelsPredicted = 0;

  /// Boundary counts by reason: fusion breakers first, then structural
  /// boundaries; within each part by descending count, then name.
  std::vector<std::pair<std::string, unsigned>> reasonCounts() const;
};

/// Copies `plan` (computed for `m`) into plain data; `withEdges` also records
/// every data edge for the DOT writer.
FusionSummary summariseFusion(const Model &m, const FusionPlan &plan, bool withEdges);

}  // namespace graphlint
