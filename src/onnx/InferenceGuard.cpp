#include "InferenceGuard.h"

#include "GraphBuilder.h"
#include "graphlint/ir/CheckedMath.h"
#include "graphlint/ir/OpRegistry.h"

#include <fmt/format.h>

#include <map>

namespace graphlint::onnxio {
namespace {

using AP = onnx::AttributeProto;

std::string key(const std::string &domain, const std::string &name) { return domain + ":" + name; }

std::string normDomain(const std::string &d) { return d == "ai.onnx" ? std::string() : d; }

InferenceHazard invalid(std::string why) { return {std::move(why), true}; }

// Window attributes the conv/pool family reads: name -> smallest valid value.
const std::map<std::string, int64_t> &windowAttrMinimum() {
  static const std::map<std::string, int64_t> m = {
      {"strides", 1}, {"dilations", 1}, {"kernel_shape", 1}, {"pads", 0}, {"output_padding", 0}, {"group", 1}};
  return m;
}

std::string ints(const AP &a) {
  if (a.type() == AP::INT)
    return std::to_string(a.i());
  std::string s;
  for (int i = 0; i < a.ints_size(); ++i)
    s += (i ? "," : "") + std::to_string(a.ints(i));
  return "[" + s + "]";
}

// Checks that need no value types: arity, formal parameters, attributes.
std::optional<InferenceHazard> checkStructure(const onnx::NodeProto &np, const onnx::OpSchema &schema) {
  if (np.input_size() < schema.min_input() || np.input_size() > schema.max_input())
    return invalid(fmt::format("it has {} inputs; {}-{} takes {} to {}", np.input_size(), np.op_type(),
                               schema.since_version(), schema.min_input(), schema.max_input()));
  if (np.output_size() < schema.min_output() || np.output_size() > schema.max_output())
    return invalid(fmt::format("it has {} outputs; {}-{} produces {} to {}", np.output_size(), np.op_type(),
                               schema.since_version(), schema.min_output(), schema.max_output()));
  using Opt = onnx::OpSchema::FormalParameterOption;
  auto requiredNamed = [&](const std::vector<onnx::OpSchema::FormalParameter> &formals, int count,
                           auto nameAt, const char *what) -> std::optional<InferenceHazard> {
    for (int i = 0; i < count && !formals.empty(); ++i) {
      // A variadic parameter is the last formal; its first min_arity
      // occurrences are required.
      size_t fi = std::min<size_t>(static_cast<size_t>(i), formals.size() - 1);
      const auto &f = formals[fi];
      bool required = f.GetOption() == Opt::Single ||
                      (f.GetOption() == Opt::Variadic && static_cast<size_t>(i) - fi < static_cast<size_t>(f.GetMinArity()));
      if (required && nameAt(i).empty())
        return invalid(fmt::format("{} {} ('{}') is required but its name is empty", what, i, f.GetName()));
    }
    return std::nullopt;
  };
  if (auto h = requiredNamed(schema.inputs(), np.input_size(), [&](int i) { return np.input(i); }, "input"))
    return h;
  if (auto h = requiredNamed(schema.outputs(), np.output_size(), [&](int i) { return np.output(i); }, "output"))
    return h;
  const auto &declared = schema.attributes();
  for (const auto &[name, attr] : declared) {
    if (!attr.required)
      continue;
    bool present = false;
    for (const auto &a : np.attribute())
      present |= a.name() == name;
    if (!present)
      return invalid(fmt::format("its required attribute '{}' is missing", name));
  }
  for (const auto &a : np.attribute()) {
    if (a.has_ref_attr_name())
      continue;  // a function attribute reference, bound at the call
    auto it = declared.find(a.name());
    if (it == declared.end())
      continue;  // check_node reports unknown attributes
    if (a.type() != it->second.type)
      return invalid(fmt::format("attribute '{}' has type {}, but {} declares {}", a.name(),
                                 AP::AttributeType_Name(a.type()), np.op_type(),
                                 AP::AttributeType_Name(it->second.type)));
    // Window ranges apply to the conv/pool family (the schemas with strides);
    // Pad-2's pads, for one, may be negative (cropping).
    auto min = windowAttrMinimum().find(a.name());
    if (!declared.count("strides") || min == windowAttrMinimum().end() || (a.type() != AP::INT && a.type() != AP::INTS))
      continue;
    bool inRange = a.type() == AP::INT ? a.i() >= min->second && a.i() <= kMaxInferredDim : true;
    for (int64_t v : a.ints())
      inRange &= v >= min->second && v <= kMaxInferredDim;
    if (!inRange)
      return invalid(fmt::format("{} {} must be between {} and 2^40 (got {})", np.op_type(), a.name(), min->second,
                                 ints(a)));
  }
  return std::nullopt;
}

// The declared shape of a dense or sparse tensor type, or null.
const onnx::TensorShapeProto *shapeOf(const onnx::TypeProto *t) {
  if (t && t->has_tensor_type() && t->tensor_type().has_shape())
    return &t->tensor_type().shape();
  if (t && t->has_sparse_tensor_type() && t->sparse_tensor_type().has_shape())
    return &t->sparse_tensor_type().shape();
  return nullptr;
}

std::optional<InferenceHazard> checkDims(const onnx::TypeProto &t, const std::string &name) {
  const onnx::TensorShapeProto *s = shapeOf(&t);
  if (!s)
    return std::nullopt;
  const auto &shape = *s;
  if (shape.dim_size() > kMaxRank)
    return InferenceHazard{fmt::format("'{}' has rank {} (more than {})", name, shape.dim_size(), kMaxRank), false};
  for (const auto &d : shape.dim()) {
    if (!d.has_dim_value())
      continue;
    if (d.dim_value() < 0)
      return invalid(fmt::format("'{}' has a negative dim {}", name, d.dim_value()));
    if (d.dim_value() > kMaxInferredDim)
      return InferenceHazard{fmt::format("'{}' has a dim of {} (more than 2^40)", name, d.dim_value()), false};
  }
  return std::nullopt;
}

class Guard {
public:
  explicit Guard(const GuardScope &s) : scope_(s) {}

  // `types` is true for the node handed to ONNX directly (its input types
  // are known); nodes inside subgraphs and function bodies are checked on
  // structure and declared types only.
  std::optional<InferenceHazard> node(const onnx::NodeProto &np, const std::unordered_map<std::string, int> &opsets,
                                      unsigned depth, bool types) {
    if (depth > kMaxGraphDepth)
      return invalid(fmt::format("subgraphs and function calls nest more than {} levels", kMaxGraphDepth));
    std::string domain = normDomain(np.domain());
    std::string fn = key(np.domain(), np.op_type());
    if (auto it = scope_.functions.find(fn); it != scope_.functions.end()) {
      if (scope_.recursiveFunctions.count(fn))
        return invalid(fmt::format("it calls the model-local function '{}', which calls itself", fn));
      if (scope_.safeFunctions.count(fn) || !visiting_.insert(fn).second)
        return std::nullopt;  // checked already, or being checked further up
      std::unordered_map<std::string, int> inner = opsets;
      for (const auto &imp : it->second->opset_import())
        inner[normDomain(imp.domain())] = static_cast<int>(imp.version());
      for (const auto &body : it->second->node())
        if (auto h = node(body, inner, depth + 1, false))
          return InferenceHazard{fmt::format("function '{}' node '{}' ({}): {}", fn, body.name(), body.op_type(),
                                             h->reason),
                                 h->invalid};
      visiting_.erase(fn);
      scope_.safeFunctions.insert(fn);
      return std::nullopt;
    }
    auto ver = opsets.find(domain);
    if (ver == opsets.end())
      return std::nullopt;  // libonnx skips ops it does not know
    auto [schema, current] = schemaOf(domain, np.op_type(), ver->second);
    if (!schema)
      return std::nullopt;
    if (auto h = current ? checkStructure(np, *schema) : std::nullopt)
      return h;
    if (types)
      if (auto h = checkInputTypes(np, *schema))
        return h;
    for (const auto &a : np.attribute()) {
      if (a.has_g())
        if (auto h = graph(a.g(), opsets, depth + 1))
          return h;
      for (const auto &g : a.graphs())
        if (auto h = graph(g, opsets, depth + 1))
          return h;
    }
    return std::nullopt;
  }

private:
  // An op changed in an opset newer than the library is judged by an older
  // schema (ReduceMean-18 takes axes as an input, -13 does not): only the
  // checks that do not depend on the version apply to it (`current` false).
  std::pair<const onnx::OpSchema *, bool> schemaOf(const std::string &domain, const std::string &op, int version) {
    auto look = [&] {
      const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(op, version, domain);
      bool current = schema && OpRegistry::instance().installedSchemaCurrent(domain, op, version);
      return std::make_pair(schema, current);
    };
    if (!scope_.schemas)
      return look();
    std::string key = domain + '\0' + op + '\0' + std::to_string(version);
    auto [it, added] = scope_.schemas->try_emplace(key);
    if (added)
      it->second = look();
    return it->second;
  }

  std::optional<InferenceHazard> graph(const onnx::GraphProto &g, const std::unordered_map<std::string, int> &opsets,
                                       unsigned depth) {
    for (const auto *list : {&g.input(), &g.value_info(), &g.output()})
      for (const auto &vi : *list)
        if (auto h = checkDims(vi.type(), vi.name()))
          return h;
    for (const auto &n : g.node())
      if (auto h = node(n, opsets, depth, false))
        return InferenceHazard{fmt::format("subgraph '{}' node '{}' ({}): {}", g.name(), n.name(), n.op_type(),
                                           h->reason),
                               h->invalid};
    return std::nullopt;
  }

  const onnx::TypeProto *typeOf(const std::string &name) const {
    auto it = name.empty() ? scope_.types.end() : scope_.types.find(name);
    return it == scope_.types.end() ? nullptr : it->second;
  }

  static int rankOf(const onnx::TypeProto *t) {
    const onnx::TensorShapeProto *s = shapeOf(t);
    return s ? s->dim_size() : -1;
  }

  std::optional<InferenceHazard> checkInputTypes(const onnx::NodeProto &np, const onnx::OpSchema &schema) {
    for (const std::string &in : np.input())
      if (const auto *t = typeOf(in))
        if (auto h = checkDims(*t, in))
          return h;
    if (auto h = checkInputRanks(np))
      return h;
    if (!schema.attributes().count("strides"))
      return std::nullopt;
    // The conv/pool family: the data input and the weight share one rank
    // (ONNX indexes one by the other), and spatial dims stay within the
    // range ONNX 1.12 walks through in reasonable time.
    int data = -1, weight = -1;
    for (size_t i = 0; i < schema.inputs().size(); ++i) {
      std::string f = schema.inputs()[i].GetName();
      if ((f == "X" || f == "x") && data < 0)
        data = static_cast<int>(i);
      if (f == "W" || f == "w")
        weight = static_cast<int>(i);
    }
    const onnx::TypeProto *x = data >= 0 && data < np.input_size() ? typeOf(np.input(data)) : nullptr;
    const onnx::TypeProto *w = weight >= 0 && weight < np.input_size() ? typeOf(np.input(weight)) : nullptr;
    int xr = rankOf(x), wr = rankOf(w);
    if (xr >= 0 && wr >= 0 && xr != wr)
      return invalid(fmt::format("its input '{}' has rank {} but its weight '{}' has rank {}", np.input(data), xr,
                                 np.input(weight), wr));
    if (xr >= 0 && xr < 3 && (w || schema.attributes().count("kernel_shape")))
      return invalid(fmt::format("its input '{}' has rank {}; {} needs a batch, a channel and at least one "
                                 "spatial dim",
                                 np.input(data), xr, np.op_type()));
    for (int i = 2; i < xr; ++i) {
      const auto &d = shapeOf(x)->dim(i);
      if (d.has_dim_value() && d.dim_value() > kMaxWindowedDim)
        return InferenceHazard{fmt::format("spatial dim {} of '{}' is {} (ONNX 1.12 infers windows only up to 2^24)",
                                           i, np.input(data), d.dim_value()),
                               false};
    }
    return std::nullopt;
  }

  // Ranks the ONNX 1.12 inference functions index without checking them
  // first (from the operator spec): RNNShapeInference reads dims 0-2 of X, W
  // and R; LayerNormalization normalises its axis against X's rank; and the
  // ops whose output rank is the length of a shape vector would build a
  // TensorShapeProto of that many dims.
  std::optional<InferenceHazard> checkInputRanks(const onnx::NodeProto &np) {
    struct Need {
      int input;
      int minRank, maxRank;
    };
    static const std::map<std::string, std::vector<Need>> needs = {
        {"RNN", {{0, 3, 3}, {1, 3, 3}, {2, 3, 3}, {3, 2, 2}, {4, 1, 1}, {5, 3, 3}}},
        {"GRU", {{0, 3, 3}, {1, 3, 3}, {2, 3, 3}, {3, 2, 2}, {4, 1, 1}, {5, 3, 3}}},
        {"LSTM", {{0, 3, 3}, {1, 3, 3}, {2, 3, 3}, {3, 2, 2}, {4, 1, 1}, {5, 3, 3}, {6, 3, 3}, {7, 2, 2}}},
        {"LayerNormalization", {{0, 1, static_cast<int>(kMaxRank)}}},
    };
    static const std::map<std::string, int> rankFromLength = {{"ConstantOfShape", 0}, {"Reshape", 1}, {"Expand", 1}};
    if (!normDomain(np.domain()).empty())
      return std::nullopt;
    if (auto it = needs.find(np.op_type()); it != needs.end())
      for (const Need &need : it->second) {
        if (need.input >= np.input_size() || np.input(need.input).empty())
          continue;
        int r = rankOf(typeOf(np.input(need.input)));
        if (r >= 0 && (r < need.minRank || r > need.maxRank))
          return invalid(fmt::format("input {} ('{}') has rank {}; {} needs {}", need.input, np.input(need.input), r,
                                     np.op_type(),
                                     need.minRank == need.maxRank ? fmt::format("rank {}", need.minRank)
                                                                  : fmt::format("rank {} or more", need.minRank)));
      }
    if (auto it = rankFromLength.find(np.op_type()); it != rankFromLength.end() && it->second < np.input_size()) {
      const onnx::TypeProto *t = typeOf(np.input(it->second));
      if (rankOf(t) == 1) {
        const auto &d = shapeOf(t)->dim(0);
        if (d.has_dim_value() && d.dim_value() > kMaxRank)
          return InferenceHazard{fmt::format("its shape input '{}' has {} elements, a rank beyond {}",
                                             np.input(it->second), d.dim_value(), kMaxRank),
                                 false};
      }
    }
    return std::nullopt;
  }

  const GuardScope &scope_;
  std::set<std::string> visiting_;
};

// Calls from a list of nodes (and their subgraphs) to model-local functions.
void collectCalls(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                  const std::map<std::string, int> &index, std::set<int> &out) {
  for (const auto &n : nodes) {
    if (auto it = index.find(key(n.domain(), n.op_type())); it != index.end())
      out.insert(it->second);
    for (const auto &a : n.attribute()) {
      if (a.has_g())
        collectCalls(a.g().node(), index, out);
      for (const auto &g : a.graphs())
        collectCalls(g.node(), index, out);
    }
  }
}

}  // namespace

std::optional<InferenceHazard> onnxInferenceHazard(const onnx::NodeProto &np, const GuardScope &scope) {
  return Guard(scope).node(np, scope.opsets, 0, true);
}

std::set<std::string> recursiveFunctions(const onnx::ModelProto &model, std::vector<std::string> &cycles) {
  std::map<std::string, int> index;
  std::vector<std::string> names;
  for (const auto &f : model.functions()) {
    std::string k = key(f.domain(), f.name());
    if (index.emplace(k, static_cast<int>(names.size())).second)
      names.push_back(k);
  }
  std::vector<std::set<int>> calls(names.size());
  for (const auto &f : model.functions())
    collectCalls(f.node(), index, calls[index[key(f.domain(), f.name())]]);
  // Iterative three-colour DFS: a back edge closes a cycle; every function on
  // the stack from its target up is recursive. No recursion here either, so
  // a 100,000-deep call chain cannot overflow the stack.
  std::set<std::string> recursive;
  std::vector<int> colour(names.size(), 0);  // 0 new, 1 on stack, 2 done
  for (size_t root = 0; root < names.size(); ++root) {
    if (colour[root])
      continue;
    std::vector<std::pair<int, std::set<int>::const_iterator>> stack;
    stack.emplace_back(static_cast<int>(root), calls[root].begin());
    colour[root] = 1;
    while (!stack.empty()) {
      auto &[f, next] = stack.back();
      if (next == calls[f].end()) {
        colour[f] = 2;
        stack.pop_back();
        continue;
      }
      int g = *next++;
      if (colour[g] == 0) {
        colour[g] = 1;
        stack.emplace_back(g, calls[g].begin());
      } else if (colour[g] == 1) {
        std::string cycle;
        bool on = false;
        for (const auto &frame : stack) {
          on |= frame.first == g;
          if (on) {
            recursive.insert(names[frame.first]);
            cycle += names[frame.first] + " -> ";
          }
        }
        cycles.push_back(cycle + names[g]);
      }
    }
  }
  // A function that calls a recursive one recurses without end as well.
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t f = 0; f < names.size(); ++f)
      if (!recursive.count(names[f]))
        for (int g : calls[f])
          if (recursive.count(names[g]) && recursive.insert(names[f]).second)
            grew = true;
  }
  return recursive;
}

}  // namespace graphlint::onnxio
