// How the IR's things are shown to users, in one place: a node's label and a
// byte size. Everything a user compares across the sections of one report (a
// rule's message, the memory table and `memory.peak_node`, the fusion groups,
// the text report's `--> node #N`, SARIF's logical location) prints through
// these, so the same node or size never reads two ways (docs/output-formats.md,
// "Node numbers").
#pragma once

#include <string>

namespace graphlint {

class Node;

/// "#N" for the node at 0-based position `index` in its graph: N is 1-based,
/// as the text report's "node #N" and gcc's FILE:N:1.
std::string nodeNumber(unsigned index);

/// A node as users see it: its name, or `nodeNumber(index)` when it has none.
std::string nodeLabel(const Node &n);

/// `op 'label'` ("aten::mm 'mm_1'", "MatMul '#3'"): a node named in a message.
std::string nodeWithOp(const Node &n);

/// What a plain-data summary keeps to name a node (FusionSummary,
/// GraphSummary): its label, its name in the model ("" when unnamed), its
/// qualified op and its 0-based position in its graph.
struct NodeNaming {
  std::string label, name, op;
  unsigned index = 0;
};
NodeNaming namingOf(const Node &n);

/// A byte size in binary units: "17 B", "3.00 KiB", "512.00 MiB", "1.25 GiB"
/// (two decimals above bytes; negative sizes keep their sign).
std::string formatBytes(double bytes);

/// A duration at a readable scale: "1.250 s", "3.142 ms", "12.5 us".
std::string formatSeconds(double seconds);

}  // namespace graphlint
