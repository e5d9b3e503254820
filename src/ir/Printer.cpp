#include "graphlint/ir/Printer.h"

#include "graphlint/ir/MessageText.h"
#include "graphlint/ir/OpRegistry.h"

#include <fmt/format.h>

namespace graphlint {

// Names, attributes and paths come from the file: shown through oneLine, so
// no control character of theirs reaches the terminal (docs/robustness.md).
static std::string show(llvm::StringRef s) { return oneLine(s); }

static std::string valueRef(const Value *v) { return v ? "%" + show(v->name) : "<none>"; }

void printGraph(const Graph &g, llvm::raw_ostream &os, unsigned indent) {
  std::string pad(indent, ' ');
  os << pad << "graph " << show(g.path()) << " (" << g.nodes().size() << " nodes)\n";
  for (const Value *v : g.inputs)
    os << pad << "  input  " << valueRef(v) << ": " << v->type.str() << "\n";
  for (const auto &p : g.params()) {
    const char *where = p->tensor.storage == TensorLiteral::Storage::External ? "external"
                        : p->tensor.storage == TensorLiteral::Storage::Inline  ? "inline"
                                                                                : "empty";
    os << pad << "  param  " << valueRef(p->value) << ": " << p->value->type.str() << " (" << p->tensor.byteSize
       << " B, " << where << ")\n";
  }
  for (const auto &n : g.nodes()) {
    std::string outs, ins, attrs;
    for (const Value *v : n->outputs)
      outs += (outs.empty() ? "" : ", ") + (v ? valueRef(v) + ": " + v->type.str() : "<none>");
    for (const Value *v : n->inputs)
      ins += (ins.empty() ? "" : ", ") + valueRef(v);
    for (const Attribute &a : n->attributes)
      attrs += (attrs.empty() ? "" : ", ") + show(a.name) + "=" + show(a.str());
    os << pad << "  " << fmt::format("{:>4}", n->index) << "  " << (outs.empty() ? "()" : outs) << " = "
       << show(n->qualifiedOp()) << "(" << ins << ")";
    if (!attrs.empty())
      os << " {" << attrs << "}";
    if (!n->name.empty())
      os << "  # " << show(n->name);
    if (n->loc.valid())
      os << " @ " << show(n->loc.file) << ":" << n->loc.line;
    os << "\n";
    for (const auto &sub : n->subgraphs())
      printGraph(*sub, os, indent + 8);
  }
  for (const Value *v : g.outputs)
    os << pad << "  output " << valueRef(v) << ": " << v->type.str() << "\n";
}

void printModel(const Model &m, llvm::raw_ostream &os) {
  os << "model " << show(m.path) << " (ir_version " << m.irVersion << ", producer " << show(m.producerName) << " "
     << show(m.producerVersion) << ")\n";
  for (const auto &o : m.opsets)
    os << "  opset " << (o.domain.empty() ? "ai.onnx" : show(o.domain)) << " " << o.version << "\n";
  printGraph(*m.graph, os, 0);
  for (const auto &f : m.functions)
    if (f->body) {
      os << "function " << show(f->domain) << "::" << show(f->name) << "\n";
      printGraph(*f->body, os, 2);
    }
}

}  // namespace graphlint
