// Builds IR graphs from parsed ONNX GraphProtos: values, params, nodes,
// nested bodies, use lists and topological order. Structural problems
// (dangling inputs, duplicate definitions, cycles) become ImportProblems.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/StringMap.h>

#include <onnx/onnx_pb.h>

#include <unordered_map>
#include <vector>

namespace graphlint::onnxio {

/// Maximum nesting of subgraphs (If inside Loop inside ...).
inline constexpr unsigned kMaxGraphDepth = 32;

class GraphBuilder {
public:
  explicit GraphBuilder(Model &m) : model_(m) {}

  std::unique_ptr<Graph> build(const onnx::GraphProto &gp, Graph *parentGraph, Node *parentNode,
                               std::string name);
  /// The proto each IR node came from (shape completion calls ONNX with it).
  onnx::NodeProto *protoOf(const Node *n) const;
  const onnx::GraphProto *protoOf(const Graph *g) const;

private:
  Value *resolve(Graph &g, const std::string &name, Node &user, unsigned operand);
  void sortTopologically(Graph &g);
  void problem(const Graph &g, const Node *n, std::string msg);
  struct OpEntry {
    int64_t opsetVersion;
    const OpInfo *op;
  };
  /// The imported version of `domain` and the registry's entry for the op:
  /// one lookup per (domain, op) of the model instead of one per node.
  const OpEntry &opEntry(const std::string &domain, const std::string &opType);

  Model &model_;
  // Per graph, the proto of each node by Node::index (after sorting).
  std::unordered_map<const Graph *, std::vector<onnx::NodeProto *>> nodeProtos_;
  std::unordered_map<const Graph *, const onnx::GraphProto *> graphProtos_;
  llvm::StringMap<OpEntry> ops_;  // by domain + '\0' + op type
};

/// Appends the outer-scope values a node's bodies capture (transitively) from
/// the node's own graph: they are implicit inputs of the node.
void capturedValues(const Node &n, llvm::SmallVectorImpl<Value *> &out);

}  // namespace graphlint::onnxio
