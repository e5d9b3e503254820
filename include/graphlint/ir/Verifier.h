// Structural checks of an IR graph, whichever frontend built it: every use is
// defined (no dangling inputs), every name is defined once (SSA), and the node
// order is topological (no cycles). Problems are collected, never thrown.
#pragma once

#include "graphlint/ir/Graph.h"

#include <string>
#include <vector>

namespace graphlint {

struct VerifierIssue {
  const Graph *graph = nullptr;
  const Node *node = nullptr;
  std::string message;
};

/// Checks the graph and every nested graph.
std::vector<VerifierIssue> verifyGraph(const Graph &g);

/// "'name' (Op)" or "#index (Op)" for messages.
std::string describeNode(const Node &n);

}  // namespace graphlint
