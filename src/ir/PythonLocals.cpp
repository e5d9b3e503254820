// Python locals from a torch.export graph's stack traces (PythonLocals.h).
#include "graphlint/ir/PythonLocals.h"

#include "graphlint/ir/ValueFacts.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringSet.h>

#include <algorithm>
#include <limits>

namespace graphlint {
namespace {

constexpr int64_t kAfterGraph = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxAlignedModules = 256;  // module stacks paired with a strict trace's frames

std::string calledFunction(llvm::StringRef code);  // below

// Values one assignment bound, and the names it bound them to. Which value
// went to which name is not known ("q, k, v = x.split(...)" then views of
// each): rebinding any of the names lets all of them go (`x, aux = f(x)`
// then `x = g(x)`: aux is read later anyway, or was a temporary).
struct Binding {
  std::vector<const Value *> values;
  llvm::StringSet<> names;
  bool unread = false;  // bound to names beyond those of the values read later
};

// One module call still running: the statement its frame is at, and what
// that statement produced so far (in this call and the calls it made).
struct OpenCall {
  const TraceFrame *frame = nullptr;
  const std::string *module = nullptr;
  bool helper = false;  // a function call, not a module's forward
  const TraceFrame *statement = nullptr;  // the frame as the statement's first node saw it
  std::vector<const Value *> produced;
  int64_t statementLast = -1;  // index of the statement's newest node
  int64_t callLast = -1;       // index of the call's newest node
  std::vector<Binding> bindings;
  std::vector<const Value *> calleeUnread;  // what the calls the statement made returned unread
  bool calledModule = false;                // the statement called a module
};

class LocalsTracker {
public:
  explicit LocalsTracker(const Graph &g) {
    for (const auto &np : g.nodes()) {
      auto at = static_cast<int64_t>(np->index);
      auto note = [&](const Node &n) {
        for (const Value *in : n.inputs)
          if (in) {
            int64_t &lr = lastRead_[in];
            lr = std::max(lr, at);
          }
      };
      note(*np);
      for (const auto &sub : np->subgraphs())
        forEachGraph(*sub, [&](const Graph &gr) {
          for (const auto &n : gr.nodes())
            note(*n);
        });
      for (const Value *o : np->outputs)
        if (o && o->isGraphOutput())
          lastRead_[o] = kAfterGraph;
    }
  }

  void visit(const Node &node, const AlignedFrames &s) {
    const std::vector<TraceFrame> &f = s.frames;
    size_t common = 0;
    while (common < open_.size() && common < f.size() && continues(common, s))
      ++common;
    bool returned = open_.size() > common;
    while (open_.size() > common)
      closeCall();
    // The caller moved to another statement, or its statement calls a module
    // again: the next turn of a loop (`for b in self.blocks: x = b(x)`) runs
    // the statement anew, and rebinds x.
    if (common > 0 && (open_[common - 1].statement->line != f[common - 1].line || (returned && f.size() > common))) {
      finishStatement(open_[common - 1]);
      open_[common - 1].statement = &f[common - 1];
    }
    for (size_t d = common; d < f.size(); ++d) {
      OpenCall c;
      c.frame = c.statement = &f[d];
      c.module = &s.modules[d];
      c.helper = s.helper[d];
      open_.push_back(std::move(c));
    }
    auto at = static_cast<int64_t>(node.index);
    for (OpenCall &c : open_) {
      for (const Value *o : node.outputs)
        if (o && o->type.kind != TypeKind::Opaque)
          c.produced.push_back(o);
      c.statementLast = c.callLast = at;
    }
  }

  void finish(Graph &g) {
    while (!open_.empty())
      closeCall();
    const auto &nodes = g.nodes();
    for (const auto &[v, at] : heldUntil_)
      if (Node *p = v->producer; p && at >= 0 && static_cast<size_t>(at) < nodes.size())
        p->metadata.emplace_back("held." + std::to_string(v->resultIndex), nodes[static_cast<size_t>(at)]->name);
  }

private:
  // The call at depth d is the one this site runs in: the same module
  // entered from the same statement of the same caller.
  bool continues(size_t d, const AlignedFrames &s) const {
    const OpenCall &c = open_[d];
    const TraceFrame &f = s.frames[d];
    return *c.module == s.modules[d] && c.frame->file == f.file && c.frame->function == f.function &&
           (d == 0 || open_[d - 1].statement->line == s.frames[d - 1].line);
  }

  // A statement ended: the names it assigns now bind what it produced that is
  // read after it (the first names) and, when names are left over, what it
  // returned unread (`attn_output, _ = self.attn(h)`: the attention weights);
  // bindings it rebinds a name of let go after it.
  void finishStatement(OpenCall &c) {
    llvm::SmallVector<llvm::StringRef, 4> names = assignedNames(c.statement->code);
    if (!names.empty()) {
      for (size_t i = 0; i < c.bindings.size();) {
        if (llvm::any_of(names, [&](llvm::StringRef n) { return c.bindings[i].names.count(n); })) {
          release(c.bindings[i], c.statementLast);
          c.bindings.erase(c.bindings.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          ++i;
        }
      }
      Binding read, unread;
      for (const Value *v : c.produced)
        if (readAfter(v, c.statementLast))
          read.values.push_back(v);
      size_t first = std::min(names.size(), std::max<size_t>(read.values.size(), 1));
      for (size_t i = 0; i < first; ++i)
        read.names.insert(names[i]);
      if (first < names.size()) {
        unread.values = returnedUnread(c, read.values, names.size() - first);
        // Fewer values than names: something returned was no tensor of the
        // graph (None, a Python number, a constant the exporter folded). A
        // tuple's extras come last (`return out, position_bias,
        // attn_weights`): the values take the last names.
        for (size_t i = names.size() - std::min(unread.values.size(), names.size() - first); i < names.size(); ++i)
          unread.names.insert(names[i]);
      }
      unread.unread = true;
      for (Binding *b : {&read, &unread})
        if (!b->values.empty())
          c.bindings.push_back(std::move(*b));
    }
    holdHelperLayoutCopies(c);
    c.produced.clear();
    c.calleeUnread.clear();
    c.calledModule = false;
  }

  // A statement that called a function the trace has no frame of (a
  // non-strict trace's `attn_output, attn_weights = attention_interface(
  // ...)`): the function's locals are not seen, but it returns at the
  // statement's end. What it made of one of its arguments by views and
  // copies only (repeat_kv's `key_states`: the key unsqueezed, expanded and
  // reshaped into a copy) is a preparation Python binds to a name
  // (`key_states = repeat_kv(key, n)`), so it is held until the statement
  // ends. Arithmetic results (the scores) may be temporaries and are left to
  // their reads; a view held only holds its base.
  void holdHelperLayoutCopies(const OpenCall &c) {
    if (c.calledModule || c.produced.empty() || calledFunction(c.statement->code).empty())
      return;
    llvm::DenseSet<const Value *> local(c.produced.begin(), c.produced.end());
    for (const Value *v : c.produced) {
      if (!v->producer || readAfter(v, c.statementLast))
        continue;
      // Back through the layout ops to a value from outside the statement;
      // the chain copies where it reshapes an expand, or clones.
      bool copies = false, reshaped = false;
      const Value *at = v;
      for (size_t steps = 0; at && local.count(at) && steps <= local.size(); ++steps) {
        const Node *p = at->producer;
        if (!p || !layoutOnly(*p)) {
          at = nullptr;
          break;
        }
        std::string aten = p->atenName();
        llvm::StringRef op = aten.empty() ? llvm::StringRef(p->opType) : llvm::StringRef(aten);
        if (op == "clone" || op == "contiguous")
          copies = true;
        else if (op == "Reshape" || op == "Flatten" || op == "reshape" || op == "view" || op == "_unsafe_view" ||
                 op == "flatten")
          reshaped = true;
        else if ((op == "Expand" || op == "expand") && reshaped)
          copies = true;
        at = soleTensorInput(*p);
      }
      if (!at || !copies)
        continue;  // arithmetic on the way, or views only: its base is the caller's
      auto [it, inserted] = heldUntil_.try_emplace(v, c.statementLast);
      if (!inserted)
        it->second = std::max(it->second, c.statementLast);
    }
  }

  // A node that only moves or copies its one tensor operand's elements.
  static bool layoutOnly(const Node &n) {
    std::string aten = n.atenName();
    return isViewOp(n) || isLayoutOpName(aten.empty() ? llvm::StringRef(n.opType) : llvm::StringRef(aten)) ||
           aten == "clone" || aten == "contiguous";
  }

  // The one tensor a view or copy reads (an ONNX Reshape's shape operand is
  // a constant, not a second input); null when it reads more.
  static const Value *soleTensorInput(const Node &n) {
    const Value *only = nullptr;
    for (const Value *in : n.inputs) {
      if (!in || isFoldedConstant(in))
        continue;
      if (only)
        return nullptr;
      only = in;
    }
    return only;
  }

  // The values a statement returned that nothing reads after it, for `want`
  // names it binds beyond those of the values read later, first found first:
  // the other outputs of a node whose output is read later
  // (max_pool2d_with_indices' indices); what the modules it called returned
  // unread themselves. A statement that called no module ran a function the
  // trace has no frame of (transformers' attention helper: `return
  // attn_output, attn_weights`, attn_output = (attn_weights @ v).transpose(1,
  // 2)): then the statement's own values that the node making a read value
  // took as inputs, through the view and copy nodes between.
  std::vector<const Value *> returnedUnread(const OpenCall &c, const std::vector<const Value *> &read,
                                            size_t want) const {
    llvm::DenseSet<const Value *> local(c.produced.begin(), c.produced.end());
    llvm::DenseSet<const Value *> taken(read.begin(), read.end());
    std::vector<const Value *> out;
    auto take = [&](const Value *v) {
      if (out.size() < want && v && local.count(v) && !readAfter(v, c.statementLast) && !attentionOperand(v) &&
          taken.insert(v).second)
        out.push_back(v);
    };
    for (const Value *v : read)
      for (const Value *o : v->producer->outputs)
        take(o);
    for (const Value *v : c.calleeUnread)
      take(v);
    for (const Value *v : c.calledModule ? std::vector<const Value *>() : read) {
      const Node *p = v->producer;
      // At most one step per local value: a cyclic graph must not loop.
      for (size_t steps = 0; steps < local.size(); ++steps) {
        const Value *in = soleTensorInput(*p);
        if (!in || !in->producer || !local.count(in))
          break;
        p = in->producer;
      }
      for (const Value *in : p->inputs)
        take(in);
    }
    return out;
  }

  // The innermost open call returned: its locals let go after its last node;
  // what it bound but never read is what it returned unread, to its caller.
  // A helper function's return statement runs no node, so the trace does not
  // show what it returned: what it still binds that nothing reads after it
  // may be, newest binding first (`attn_weights = softmax(...)`, then
  // `return attn_output, attn_weights`); the caller's statement takes as many
  // as it has names left over.
  void closeCall() {
    OpenCall &c = open_.back();
    // `return f(x)` returns what f returned, unread values too (a decorator's
    // wrapper: `return func(*args, **kwargs)`).
    std::vector<const Value *> passed;
    if (llvm::StringRef(c.statement->code).startswith("return "))
      passed = c.calleeUnread;
    finishStatement(c);
    for (const Binding &b : c.bindings)
      release(b, c.callLast);
    // A name that starts with '_' is not returned (`h, _ = self.attn(h)`).
    auto returnable = [](const Binding &b) {
      return llvm::any_of(b.names, [](const auto &n) { return !n.getKey().startswith("_"); });
    };
    std::vector<const Value *> unread;
    if (c.helper) {
      for (auto b = c.bindings.rbegin(); b != c.bindings.rend(); ++b)
        if (returnable(*b))
          for (const Value *v : b->values)
            if (!readAfter(v, c.callLast) && !attentionOperand(v))
              unread.push_back(v);
    } else {
      for (const Binding &b : c.bindings)
        if (b.unread && returnable(b))
          unread.insert(unread.end(), b.values.begin(), b.values.end());
    }
    unread.insert(unread.end(), passed.begin(), passed.end());
    open_.pop_back();
    if (!open_.empty()) {
      open_.back().calleeUnread.insert(open_.back().calleeUnread.end(), unread.begin(), unread.end());
      open_.back().calledModule = true;
    }
  }

  // An operand of scaled_dot_product_attention (the query, key, value, the
  // mask), or of a node of the dynamo ONNX exporter's decomposition of it
  // (which carries the call's FX node): the kernel returns no attention
  // weights, and transformers' SDPA helper returns `attn_output, None`, so
  // none of them is what a caller's `attn_output, attn_weights = ...` binds.
  static bool attentionOperand(const Value *v) {
    return llvm::any_of(v->uses, [](const Use &u) {
      if (!u.user)
        return false;
      std::string a = u.user->atenName();
      if (llvm::StringRef(a).startswith("scaled_dot_product_attention") ||
          llvm::StringRef(a).startswith("_scaled_dot_product_"))
        return true;
      return decomposedAttentionCall(*u.user) != nullptr;
    });
  }

  bool readAfter(const Value *v, int64_t at) const {
    auto it = lastRead_.find(v);
    return it != lastRead_.end() && it->second > at;
  }

  void release(const Binding &b, int64_t at) {
    for (const Value *v : b.values)
      if (!readAfter(v, at - 1)) {  // read at `at` or later: its reads hold it
        auto [it, inserted] = heldUntil_.try_emplace(v, at);
        if (!inserted)
          it->second = std::max(it->second, at);
      }
  }

  llvm::DenseMap<const Value *, int64_t> lastRead_;
  llvm::DenseMap<const Value *, int64_t> heldUntil_;
  std::vector<OpenCall> open_;
};

// A file of torch's own package.
bool inTorchFile(llvm::StringRef file) { return file.contains("/torch/") || file.startswith("torch/"); }

}  // namespace

AlignedFrames alignTraceFrames(const CallSite &s) {
  // torch.nn's own module forwards (a non-strict trace has Linear's frame).
  auto torchModule = [](llvm::StringRef file) { return file.contains("torch/nn/modules/"); };
  AlignedFrames out;
  // Non-strict: one frame per module forward, whatever its function is called.
  bool paired = s.frames.size() == s.modules.size() &&
                llvm::all_of(s.frames, [&](const TraceFrame &f) { return !inTorchFile(f.file) || torchModule(f.file); });
  if (paired) {
    out.frames = s.frames;
    out.modules = s.modules;
    out.helper.assign(s.frames.size(), false);
    return out;
  }
  // Without the modules' classes a forward cannot be told from the torch
  // container (nn.Sequential) around it, which has no frame.
  if (s.moduleTypes.size() != s.modules.size())
    return out;
  // Pairing scans the modules once per frame: a module stack deeper than any
  // model's (a damaged or hostile file) is not paired.
  if (s.modules.size() > kMaxAlignedModules)
    return out;
  // "pkg.sub.Block": its forward is in pkg/sub.py (or pkg/sub/__init__.py);
  // a class of the script that was run, in any file outside torch.
  auto classFileIs = [&](llvm::StringRef type, llvm::StringRef file) {
    size_t dot = type.rfind('.');
    if (dot == llvm::StringRef::npos)
      return false;
    llvm::StringRef mod = type.take_front(dot);
    if (mod == "__main__")
      return !inTorchFile(file);
    std::string path = mod.str();
    std::replace(path.begin(), path.end(), '.', '/');
    for (const std::string &tail : {path + ".py", path + "/__init__.py"})
      if (file == tail || file.endswith("/" + tail))
        return true;
    return false;
  };
  size_t next = 0;  // the outermost module no frame has claimed yet
  size_t firstHelper = 0;  // the helpers since the last module frame: out.frames[firstHelper..]
  for (const TraceFrame &f : s.frames) {
    bool forward = f.function == "forward" && (!inTorchFile(f.file) || torchModule(f.file));
    if (!forward && inTorchFile(f.file))
      continue;  // torch's own machinery (the dynamo export's wrapper, checkpoint)
    if (!forward && out.frames.empty())
      continue;  // the script that called the export (graphlint.record_python_frames records it)
    if (!forward) {
      out.frames.push_back(f);
      out.modules.push_back(next > 0 ? s.modules[next - 1] : std::string());
      out.helper.push_back(true);
      continue;
    }
    // The module whose class's file holds this forward; else (a forward a
    // class inherits from another file) the next module that is not one of
    // torch's own, which have no frame in a strict trace.
    size_t j = next;
    while (j < s.modules.size() && !classFileIs(s.moduleTypes[j], f.file))
      ++j;
    if (j == s.modules.size())
      for (j = next; j < s.modules.size() && llvm::StringRef(s.moduleTypes[j]).startswith("torch."); ++j) {
      }
    if (j >= s.modules.size()) {
      // No module left: a forward the module's own forward calls,
      // `super().forward(x)` (OPT's positional embedding subclasses
      // nn.Embedding), runs as a call inside that module.
      if (next == 0)
        return {};
      out.frames.push_back(f);
      out.modules.push_back(s.modules[next - 1]);
      out.helper.push_back(true);
      continue;
    }
    // The calls between the caller's frame and this forward run inside this
    // module's call: its decorators' wrappers (`wrapped_func`, transformers'
    // `forward_with_checkpointing`), so the next turn of a loop over blocks
    // is a new call of them too.
    for (size_t h = firstHelper; h < out.frames.size(); ++h)
      out.modules[h] = s.modules[j];
    out.frames.push_back(f);
    out.modules.push_back(s.modules[j]);
    out.helper.push_back(false);
    firstHelper = out.frames.size();
    next = j + 1;
  }
  return out;
}

namespace {

// The function a statement's first line calls: `a, b = f(`, `return
// self._attn(`, `x: T = g(`; "" when it calls none, or torch's own
// (`torch.matmul(`, `F.softmax(`), a tensor's method (`x.float()`) or a
// builtin.
std::string calledFunction(llvm::StringRef code) {
  code = code.trim();
  size_t paren = code.find('(');
  if (paren == llvm::StringRef::npos)
    return "";
  llvm::StringRef rhs = code;
  for (size_t i = 0; i < paren; ++i)
    if (code[i] == '=' && (i + 1 >= code.size() || code[i + 1] != '=') &&
        (i == 0 || !llvm::StringRef("=!<>+-*/%&|^@").contains(code[i - 1]))) {
      rhs = code.drop_front(i + 1).ltrim();
      break;
    }
  if (rhs.consume_front("return "))
    rhs = rhs.ltrim();
  size_t end = 0;
  while (end < rhs.size() && (llvm::isAlnum(rhs[end]) || rhs[end] == '_' || rhs[end] == '.'))
    ++end;
  llvm::StringRef callee = rhs.take_front(end);
  if (callee.empty() || end >= rhs.size() || rhs[end] != '(' || llvm::isDigit(callee.front()))
    return "";
  static const llvm::StringSet<> kBuiltins = {"len", "int", "float", "bool", "range", "tuple", "list", "dict",
                                              "min", "max", "sum", "abs", "isinstance", "getattr", "super", "zip",
                                              "enumerate", "print", "round", "all", "any", "map", "str", "type"};
  if (callee.count('.') == 0)
    return kBuiltins.count(callee) ? "" : callee.str();
  // A method of the module (not a submodule: its forward would have a frame).
  if (callee.startswith("self.") && callee.count('.') == 1)
    return callee.str();
  return "";
}

// A node that makes a tensor of its own (not a view, a layout op an
// exporter writes for one, or a no-op conversion).
bool allocates(const Node &n) {
  if (isViewOp(n) || isNoopConversion(n))
    return false;
  for (int a : n.outputAliasesInput)
    if (a >= 0)
      return false;
  static const llvm::StringSet<> kLayout = {"Transpose", "Slice", "Split", "Expand", "Shape", "Constant", "Identity"};
  return !kLayout.count(n.opType);
}

}  // namespace

std::vector<std::string> unseenHelperCalls(const std::vector<CallSite> &sites) {
  // A frame that is no module forward (and not torch's own) is a helper the
  // trace records: the helpers' locals are seen.
  for (const CallSite &s : sites)
    for (const TraceFrame &f : s.frames)
      if (f.function != "forward" && !inTorchFile(f.file))
        return {};
  // One run of a statement: the consecutive sites whose frames pass
  // through it (a loop's next turn, or the next block's, is another run).
  struct Run {
    const TraceFrame *frame = nullptr;
    size_t depth = 0;
    unsigned kernels = 0;
  };
  auto same = [](const TraceFrame &a, const TraceFrame &b) { return a.line == b.line && a.file == b.file; };
  std::vector<Run> runs;
  llvm::StringSet<> modules;  // every module path a site ran in
  for (const CallSite &s : sites)
    for (const std::string &m : s.modules)
      modules.insert(m);
  // `self.fc(h).relu()` calls a submodule, whose kernels have its own
  // scope; the ones at this statement are the tensor methods on its result.
  auto callsSubmodule = [&](const CallSite &s, llvm::StringRef callee) {
    if (!callee.consume_front("self.") || s.modules.empty())
      return false;
    const std::string &owner = s.modules.back();
    return modules.count(owner.empty() ? callee.str() : owner + "." + callee.str()) > 0;
  };
  bool open = false;  // runs.back() still runs
  for (const CallSite &s : sites) {
    if (!s.node || s.frames.empty())
      continue;
    if (open && !(s.frames.size() > runs.back().depth && same(s.frames[runs.back().depth], *runs.back().frame)))
      open = false;
    const TraceFrame &f = s.frames.back();
    std::string callee = allocates(*s.node) && !inTorchFile(f.file) ? calledFunction(f.code) : "";
    if (callee.empty() || callsSubmodule(s, callee))
      continue;  // a view, inside a torch module, a statement of torch calls, or a submodule's
    if (!open || runs.back().depth != s.frames.size() - 1) {
      runs.push_back({&f, s.frames.size() - 1, 0});
      open = true;
    }
    ++runs.back().kernels;
  }
  // The calls that ran the most kernels first: the helper most likely to
  // hold a large local (transformers' attention) leads the caveat.
  std::stable_sort(runs.begin(), runs.end(), [](const Run &a, const Run &b) { return a.kernels > b.kernels; });
  std::vector<std::string> out;
  llvm::StringSet<> seen;
  for (const Run &r : runs) {
    std::string at = r.frame->file + ":" + std::to_string(r.frame->line);
    if (r.kernels >= 2 && seen.insert(at).second)
      out.push_back(at + ": " + llvm::StringRef(r.frame->code).trim().str());
  }
  return out;
}

std::vector<std::string> holdPythonLocals(Graph &g, const std::vector<CallSite> &sites) {
  // The tracker keeps pointers into the frames while their calls are open.
  std::vector<std::pair<const Node *, AlignedFrames>> aligned;
  for (const CallSite &s : sites)
    if (s.node)
      if (AlignedFrames a = alignTraceFrames(s); !a.frames.empty())
        aligned.emplace_back(s.node, std::move(a));
  LocalsTracker t(g);
  for (const auto &[node, frames] : aligned)
    t.visit(*node, frames);
  t.finish(g);
  return unseenHelperCalls(sites);
}

}  // namespace graphlint
