// Python locals from a torch.export graph's stack traces (PythonLocals.h).
#include "graphlint/ir/PythonLocals.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/StringSet.h>

#include <algorithm>
#include <limits>

namespace graphlint {
namespace {

constexpr int64_t kAfterGraph = std::numeric_limits<int64_t>::max();

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

  void visit(const CallSite &s) {
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
      open_.push_back(std::move(c));
    }
    auto at = static_cast<int64_t>(s.node->index);
    for (OpenCall &c : open_) {
      for (const Value *o : s.node->outputs)
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
  bool continues(size_t d, const CallSite &s) const {
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
    c.produced.clear();
    c.calleeUnread.clear();
    c.calledModule = false;
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
      if (out.size() < want && v && local.count(v) && !readAfter(v, c.statementLast) && taken.insert(v).second)
        out.push_back(v);
    };
    for (const Value *v : read)
      for (const Value *o : v->producer->outputs)
        take(o);
    for (const Value *v : c.calleeUnread)
      take(v);
    for (const Value *v : c.calledModule ? std::vector<const Value *>() : read) {
      const Node *p = v->producer;
      while (p->inputs.size() == 1 && p->inputs[0] && p->inputs[0]->producer && local.count(p->inputs[0]))
        p = p->inputs[0]->producer;
      for (const Value *in : p->inputs)
        take(in);
    }
    return out;
  }

  // The innermost open call returned: its locals let go after its last node;
  // what it bound but never read is what it returned unread, to its caller.
  void closeCall() {
    OpenCall &c = open_.back();
    finishStatement(c);
    for (const Binding &b : c.bindings)
      release(b, c.callLast);
    // A name that starts with '_' is not returned (`h, _ = self.attn(h)`).
    std::vector<const Value *> unread;
    for (const Binding &b : c.bindings)
      if (b.unread && llvm::any_of(b.names, [](const auto &n) { return !n.getKey().startswith("_"); }))
        unread.insert(unread.end(), b.values.begin(), b.values.end());
    open_.pop_back();
    if (!open_.empty()) {
      open_.back().calleeUnread.insert(open_.back().calleeUnread.end(), unread.begin(), unread.end());
      open_.back().calledModule = true;
    }
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

}  // namespace

void holdPythonLocals(Graph &g, const std::vector<CallSite> &sites) {
  LocalsTracker t(g);
  for (const CallSite &s : sites)
    if (s.node && !s.frames.empty() && s.frames.size() == s.modules.size())
      t.visit(s);
  t.finish(g);
}

}  // namespace graphlint
