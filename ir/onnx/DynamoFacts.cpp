// Facts from torch.onnx's dynamo exporter's node metadata (DynamoFacts.h).
#include "DynamoFacts.h"

#include "SourceInfo.h"

#include "graphlint/ir/ModuleContainers.h"
#include "graphlint/ir/PythonLocals.h"
#include "graphlint/ir/StackTrace.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSet.h>

namespace graphlint::onnxio {
namespace {

constexpr size_t kMaxFrames = 256;  // a stack trace's frames read for Python locals

// "m.model.layers.0.q_proj.weight" -> "m_model_layers_0_q_proj_weight", as
// torch.export names the placeholder after the path.
std::string placeholderSuffix(llvm::StringRef path) {
  std::string s = path.str();
  for (char &c : s)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return s;
}

// The placeholders ("p_fc_weight", "b_mask", "c_lifted_tensor_0") an FX node
// read: `%name` tokens of its args. The node's own name (`%addmm : ...`)
// precedes " = " and is not read.
void readPlaceholders(llvm::StringRef fxNode, llvm::StringSet<> &out) {
  size_t eq = fxNode.find(" = ");
  llvm::StringRef args = eq == llvm::StringRef::npos ? fxNode : fxNode.drop_front(eq + 3);
  for (size_t at = args.find('%'); at != llvm::StringRef::npos; at = args.find('%', at + 1)) {
    llvm::StringRef name = args.drop_front(at + 1).take_while([](char c) { return llvm::isAlnum(c) || c == '_'; });
    if (name.size() > 2 && name[1] == '_' && (name[0] == 'p' || name[0] == 'b' || name[0] == 'c'))
      out.insert(name);
  }
}

}  // namespace

void markDynamoParams(Graph &g) {
  // Per node, the placeholders its FX node read; all of them together.
  llvm::DenseMap<const Node *, llvm::StringSet<>> readBy;
  llvm::StringSet<> read;
  for (const auto &np : g.nodes())
    if (const std::string *fx = np->metadataValue("pkg.torch.onnx.fx_node")) {
      llvm::StringSet<> &mine = readBy[np.get()];
      readPlaceholders(*fx, mine);
      for (const auto &e : mine)
        read.insert(e.getKey());
    }
  if (readBy.empty())
    return;
  // Parameters no initializer is named after any more: folded into others.
  llvm::StringSet<> named;
  for (const auto &p : g.params())
    if (p->value)
      named.insert("p_" + placeholderSuffix(p->value->name));
  auto folded = [&](llvm::StringRef placeholder) {
    return placeholder.startswith("p_") && !named.count(placeholder);
  };
  for (const auto &p : g.params()) {
    if (!p->value || p->trained)
      continue;
    std::string suffix = placeholderSuffix(p->value->name);
    if (read.count("p_" + suffix)) {
      p->trained = true;
      continue;
    }
    if (read.count("b_" + suffix) || read.count("c_" + suffix)) {
      p->trained = false;
      continue;
    }
    bool described = false, fromParameter = false;
    for (const Use &u : p->value->uses) {
      auto it = readBy.find(u.user);
      if (it == readBy.end())
        continue;
      described = true;
      for (const auto &e : it->second)
        fromParameter |= folded(e.getKey());
    }
    if (described) {
      p->trained = fromParameter;
      p->computed = !fromParameter;
    }
  }
}

void inferDynamoScopes(Graph &g) {
  auto scoped = [](const Node &n) { return n.metadataValue("pkg.torch.onnx.name_scopes") != nullptr; };
  bool dynamo = false;
  for (const auto &np : g.nodes())
    dynamo |= scoped(*np);
  if (!dynamo)
    return;
  llvm::DenseSet<const Node *> known;
  for (const auto &np : g.nodes())
    if (scoped(*np))
      known.insert(np.get());
  // The longest common prefix of module paths, on component boundaries.
  auto common = [](llvm::StringRef a, llvm::StringRef b) {
    size_t n = 0, end = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) {
      ++n;
      if (a[n - 1] == '.')
        end = n - 1;
    }
    bool whole = (n == a.size() || a[n] == '.') && (n == b.size() || b[n] == '.');
    return a.take_front(whole ? n : end);
  };
  for (const auto &np : g.nodes()) {
    Node &n = *np;
    if (known.count(&n))
      continue;
    std::optional<std::string> path;
    auto meet = [&](const Node *other) {
      if (!other || !known.count(other))
        return;
      path = path ? common(*path, other->modulePath).str() : other->modulePath;
    };
    for (const Value *in : n.inputs)
      if (in && in->kind == Value::Kind::NodeOutput)
        meet(in->producer);
    for (const Value *o : n.outputs)
      if (o)
        for (const Use &u : o->uses)
          meet(u.user);
    if (path) {
      n.modulePath = *path;
      known.insert(&n);
    }
  }
}

void recordDynamoModuleContainers(Model &m) {
  llvm::StringSet<> called;
  bool dynamo = false;
  for (const auto &np : m.graph->nodes())
    if (std::optional<std::vector<std::string>> scopes = dynamoModuleScopes(*np)) {
      dynamo = true;
      for (const std::string &s : *scopes)
        called.insert(s);
    }
  if (dynamo)
    recordModuleContainers(m, called);
}

std::vector<std::string> holdDynamoPythonLocals(Graph &g) {
  std::vector<CallSite> sites;
  for (const auto &np : g.nodes()) {
    const std::string *trace = np->metadataValue("pkg.torch.onnx.stack_trace");
    std::optional<std::vector<std::string>> scopes = trace ? dynamoModuleScopes(*np) : std::nullopt;
    if (!scopes)
      continue;
    CallSite site;
    site.node = np.get();
    site.frames = parseTraceFrames(*trace, kMaxFrames);
    site.modules = std::move(*scopes);
    site.moduleTypes = dynamoModuleClasses(*np);
    if (!site.frames.empty() && !site.modules.empty())
      sites.push_back(std::move(site));
  }
  return sites.empty() ? std::vector<std::string>{} : holdPythonLocals(g, sites);
}

}  // namespace graphlint::onnxio
