// What torch.onnx's optimizer merged or removed, restored where eager keeps
// the tensors apart: deduplicated parameters, nodes computed once for two,
// the copy a torch.cat of one tensor makes (DynamoFacts.h,
// restoreDynamoMerges).
#include "DynamoFacts.h"

#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/ValueFacts.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringSet.h>

#include <map>

namespace graphlint::onnxio {
namespace {

const std::string *fxNodeOf(const Node &n) { return n.metadataValue("pkg.torch.onnx.fx_node"); }

// The name of the FX node that computed `v` (its producer's); empty for a
// graph input, an initializer or a node without one.
llvm::StringRef producerFxName(const Value *v) {
  const std::string *fx = v && v->kind == Value::Kind::NodeOutput && v->producer ? fxNodeOf(*v->producer) : nullptr;
  return fx ? fxNodeName(*fx) : llvm::StringRef();
}

// "layer_norm_12" -> "layer_norm": torch.fx names the nodes of one op `op`,
// `op_1`, `op_2`, ...
llvm::StringRef fxOpBase(llvm::StringRef name) {
  auto [base, number] = name.rsplit('_');
  return !number.empty() && number != name && llvm::all_of(number, llvm::isDigit) ? base : name;
}

// A node of ONNX op `op` at `opset` with one integer attribute, that the
// file does not have.
Node *addOnnxNode(Graph &g, std::string name, llvm::StringRef op, int64_t opset, const char *attribute,
                  int64_t value) {
  Node *c = g.createNode();
  c->name = std::move(name);
  c->opType = op.str();
  c->opsetVersion = opset;
  c->op = OpRegistry::instance().lookup("", op, opset);
  Attribute a;
  a.name = attribute;
  a.kind = AttrKind::Int;
  a.i = value;
  c->attributes.push_back(std::move(a));
  return c;
}

std::string freshName(const Graph &g, std::string name) {
  std::string base = name;
  for (unsigned i = 2; g.findLocal(name); ++i)
    name = base + "." + std::to_string(i);
  return name;
}

// DeduplicateInitializersPass: a parameter or buffer read under its own
// placeholder that the file reads through another's initializer.
class ParamMerges {
public:
  explicit ParamMerges(Model &m) : g_(*m.graph) {
    for (const auto &[target, kind] : signatureInputs(m))
      if (kind == "PARAMETER" || kind == "BUFFER")
        targets_.try_emplace((kind == "PARAMETER" ? "p_" : "b_") + placeholderSuffix(target), target);
    for (const auto &p : g_.params()) {
      if (!p->value)
        continue;
      std::vector<std::string> names = foldedFrom(*p);
      names.push_back(p->value->name);
      for (const std::string &name : names)
        for (const char *prefix : {"p_", "b_"}) {
          std::string placeholder = prefix + placeholderSuffix(name);
          if (!targets_.count(placeholder))
            continue;
          accounted_.insert(placeholder);
          standsFor_[p.get()].push_back(placeholder);
        }
    }
    for (const auto &np : g_.nodes())
      if (const std::string *fx = fxNodeOf(*np))
        for (llvm::StringRef a : fxNodeArgs(*fx))
          if (isPlaceholder(a))
            read_.insert(a);
  }

  void run() {
    if (targets_.empty())
      return;
    for (const auto &np : g_.nodes()) {
      const std::string *fx = fxNodeOf(*np);
      if (!fx)
        continue;
      llvm::SmallVector<llvm::StringRef, 8> args = fxNodeArgs(*fx);
      // The placeholders the FX node read that no initializer of the file
      // stands for, and the initializers the node reads that stand for none
      // of its placeholders: the first were merged into the second.
      llvm::SmallVector<llvm::StringRef, 4> merged;
      for (llvm::StringRef a : args)
        if (targets_.count(a) && !accounted_.count(a))
          merged.push_back(a);
      llvm::SmallVector<unsigned, 4> into;
      llvm::SmallPtrSet<const Value *, 4> seen;
      for (unsigned i = 0; i < np->inputs.size(); ++i) {
        const Value *in = np->inputs[i];
        if (!in || in->kind != Value::Kind::Param || !in->param || in->param->computed || !seen.insert(in).second)
          continue;
        auto stands = standsFor_.find(in->param);
        if (stands == standsFor_.end())
          continue;  // a constant of the exporter's, no parameter or buffer
        if (llvm::none_of(stands->second, [&](const std::string &p) { return llvm::is_contained(args, p); }))
          into.push_back(i);
      }
      if (merged.empty() || merged.size() != into.size())
        continue;
      for (size_t k = 0; k < merged.size(); ++k)
        Graph::replaceInput(*np, into[k], restored(merged[k], *np->inputs[into[k]]));
    }
  }

  // For a copy of a node the optimizer merged with an equal one: the module
  // whose parameters the lost FX node read in place of `from`'s, which stands
  // for a parameter of module M (".weight" of "blocks.0.ln1"): the one
  // sibling of M (same parent) whose parameters nothing in the file reads or
  // stands for, with an attribute of that name (GPT-NeoX's
  // post_attention_layernorm beside input_layernorm). Empty when none or
  // several.
  std::string lostSibling(const Value &from) const {
    std::string target = targetOf(from);
    if (target.empty())
      return {};
    auto [module, attribute] = llvm::StringRef(target).rsplit('.');
    llvm::StringRef parent = module.contains('.') ? module.rsplit('.').first : llvm::StringRef();
    std::string found;
    for (const auto &e : targets_) {
      llvm::StringRef t = e.getValue();
      auto [m, a] = t.rsplit('.');
      if (a != attribute || m == module || (m.contains('.') ? m.rsplit('.').first : llvm::StringRef()) != parent ||
          !unread(e.getKey()))
        continue;
      if (!found.empty() && found != m)
        return {};  // two candidates
      found = m.str();
    }
    return found;
  }

  // The module whose parameter or buffer `v` stands for ("blocks.0.ln1").
  std::string moduleOf(const Value &v) const { return llvm::StringRef(targetOf(v)).rsplit('.').first.str(); }

  // A copy of `from` named as module `module`'s parameter of the same
  // attribute; null when the signature has none.
  Value *restoreIn(llvm::StringRef module, const Value &from) {
    std::string target = targetOf(from);
    std::string want = (module + "." + llvm::StringRef(target).rsplit('.').second).str();
    for (const auto &e : targets_)
      if (e.getValue() == want && unread(e.getKey()))
        return restored(e.getKey(), from);
    return nullptr;
  }

  // The parameter a placeholder names, a copy of the initializer it was
  // merged into (equal bytes, so equal type and payload).
  Value *restored(llvm::StringRef placeholder, const Value &into) {
    auto it = made_.find(placeholder);
    if (it != made_.end())
      return it->second;
    const Param &from = *into.param;
    Param *p = g_.createParam();
    p->tensor = from.tensor;
    p->tensor.name = targets_.lookup(placeholder);
    p->externalFileExists = from.externalFileExists;
    p->buffer = from.buffer;
    p->trained = placeholder.startswith("p_");
    p->metadata = {{"pkg.torch.onnx.original_node_name", placeholder.str()},
                   {kMergedInto, into.name}};
    Value *v = g_.createValue(freshName(g_, p->tensor.name), Value::Kind::Param);
    v->type = into.type;
    v->device = into.device;
    v->requiresGrad = into.requiresGrad;
    v->param = p;
    p->value = v;
    made_.try_emplace(placeholder, v);
    standsFor_[p].push_back(placeholder.str());
    return v;
  }

private:
  // The module path of the one parameter or buffer an initializer stands for.
  std::string targetOf(const Value &v) const {
    auto it = v.param ? standsFor_.find(v.param) : standsFor_.end();
    if (it == standsFor_.end() || it->second.size() != 1)
      return {};
    return targets_.lookup(it->second.front());
  }

  bool unread(llvm::StringRef placeholder) const {
    return !accounted_.count(placeholder) && !read_.count(placeholder) && !made_.count(placeholder);
  }

  Graph &g_;
  llvm::StringMap<std::string> targets_;  // placeholder -> module path, parameters and buffers
  llvm::StringSet<> accounted_;  // placeholders some initializer stands for
  llvm::StringSet<> read_;  // placeholders some FX node of the file read
  llvm::DenseMap<const Param *, std::vector<std::string>> standsFor_;
  llvm::StringMap<Value *> made_;
};

// CommonSubexpressionEliminationPass: an FX node whose value the file
// computes once for two FX nodes of the same op (ln1(x) and ln2(x) once
// their equal weights were merged). Eager runs both.
class NodeMerges {
public:
  NodeMerges(Graph &g, ParamMerges &params, int64_t opset) : g_(g), params_(params), opset_(opset) {
    for (const auto &np : g_.nodes())
      nodeNames_.insert(np->name);
    for (const auto &np : g_.nodes())
      if (const std::string *fx = fxNodeOf(*np))
        if (llvm::StringRef name = fxNodeName(*fx); !name.empty())
          byFxNode_[name].push_back(np.get());
  }

  void run() {
    // Per FX node the file lost: the value it was merged into and the
    // operands that read it, in node order.
    std::map<std::string, std::pair<Value *, std::vector<Use>>> lost;
    for (const auto &np : g_.nodes()) {
      const std::string *fx = fxNodeOf(*np);
      if (!fx)
        continue;
      llvm::StringRef own = fxNodeName(*fx);
      llvm::SmallVector<llvm::StringRef, 8> args = fxNodeArgs(*fx);
      noteLostCat(*np, own, args);
      for (llvm::StringRef a : args) {
        if (inFile(a))
          continue;
        // The operand computed by another FX node of a's op, which the node
        // does not read by its own name.
        Value *into = nullptr;
        unsigned operand = 0, found = 0;
        for (unsigned i = 0; i < np->inputs.size(); ++i) {
          Value *in = np->inputs[i];
          llvm::StringRef z = producerFxName(in);
          if (z.empty() || z == own || llvm::is_contained(args, z) || fxOpBase(z) != fxOpBase(a))
            continue;
          if (in != into)
            ++found;
          into = in;
          operand = i;
        }
        // CSE, not an identity the optimizer removed (`x.float().float()`):
        // the kept value is also read under its own FX node's name.
        if (found != 1 || !readUnderItsName(*into))
          continue;
        auto &entry = lost[a.str()];
        if (entry.first && entry.first != into)
          continue;  // read through two different values: not one merge
        entry.first = into;
        entry.second.push_back({np.get(), operand});
      }
    }
    if (lost.empty() && lostCats_.empty())
      return;
    // Clone each merged computation before its first lost reader.
    llvm::DenseMap<const Node *, std::vector<Node *>> before, after;
    for (auto &[name, entry] : lost) {
      auto &[into, readers] = entry;
      std::vector<Node *> clones = cloneComputation(*into, name);
      if (clones.empty())
        continue;
      const Node *first = readers.front().user;
      for (const Use &u : readers)
        if (u.user->index < first->index)
          first = u.user;
      Value *copy = clones.back()->outputs[into->resultIndex];
      for (const Use &u : readers)
        Graph::replaceInput(*u.user, u.operand, copy);
      auto &slot = before[first];
      slot.insert(slot.end(), clones.begin(), clones.end());
    }
    // Each removed cat's copy right after what it copied, where eager
    // makes it (the operand, a temporary of the cat's statement, dies there).
    for (auto &[name, reads] : lostCats_) {
      Value *into = catSource(reads);
      if (!into)
        continue;
      Node *copy = copyOf(*into, name);
      for (const auto &[v, u] : reads)
        if (v == into)
          Graph::replaceInput(*u.user, u.operand, copy->outputs[0]);
      after[into->producer].push_back(copy);
    }
    g_.placeNodes(before, after);
  }

private:
  // torch.cat of one tensor and empty ones (Phi-3's `cat([q_embed,
  // q_pass])` with nothing left to pass): the optimizer removes the Concat,
  // eager's cat allocates a copy. A node whose FX node read one `cat` the
  // file lost, and exactly one operand no FX node it read computed, read
  // that cat's copy of it. Lost views (a reshape the optimizer folded into
  // another) copy nothing: an operand a view op produced is theirs.
  void noteLostCat(Node &n, llvm::StringRef own, llvm::ArrayRef<llvm::StringRef> args) {
    llvm::StringRef cat;
    bool lostViews = false;
    for (llvm::StringRef a : args) {
      if (inFile(a))
        continue;
      llvm::StringRef base = fxOpBase(a);
      if (isLayoutOpName(base)) {
        lostViews = true;
        continue;
      }
      if (base != "cat" || !cat.empty())
        return;  // another lost value, or two cats: which operand is which is not known
      cat = a;
    }
    if (cat.empty())
      return;
    Value *into = nullptr;
    unsigned operand = 0;
    for (unsigned i = 0; i < n.inputs.size(); ++i) {
      Value *in = n.inputs[i];
      llvm::StringRef z = producerFxName(in);
      // Another call of the reader's op: the optimizer shared part of its
      // decomposition (one mask for every layer's attention).
      if (z.empty() || z == own || llvm::is_contained(args, z) || fxOpBase(z) == fxOpBase(own))
        continue;
      if (lostViews && isDefaultDomain(in->producer->domain) && isLayoutOpName(in->producer->opType))
        continue;
      if (into && in != into)
        return;  // two unexplained operands
      into = in;
      operand = i;
    }
    if (!into || !into->producer->subgraphs().empty())
      return;
    lostCats_[cat.str()].push_back({into, {&n, operand}});
  }

  // The value a lost cat copied, from the operands its readers read in its
  // place. Readers that read it beside a lost view (Phi-3's mask at batch 8,
  // expanded from a bool) can name another value: a bool one is the view's
  // source, not the query the cat made. Null when no one value is left.
  static Value *catSource(const std::vector<std::pair<Value *, Use>> &reads) {
    for (bool strict : {true, false}) {
      llvm::SmallPtrSet<Value *, 2> values;
      for (const auto &read : reads)
        if (!strict || read.first->type.dtype != DType::Bool)
          values.insert(read.first);
      if (!values.empty())
        return values.size() == 1 ? *values.begin() : nullptr;
    }
    return nullptr;
  }

  // A one-input Concat copying `v`, named after the lost cat, in the
  // producer's module and statement; the Python local the producer's output
  // was held in (`q_embed = torch.cat(...)`) is the copy's.
  Node *copyOf(Value &v, llvm::StringRef name) {
    Node &producer = *v.producer;
    Node *c = addOnnxNode(g_, freshNodeName("node_" + name.str()), "Concat", opset_, "axis", 0);
    c->loc = producer.loc;
    c->modulePath = producer.modulePath;
    std::string held = "held." + std::to_string(v.resultIndex);
    for (auto it = producer.metadata.begin(); it != producer.metadata.end();) {
      if (it->first == held) {
        c->metadata.emplace_back("held.0", it->second);
        it = producer.metadata.erase(it);
        continue;
      }
      if (it->first != "pkg.torch.onnx.fx_node" && !llvm::StringRef(it->first).startswith("held."))
        c->metadata.push_back(*it);
      ++it;
    }
    c->metadata.emplace_back("pkg.torch.onnx.fx_node",
                             "%" + name.str() + " : [num_users=1] = call_function[target=torch.ops.aten.cat.default]"
                             "(args = ([%" + producerFxName(&v).str() + "],), kwargs = {})");
    c->metadata.emplace_back(kRestoredCopy, v.name);
    c->inputs.push_back(&v);
    v.uses.push_back({c, 0});
    Value *out = g_.createValue(freshName(g_, name.str()), Value::Kind::NodeOutput);
    out->type = v.type;
    out->device = v.device;
    out->requiresGrad = v.requiresGrad;
    out->producer = c;
    c->outputs.push_back(out);
    return c;
  }

  // An FX argument the file still has: a placeholder, a value under its
  // name, or a node that carries that FX node (its value renamed).
  bool inFile(llvm::StringRef arg) const {
    return isPlaceholder(arg) || g_.findLocal(arg) || byFxNode_.count(arg);
  }

  static bool readUnderItsName(const Value &v) {
    llvm::StringRef z = producerFxName(&v);
    return llvm::any_of(v.uses, [&](const Use &u) {
      const std::string *fx = fxNodeOf(*u.user);
      return fx && llvm::is_contained(fxNodeArgs(*fx), z);
    });
  }

  // Copies of the nodes of `v`'s FX node that `v` depends on, in order; the
  // last one computes the copy of `v`. Empty when they hold a subgraph.
  std::vector<Node *> cloneComputation(const Value &v, llvm::StringRef name) {
    const Node &producer = *v.producer;
    llvm::StringRef z = producerFxName(&v);
    const std::vector<Node *> &group = byFxNode_[z];
    llvm::SmallPtrSet<const Node *, 8> needed{&producer};
    for (auto it = group.rbegin(); it != group.rend(); ++it)
      if (needed.count(*it))
        for (const Value *in : (*it)->inputs)
          if (in && in->kind == Value::Kind::NodeOutput && llvm::is_contained(group, in->producer))
            needed.insert(in->producer);
    std::vector<const Node *> sources;
    for (const Node *n : group)
      if (needed.count(n)) {
        if (!n->subgraphs().empty())
          return {};
        sources.push_back(n);
      }
    llvm::DenseMap<const Value *, Value *> copies;
    std::vector<Node *> out;
    for (const Node *src : sources) {
      Node *c = g_.createNode();
      c->name = freshNodeName(src->name + "." + name.str());
      c->opType = src->opType;
      c->domain = src->domain;
      c->opsetVersion = src->opsetVersion;
      c->op = src->op;
      c->attributes = src->attributes;
      c->loc = src->loc;
      c->modulePath = src->modulePath;
      c->docString = src->docString;
      for (const auto &[key, value] : src->metadata) {
        if (llvm::StringRef(key).startswith("held."))
          continue;  // a local of the statement that computed the original
        if (key == "pkg.torch.onnx.fx_node")
          c->metadata.emplace_back(key, "%" + name.str() + value.substr(1 + z.size()));
        else
          c->metadata.emplace_back(key, value);
      }
      c->metadata.emplace_back(kMergedInto, src->name);
      // The lost FX node's own parameters, and its module, where the file
      // lets them be found.
      std::string sibling;
      for (const Value *in : src->inputs)
        if (in && in->kind == Value::Kind::Param && sibling.empty()) {
          sibling = params_.lostSibling(*in);
          if (!sibling.empty() && src->modulePath == params_.moduleOf(*in))
            c->modulePath = sibling;
        }
      for (unsigned i = 0; i < src->inputs.size(); ++i) {
        Value *in = src->inputs[i];
        auto it = in ? copies.find(in) : copies.end();
        Value *use = it != copies.end() ? it->second : in;
        if (!sibling.empty() && in && in->kind == Value::Kind::Param)
          if (Value *own = params_.restoreIn(sibling, *in))
            use = own;
        c->inputs.push_back(use);
        if (use)
          use->uses.push_back({c, i});
      }
      for (unsigned i = 0; i < src->outputs.size(); ++i) {
        const Value *o = src->outputs[i];
        if (!o) {
          c->outputs.push_back(nullptr);
          continue;
        }
        bool main = src == &producer && i == v.resultIndex;
        Value *co = g_.createValue(freshName(g_, main ? name.str() : o->name + "." + name.str()),
                                   Value::Kind::NodeOutput);
        co->type = o->type;
        co->device = o->device;
        co->requiresGrad = o->requiresGrad;
        co->memoryFormat = o->memoryFormat;
        co->producer = c;
        co->resultIndex = i;
        c->outputs.push_back(co);
        copies[o] = co;
      }
      out.push_back(c);
    }
    return out;  // the producer's copy last: the others are what it reads
  }

  std::string freshNodeName(std::string name) {
    std::string base = name;
    for (unsigned i = 2; !nodeNames_.insert(name).second; ++i)
      name = base + "." + std::to_string(i);
    return name;
  }

  Graph &g_;
  ParamMerges &params_;
  int64_t opset_;
  llvm::StringMap<std::vector<Node *>> byFxNode_;
  llvm::StringSet<> nodeNames_;
  std::map<std::string, std::vector<std::pair<Value *, Use>>> lostCats_;  // per lost cat: (operand, reader)
};

// A cast of a parameter the optimizer folded: autocast's bfloat16 copy of a
// weight (the FX graph's `aten._to_copy`), folded with the transpose the
// exporter adds for MatMul into one initializer of the lower precision that
// stands for the parameter. Eager keeps the parameter, float32 (the dtype
// autocast casts from), and makes the copy in the forward, where linear saves
// it for backward. The initializer becomes the parameter again, float32 and
// named after it, and a Cast just before its first reader makes the copy its
// readers read (kRestoredCopy: the parameter). In the layout of the fold.
void restoreFoldedCasts(Model &m, int64_t opset) {
  Graph &g = *m.graph;
  llvm::StringMap<std::string> params;  // target -> placeholder
  for (const auto &[target, kind] : signatureInputs(m))
    if (kind == "PARAMETER")
      params.try_emplace(target, "p_" + placeholderSuffix(target));
  std::vector<std::pair<Param *, std::string>> casts;  // (initializer, its `_to_copy` FX node)
  for (const auto &p : g.params()) {
    Value *v = p->value;
    if (!v || v->uses.empty() || (v->type.dtype != DType::BFloat16 && v->type.dtype != DType::Float16))
      continue;
    std::string param, cast = fxOpBase(v->name) == "_to_copy" ? v->name : "";  // the fold is the cast's value
    unsigned others = 0;
    for (const std::string &name : foldedFrom(*p)) {
      if (params.count(name))
        others += !param.empty(), param = name;
      else if (fxOpBase(name) == "_to_copy")
        cast = name;
      else if (!llvm::StringRef(name).startswith("val_"))
        ++others;  // an FX node that computes, or a buffer
    }
    if (!param.empty() && !cast.empty() && !others)
      casts.emplace_back(p.get(), param);
  }
  if (casts.empty())
    return;
  llvm::DenseMap<const Node *, std::vector<Node *>> before;
  for (auto &cast : casts) {
    Param *p = cast.first;
    const std::string &target = cast.second;  // named: a lambda below reads it
    Value *weight = p->value;
    const DType low = weight->type.dtype;
    const Node *first = nullptr;
    for (const Use &u : weight->uses)
      if (u.user && (!first || u.user->index < first->index))
        first = u.user;
    std::string castName = freshName(g, weight->name);  // the name its readers knew, once the parameter has its own
    g.renameValue(*weight, freshName(g, target));
    weight->type.dtype = DType::Float;
    p->tensor.name = weight->name;
    p->tensor.dtype = DType::Float;
    p->tensor.byteSize = weight->type.byteSize().value_or(0);
    p->tensor.storage = TensorLiteral::Storage::Empty;  // its payload is the copy's, not the parameter's
    p->tensor.data = {};
    // The parameter itself now, trained, allocated before the step: not the
    // computed fold markDynamoParams took it for.
    p->trained = true;
    p->computed = p->heldByCaller = false;
    llvm::erase_if(p->metadata, [](const auto &kv) { return kv.first == "pkg.onnxscript.optimizer.folded_from"; });
    llvm::erase_if(m.metadata, [&](const auto &kv) { return kv.first == kFoldedParameter && kv.second == target; });
    // DType values are ONNX's TensorProto codes.
    Node *c = addOnnxNode(g, "node_" + castName, "Cast", opset, "to", static_cast<int64_t>(low));
    if (first) {
      c->loc = first->loc;
      c->modulePath = first->modulePath;
    }
    c->metadata.emplace_back(kRestoredCopy, target);
    Value *copy = g.createValue(g.findLocal(castName) ? freshName(g, castName) : castName, Value::Kind::NodeOutput);
    copy->type = weight->type;
    copy->type.dtype = low;
    copy->device = weight->device;
    copy->requiresGrad = weight->requiresGrad;
    copy->producer = c;
    c->outputs.push_back(copy);
    std::vector<Use> readers(weight->uses.begin(), weight->uses.end());
    for (const Use &u : readers)
      Graph::replaceInput(*u.user, u.operand, copy);
    c->inputs.push_back(weight);
    weight->uses.push_back({c, 0});
    if (first)
      before[first].push_back(c);
  }
  g.placeNodes(before);
}

// An all-pass attention mask, which eager never builds nor adds (docs/
// memory.md, "An attention mask eager skips"), added to lower-precision
// scores through the Cast the exporter's type promotion inserted: in eager
// the scores keep their dtype, and so do the softmax and dropout after them,
// and autocast's cast before the next matmul copies nothing. Those values
// take the scores' dtype (a Cast to it is then a no-op, a view).
void followEagerDtypesAfterSkippedMasks(Graph &g) {
  auto keepsDtype = [](const Node &u) {
    return isDefaultDomain(u.domain) && (u.opType == "Softmax" || u.opType == "Dropout" || u.opType == "Identity" ||
                                         u.opType == "Reshape" || u.opType == "Transpose");
  };
  for (const auto &np : g.nodes()) {
    Node &n = *np;
    if (!isDefaultDomain(n.domain) || n.opType != "Add" || n.inputs.size() != 2 || n.outputs.empty() ||
        !n.outputs[0])
      continue;
    for (unsigned k = 0; k < 2; ++k) {
      Value *cast = n.inputs[k];
      const Value *mask = n.inputs[1 - k];
      if (!cast || !mask || !cast->producer || !isPromotionCast(*cast->producer) ||
          cast->producer->inputs.empty() || !cast->producer->inputs[0])
        continue;
      const Value *scores = cast->producer->inputs[0];
      const DType traced = n.outputs[0]->type.dtype, eager = scores->type.dtype;
      if (eager == traced || !isFloating(eager) || !(scores->type.shape == n.outputs[0]->type.shape) ||
          !isAllPassMask(mask))
        continue;
      cast->type.dtype = eager;
      std::vector<Value *> work{n.outputs[0]};
      while (!work.empty()) {
        Value *v = work.back();
        work.pop_back();
        if (v->type.dtype != traced)
          continue;
        v->type.dtype = eager;
        for (const Use &u : v->uses)
          if (u.user && u.operand == 0 && keepsDtype(*u.user) && !u.user->outputs.empty() && u.user->outputs[0])
            work.push_back(u.user->outputs[0]);
      }
      break;
    }
  }
}

}  // namespace

void restoreDynamoMerges(Model &m) {
  // Only the dynamo exporter records FX nodes: any other file costs one scan.
  if (!m.graph || llvm::none_of(m.graph->nodes(), [](const auto &np) { return fxNodeOf(*np) != nullptr; }))
    return;
  restoreFoldedCasts(m, m.opsetVersion(""));
  ParamMerges params(m);
  params.run();
  NodeMerges(*m.graph, params, m.opsetVersion("")).run();
  followEagerDtypesAfterSkippedMasks(*m.graph);
}

}  // namespace graphlint::onnxio
