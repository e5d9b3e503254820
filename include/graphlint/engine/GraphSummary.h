// A plain-data copy of a model's graphs for graph viewers
// (`--emit-model-explorer`, docs/viewers.md): every node with its op, module
// scope, attributes, the producers of its inputs and the types of its
// outputs; each graph's inputs, parameters and outer-scope captures as nodes
// of their own, so every edge joins two nodes of one graph; and each node's
// share of the predictions the cached analyses already made: its fusion group
// (FusionPlan), its predicted seconds per step (its group's time in the
// ComputeModel split by kernelShares) and the bytes of its outputs live at
// the memory peak (MemoryPlan::atPeak). Taken by the driver while the model
// and its analyses are alive; the reporter renders this, never the model.
#pragma once

#include "graphlint/ir/Display.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace graphlint {

class Model;
class AnalysisContext;

struct GraphSummary {
  /// The output `output` of node `node` of the same graph (indices into
  /// Graph::nodes and the node's outputs).
  struct Edge {
    unsigned node = 0, output = 0;
  };
  struct Output {
    std::string name;            // the value's name ("" for an omitted optional output)
    std::string type;            // Type::str(): "f32[8,2048,2048]", "seq(f32[?])", "?"
    std::string dtype, shape;    // a tensor's: "f32", "[8,2048,2048]"; "" otherwise
  };
  /// An op: its NodeNaming (label "#N" when unnamed); an input, parameter
  /// or capture: label and name the value's name, op "Input", "Param",
  /// "Buffer", "Capture" (or "Missing"), index 0; and:
  struct Node : NodeNaming {
    enum class Kind : uint8_t { Op, Input, Param, Capture };
    Kind kind = Kind::Op;
    /// The nn.Module path it runs in ("blocks.3.attn"). A joint graph's
    /// backward node without one takes the module whose forward it
    /// differentiates (its grad_of value's producer, else that of its first
    /// backward input that has one); a parameter, the module of its first reader.
    std::string module;
    bool backward = false;       // a joint graph's backward node
    std::string source;          // the user's "file:line", or ""
    std::vector<std::pair<std::string, std::string>> attrs;  // Attribute::str()
    std::vector<std::optional<Edge>> inputs;  // nullopt: an omitted optional input
    std::vector<Output> outputs;
    std::vector<unsigned> subgraphs;  // indices into `graphs`: bodies, a called function's
    std::optional<unsigned> group;    // FusionGroup id
    std::optional<double> seconds;    // predicted seconds per step, forward + backward
    uint64_t peakBytes = 0;           // bytes of its outputs (a parameter: with its gradient
                                      // and optimizer state) live at the memory peak
  };
  struct Graph {
    std::string path;            // Graph::path(): "main", "main/If:then_branch", "function:NAME"
    std::vector<Node> nodes;     // inputs, params and captures first, then the ops in order
  };

  bool present = false;          // false for fatal files or when not requested
  std::vector<Graph> graphs;     // main first, then nested bodies, then local functions
  std::string backend;           // the fusion plan's backend ("inductor")
  std::string target;            // the hardware profile timing `seconds` ("" when unknown: none are)
  bool train = false;
  uint64_t peakAllocatedBytes = 0; // the memory plan's peak, which `peakBytes` break down
  std::string peakNode;            // the step at the peak (MemorySummary::peakNode)
};

/// Copies the model's graphs and the analyses' per-node figures (computing
/// them in `ctx` if no rule did) into plain data.
GraphSummary summariseGraph(const Model &m, AnalysisContext &ctx);

}  // namespace graphlint
