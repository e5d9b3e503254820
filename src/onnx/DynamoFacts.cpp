// Facts from torch.onnx's dynamo exporter's node metadata (DynamoFacts.h).
#include "DynamoFacts.h"

#include "SourceInfo.h"

#include "graphlint/ir/ModuleContainers.h"
#include "graphlint/ir/PythonLocals.h"
#include "graphlint/ir/StackTrace.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>

namespace graphlint::onnxio {
namespace {

constexpr size_t kMaxFrames = 256;  // a stack trace's frames read for Python locals

// The placeholders ("p_fc_weight", "b_mask", "c_lifted_tensor_0") an FX node
// read.
void readPlaceholders(llvm::StringRef fxNode, llvm::StringSet<> &out) {
  for (llvm::StringRef name : fxNodeArgs(fxNode))
    if (isPlaceholder(name))
      out.insert(name);
}

// An ONNX constant the exporter made ("val_3"), not an FX node's name.
bool isExporterConstant(llvm::StringRef name) {
  return name.consume_front("val_") && !name.empty() && llvm::all_of(name, llvm::isDigit);
}

// Whether a node that reads `v` runs in the statement that calls one of
// `modules` (`x = self.tok_emb(idx) + self.pos_emb(pos)`): the folded output
// of that call is then a temporary of the statement, not a caller's local.
bool readWhereCalled(const Value &v, llvm::ArrayRef<llvm::StringRef> modules) {
  for (const Use &u : v.uses) {
    const std::string *trace = u.user->metadataValue("pkg.torch.onnx.stack_trace");
    std::vector<TraceFrame> frames = trace ? parseTraceFrames(*trace, kMaxFrames) : std::vector<TraceFrame>{};
    if (frames.empty())
      continue;
    llvm::StringRef code = frames.back().code;
    for (llvm::StringRef module : modules) {
      llvm::StringRef attribute = module.contains('.') ? module.rsplit('.').second : module;
      if (code.contains(("self." + attribute + "(").str()))
        return true;
    }
  }
  return false;
}

// From the optimizer's record of each fold and the signature (markDynamoParams);
// `read`: the placeholders the file's FX nodes read. False when the file has
// neither.
bool markFoldedParams(Model &m, const llvm::StringSet<> &read) {
  std::vector<std::pair<std::string, std::string>> inputs = signatureInputs(m);
  if (inputs.empty())
    return false;
  llvm::StringMap<llvm::StringRef> kindOf;
  for (const auto &[target, kind] : inputs)
    kindOf.try_emplace(target, kind);
  Graph &g = *m.graph;
  // The modules some node runs in: every prefix of every node's module path.
  // A trie: a set of prefix strings costs O(length^2) for a deep path.
  ModulePathTrie runs;
  for (const auto &np : g.nodes())
    if (!np->modulePath.empty())
      runs.insert(np->modulePath);
  llvm::StringSet<> standsFor;  // parameters an initializer stands for
  llvm::StringSet<> foldedInto;  // parameters folded with others or into what the forward computes
  bool recorded = false;
  for (const auto &p : g.params()) {
    if (!p->value)
      continue;
    standsFor.insert(p->value->name);
    std::vector<std::string> from = foldedFrom(*p);
    if (from.empty())
      continue;
    recorded = true;
    if (p->trained)
      continue;  // the file's training info said
    std::vector<llvm::StringRef> params;
    bool computes = false;  // folded from what the forward computes
    llvm::SmallVector<llvm::StringRef, 4> foldedModules;  // whose parameter or buffer it read; no node runs in them
    for (const std::string &name : from) {
      auto it = kindOf.find(name);
      if (it != kindOf.end() && it->second == "PARAMETER")
        params.push_back(name);
      else if (it != kindOf.end() || !isExporterConstant(name))
        computes = true;  // a buffer, a user input, an FX node
      // The module that owns it and the ones around it that no node runs in.
      if (it != kindOf.end() && (it->second == "PARAMETER" || it->second == "BUFFER"))
        for (llvm::StringRef path = name; path.contains('.');) {
          path = path.rsplit('.').first;
          if (runs.find(path))
            break;
          foldedModules.push_back(path);
        }
    }
    p->trained = !params.empty();
    p->computed = computes || params.empty();
    p->heldByCaller = p->computed && !foldedModules.empty() && !readWhereCalled(*p->value, foldedModules);
    if (params.size() == 1 && !computes)
      standsFor.insert(params[0]);
    else
      foldedInto.insert(params.begin(), params.end());
  }
  if (!recorded)
    return false;
  // A parameter folded into an initializer that does not stand for it, which
  // no other initializer stands for and no node reads (under its name, folded
  // into one the node reads, or tied to another's initializer: the exporter
  // keeps one). A parameter the signature lists but nothing in the file names
  // is not reported: tied parameters are listed twice and read once.
  for (const auto &[target, kind] : inputs)
    if (kind == "PARAMETER" && foldedInto.count(target) && !standsFor.count(target) &&
        !read.count("p_" + placeholderSuffix(target)))
      m.metadata.emplace_back(kFoldedParameter, target);
  return true;
}

}  // namespace

llvm::StringRef fxNodeName(llvm::StringRef fxNode) {
  if (!fxNode.consume_front("%"))
    return {};
  return fxNode.take_while([](char c) { return llvm::isAlnum(c) || c == '_'; });
}

llvm::SmallVector<llvm::StringRef, 8> fxNodeArgs(llvm::StringRef fxNode) {
  llvm::SmallVector<llvm::StringRef, 8> out;
  size_t eq = fxNode.find(" = ");
  llvm::StringRef args = eq == llvm::StringRef::npos ? fxNode : fxNode.drop_front(eq + 3);
  for (size_t at = args.find('%'); at != llvm::StringRef::npos; at = args.find('%', at + 1)) {
    llvm::StringRef name = args.drop_front(at + 1).take_while([](char c) { return llvm::isAlnum(c) || c == '_'; });
    if (!name.empty() && !llvm::is_contained(out, name))
      out.push_back(name);
  }
  return out;
}

bool isPlaceholder(llvm::StringRef name) {
  return name.size() > 2 && name[1] == '_' && (name[0] == 'p' || name[0] == 'b' || name[0] == 'c');
}

// "m.model.layers.0.q_proj.weight" -> "m_model_layers_0_q_proj_weight", as
// torch.export names the placeholder after the path.
std::string placeholderSuffix(llvm::StringRef path) {
  std::string s = path.str();
  for (char &c : s)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return s;
}

// The ExportedProgram's signature as the exporter writes it, one input per
// line: "p_fc_weight: PARAMETER target='fc.weight'". (target, kind), in order.
std::vector<std::pair<std::string, std::string>> signatureInputs(const Model &m) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto &[key, text] : m.metadata) {
    if (key != "pkg.torch.export.ExportedProgram.graph_signature")
      continue;
    llvm::SmallVector<llvm::StringRef, 64> lines;
    llvm::StringRef(text).split(lines, '\n');
    for (llvm::StringRef line : lines) {
      auto [name, rest] = line.trim().split(": ");
      size_t at = rest.find(" target='");
      if (name.empty() || at == llvm::StringRef::npos)
        continue;
      llvm::StringRef target = rest.drop_front(at + 9);
      target = target.take_until([](char c) { return c == '\''; });
      out.emplace_back(target.str(), rest.take_front(at).str());
    }
  }
  return out;
}

// onnxscript's "['m.fc.weight', 'val_3', 'add_2']": the names in quotes.
std::vector<std::string> foldedFrom(const Param &p) {
  std::vector<std::string> out;
  for (const auto &[key, list] : p.metadata) {
    if (key != "pkg.onnxscript.optimizer.folded_from")
      continue;
    llvm::SmallVector<llvm::StringRef, 16> parts;
    llvm::StringRef(list).split(parts, '\'');
    for (size_t i = 1; i < parts.size(); i += 2)
      out.push_back(parts[i].str());
  }
  return out;
}

void markDynamoParams(Model &m) {
  Graph &g = *m.graph;
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
  bool foldsRecorded = markFoldedParams(m, read);
  for (const auto &p : g.params()) {
    if (!p->value || p->trained || (foldsRecorded && !foldedFrom(*p).empty()))
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

void holdFoldsSharedAcrossCalls(Graph &g) {
  for (const auto &p : g.params()) {
    if (!p->value || !p->computed || p->heldByCaller)
      continue;
    // The readers' module paths, split; the components they share.
    std::vector<llvm::SmallVector<llvm::StringRef, 8>> paths;
    for (const Use &u : p->value->uses) {
      paths.emplace_back();
      if (!u.user->modulePath.empty())
        llvm::StringRef(u.user->modulePath).split(paths.back(), '.');
    }
    if (paths.size() < 2)
      continue;
    size_t common = paths[0].size();
    for (const auto &path : paths) {
      size_t d = 0;
      while (d < common && d < path.size() && path[d] == paths[0][d])
        ++d;
      common = d;
    }
    // Readers in two calls below the shared module, or one in it and one
    // below: the value was passed down, so the shared module's forward binds it.
    llvm::StringSet<> calls;
    for (const auto &path : paths)
      calls.insert(path.size() > common ? path[common] : llvm::StringRef("."));
    p->heldByCaller = calls.size() > 1;
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

std::vector<std::string> holdDynamoPythonLocals(Model &m) {
  Graph &g = *m.graph;
  std::vector<CallSite> sites;
  unsigned unscoped = 0;  // nodes with an FX node but no frame of the model nor a module scope
  for (const auto &np : g.nodes()) {
    const std::string *trace = np->metadataValue("pkg.torch.onnx.stack_trace");
    std::optional<std::vector<std::string>> scopes = trace ? dynamoModuleScopes(*np) : std::nullopt;
    std::vector<TraceFrame> frames = trace ? parseTraceFrames(*trace, kMaxFrames) : std::vector<TraceFrame>{};
    if (trace && frames.empty() && np->metadataValue("pkg.torch.onnx.fx_node") &&
        (!scopes || llvm::all_of(*scopes, [](const std::string &s) { return s.empty(); })))
      ++unscoped;  // only the generated code's frame, in the root module
    if (!scopes)
      continue;
    CallSite site;
    site.node = np.get();
    site.frames = std::move(frames);
    site.modules = std::move(*scopes);
    site.moduleTypes = dynamoModuleClasses(*np);
    if (!site.frames.empty() && !site.modules.empty())
      sites.push_back(std::move(site));
  }
  if (unscoped)
    m.metadata.emplace_back(kUnscopedNodes, std::to_string(unscoped));
  return sites.empty() ? std::vector<std::string>{} : holdPythonLocals(g, sites);
}

}  // namespace graphlint::onnxio
