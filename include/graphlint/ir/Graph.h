// The graphlint IR: one representation for every frontend (ONNX, FX). A Model
// owns a main Graph; a Graph owns its Nodes, Values and Params in topological
// order; control-flow Nodes own nested Graphs whose Values may refer to the
// enclosing scopes. Weight bytes are never held: a Param records where they live.
#pragma once

#include "graphlint/ir/Type.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace graphlint {

class Graph;
class Node;
class Value;
struct OpInfo;

/// Where the user's code issued an op, as recorded by the exporter.
struct SourceLoc {
  std::string file;
  unsigned line = 0;
  unsigned col = 0;
  std::string function;
  unsigned functionLine = 0;  // the function's first line (its `def`), 0 when unknown
  bool valid() const { return !file.empty() && line > 0; }
};

struct Device {
  enum class Kind : uint8_t { Unknown, CPU, CUDA, Meta, Other };
  Kind kind = Kind::Unknown;
  int index = -1;
  std::string str() const;  // "cpu", "cuda:0", "?"
  bool operator==(const Device &o) const { return kind == o.kind && index == o.index; }
};

/// Small constant payloads (shape vectors, scalars) kept so analyses can read
/// them; larger tensors only carry their metadata.
struct ConstData {
  bool known = false;
  std::vector<int64_t> ints;    // integer and bool tensors
  std::vector<double> floats;   // floating tensors
};

/// A tensor literal (initializer or attribute) described without its bytes.
struct TensorLiteral {
  std::string name;
  DType dtype = DType::Undefined;
  llvm::SmallVector<int64_t, 4> dims;
  uint64_t byteSize = 0;  // dims x dtype width
  enum class Storage : uint8_t { Inline, External, Empty } storage = Storage::Empty;
  uint64_t inlineOffset = 0;   // offset of the payload inside the model file
  uint64_t storedBytes = 0;    // payload bytes present in the file (inline)
  std::string externalPath;    // location as written in the model
  uint64_t externalOffset = 0;
  std::optional<uint64_t> externalLength;
  ConstData data;
  /// The value every payload byte has (0: zeros; 1: a bool tensor of
  /// trues), read at import for a payload too large to keep where it matters
  /// (the dynamo exporter's folds of computed values); nullopt otherwise.
  std::optional<uint8_t> uniformByte;
  /// Read at import like uniformByte: the payload is a causal attention mask
  /// over its last two dims ([..., s, s]; element [i, j] true, or 0, where
  /// j <= i, and false, or one negative value, elsewhere).
  bool causalMask = false;
  std::optional<int64_t> numElements() const;
};

/// A parameter or buffer: an initializer in ONNX, a parameter/buffer in FX.
struct Param {
  TensorLiteral tensor;
  Value *value = nullptr;
  bool externalFileExists = false;  // checked, never opened
  /// FX: a registered buffer (BatchNorm running stats), which the model
  /// updates in place by design; false for parameters and ONNX initializers.
  bool buffer = false;
  /// ONNX: whether the file's training info (ModelProto.training_info, its
  /// update_binding) says the initializer is trained; unset when it has none.
  std::optional<bool> trained;
  /// ONNX from torch.onnx's dynamo exporter: a value the model computes in
  /// its forward (a causal mask, a rotary table, a position embedding of
  /// constant positions) that the exporter's optimizer folded into an
  /// initializer. Eager allocates it while the forward runs, not before.
  bool computed = false;
  /// A `computed` value that is the output of a module call the optimizer
  /// folded whole (OPT's position embedding module, a rotary embedding
  /// module: no node of the file runs in it): the caller binds it to a Python
  /// local, so eager holds it until the caller's forward returns.
  bool heldByCaller = false;
  /// ONNX: the metadata_props of the initializer's value_info (onnxscript's
  /// optimizer records `pkg.onnxscript.optimizer.folded_from` there).
  std::vector<std::pair<std::string, std::string>> metadata;
};

/// Model metadata key: a parameter of the exported model that no initializer
/// of the file stands for (torch.onnx's dynamo exporter folded it into a value
/// the forward computes, or into a constant equal to another), one entry per
/// parameter, its module path as the value. Its weights, gradient and
/// optimizer state are not in the memory plan.
inline constexpr const char *kFoldedParameter = "graphlint.folded_parameter";

/// Metadata key of a parameter or node graphlint restored where torch.onnx's
/// optimizer had merged two equal ones into one (DeduplicateInitializers,
/// CommonSubexpressionElimination) and eager keeps both: the name of the one
/// it was merged into.
inline constexpr const char *kMergedInto = "graphlint.merged_into";

/// Metadata key of a node graphlint restored where torch.onnx's optimizer
/// removed a copy eager makes (a torch.cat of one tensor and empty ones):
/// the name of the value it copies.
inline constexpr const char *kRestoredCopy = "graphlint.restored_copy";

/// Node metadata key of a node that ran with autograd off (a `torch.no_grad()`
/// region of a .pt2 program, torch.export's wrap_with_set_grad_enabled): its
/// outputs need no gradient, and it saves nothing for backward.
inline constexpr const char *kGradDisabled = "graphlint.grad_disabled";

/// Node metadata key of a cast graphlint added where torch.autocast casts an
/// op's argument at run time and the file does not record it (a .pt2
/// program's wrap_with_autocast region): the region's device type.
inline constexpr const char *kAutocastCast = "graphlint.autocast_cast";

enum class AttrKind : uint8_t {
  Undefined, Float, Int, String, Tensor, Graph, SparseTensor, TypeProto,
  Floats, Ints, Strings, Tensors, Graphs, SparseTensors, TypeProtos
};

struct Attribute {
  std::string name;
  AttrKind kind = AttrKind::Undefined;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<TensorLiteral> tensors;   // Tensor(s), SparseTensor(s) values
  std::vector<unsigned> graphs;         // indices into Node::subgraphs()
  std::string refAttrName;              // function attribute reference
  std::string str() const;              // compact rendering for the printer
};

struct Use {
  Node *user;
  unsigned operand;
};

class Value {
public:
  enum class Kind : uint8_t { GraphInput, Param, NodeOutput, OuterScope, Missing };

  std::string name;
  Type type;
  Kind kind = Kind::NodeOutput;
  Node *producer = nullptr;     // NodeOutput only
  unsigned resultIndex = 0;
  Param *param = nullptr;       // Param only
  Value *outer = nullptr;       // OuterScope: the captured value
  Graph *graph = nullptr;
  Device device;
  bool requiresGrad = false;
  /// A rank-4 tensor's element order: from the strides the FX exporter
  /// records; an ONNX tensor has none, it is dense row-major (NCHW for
  /// Conv, as ONNX defines it). NCHW (contiguous) or NHWC (channels-last);
  /// Unknown without strides, for other strides, or where size-1 dims make
  /// the two orders the same (memoryFormatOf).
  enum class MemoryFormat : uint8_t { Unknown, Contiguous, ChannelsLast };
  MemoryFormat memoryFormat = MemoryFormat::Unknown;
  llvm::SmallVector<Use, 2> uses;

  bool isGraphOutput() const { return graphOutput; }
  void markGraphOutput() { graphOutput = true; }

private:
  bool graphOutput = false;
};

class Node {
public:
  std::string name;
  std::string opType;
  std::string domain;           // "" = ai.onnx
  int64_t opsetVersion = 0;     // version of the domain imported by the model
  unsigned index = 0;           // position in the graph's topological order
  Graph *graph = nullptr;
  const OpInfo *op = nullptr;   // never null after import
  llvm::SmallVector<Value *, 4> inputs;   // nullptr for an omitted optional input
  llvm::SmallVector<Value *, 2> outputs;  // nullptr for an omitted optional output
  std::vector<Attribute> attributes;
  SourceLoc loc;
  std::string modulePath;
  std::string docString;
  std::vector<std::pair<std::string, std::string>> metadata;
  /// Mutation and alias facts (FX frontend; ONNX ops are functional).
  llvm::SmallVector<unsigned, 1> mutatedInputs;
  llvm::SmallVector<int, 1> outputAliasesInput;  // per output: input index or -1
  llvm::SmallVector<bool, 1> outputSavedForBackward;
  /// eval() FX export: per output, the p of a dropout module it passes
  /// through (the identity in eval; 0 when none). A training step predicted
  /// from the forward graph counts the mask and output dropout allocates.
  llvm::SmallVector<float, 1> outputDropout;
  /// Per saved output: the node after which autograd first saved it (the
  /// saving op ran then); an in-place write to its storage after that node
  /// makes backward raise. Empty, or null entries, when the exporter did not
  /// record it (files from before the field).
  llvm::SmallVector<const Node *, 1> outputSavedAfter;
  /// A joint graph's backward node: per output, the forward value it is the
  /// gradient of (FX `"grad_of"`; null where unknown). The memory plan
  /// attributes the gradient to that value, as a synthesised backward does.
  llvm::SmallVector<const Value *, 1> outputGradientOf;
  /// A joint training graph's backward node (FX `"phase": "backward"`): the
  /// analyses cost it as backward work instead of synthesising one, and its
  /// copies and as_strided views are autograd's, not the user's writes.
  bool backwardPhase = false;
  /// The exporter marked the node as handing tensor values (or a
  /// data-dependent size) to the host.
  bool hostSync = false;

  const Attribute *attr(llvm::StringRef n) const;
  std::optional<int64_t> attrInt(llvm::StringRef n) const;
  /// The value of the first `metadata` entry named `key`; null when none.
  const std::string *metadataValue(llvm::StringRef key) const;
  std::vector<std::unique_ptr<Graph>> &subgraphs() { return subgraphs_; }
  const std::vector<std::unique_ptr<Graph>> &subgraphs() const { return subgraphs_; }
  /// "domain::Op" for non-default domains, otherwise "Op".
  std::string qualifiedOp() const;
  /// The aten op a PyTorch node runs, without overload: "aten::to",
  /// "aten.to.dtype" or domain "aten" + "to" all give "to"; "" otherwise.
  std::string atenName() const;

private:
  std::vector<std::unique_ptr<Graph>> subgraphs_;
};

class Graph {
public:
  std::string name;
  Node *parentNode = nullptr;   // the control-flow node owning this body
  Graph *parentGraph = nullptr;
  std::vector<Value *> inputs;   // formal inputs (not params)
  std::vector<Value *> outputs;

  Value *createValue(std::string name, Value::Kind kind);
  Node *createNode();
  Param *createParam();

  llvm::ArrayRef<std::unique_ptr<Node>> nodes() const { return nodes_; }
  llvm::ArrayRef<std::unique_ptr<Value>> values() const { return values_; }
  llvm::ArrayRef<std::unique_ptr<Param>> params() const { return params_; }
  std::vector<std::unique_ptr<Node>> &mutableNodes() { return nodes_; }

  /// A value defined in this graph (not the enclosing ones).
  Value *findLocal(llvm::StringRef n) const;
  /// Gives a value of this graph another name (findLocal follows).
  void renameValue(Value &v, std::string name);
  /// Makes `user` read `to` as its input `operand` (both values' uses follow).
  static void replaceInput(Node &user, unsigned operand, Value *to);
  /// Puts nodes an importer created (at the end of the node list) in their
  /// places: each list of `before` just before its node, each of `after` just
  /// after it, then renumbers.
  using Placement = llvm::DenseMap<const Node *, std::vector<Node *>>;
  void placeNodes(const Placement &before, const Placement &after = Placement());
  /// Depth of nesting: 0 for the main graph.
  unsigned depth() const;
  /// "main", "main/loop_node:body", ... identifies the graph in diagnostics.
  std::string path() const;
  /// Renumbers Node::index after the node order changed.
  void renumber();
  /// The graph carries its own backward (a joint training graph).
  bool hasBackward() const;

private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Param>> params_;
  llvm::StringMap<Value *> byName_;
};

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
};

/// A model-local function (ONNX FunctionProto): represented, not expanded, so
/// call sites keep their own node; the body is imported as a Graph.
struct Function {
  std::string domain;
  std::string name;
  std::vector<std::string> attributeNames;
  std::vector<OpsetImport> opsets;
  std::unique_ptr<Graph> body;
  bool recursive = false;  // calls itself, directly or through other local functions (GL001)
};

enum class ModelFormat : uint8_t { Onnx, Fx };  // Fx: every PyTorch graph (FX JSON, .pt2)

/// A size symbol of the model and the value the lint used for it: bound on
/// the command line (-D), taken from the exporter's hint (the traced size),
/// or unbound (unbacked sizes such as torch's u0, ONNX dim_params without -D).
struct SymbolInfo {
  enum class Kind : uint8_t { Input, Unbacked };
  /// Where the value came from: -D, the file's default expression (an
  /// assumption the file states), the traced hint, or nowhere.
  enum class Origin : uint8_t { Cli, Default, Hint, Unbound };
  std::string name;
  Kind kind = Kind::Input;
  std::optional<int64_t> hint, min, max;
  std::string source;             // "input0.shape[0]", or the op behind an unbacked size
  /// A data-dependent size the exporter sizes by an assumption (MoE
  /// tokens_per_expert): its value over the other symbols, unless -D binds it.
  SymExprRef defaultExpr;
  std::string assumption;         // what the default assumes, for the report
  Origin origin = Origin::Unbound;
  std::optional<int64_t> value;   // when bound (Cli, Default or Hint)
};

/// A problem the importer found in the file; GL001/GL004 turn them into
/// diagnostics. The lint goes on after every one of them.
struct ImportProblem {
  enum class Kind : uint8_t { Invalid, MissingWeights };
  Kind kind = Kind::Invalid;
  std::string message;
  const Graph *graph = nullptr;
  const Node *node = nullptr;   // when the problem is tied to a node
  std::vector<std::string> notes;
  /// An external data path the importer refused to follow (absolute, '..',
  /// symlink out of the folder, not a regular file): verify will not run.
  bool refusedPath = false;
};

/// A suppression comment on a line of the user's source (`# graphlint:
/// ignore[GL132]`, `# noqa: GL132`), as graphlint-export found it (the FX
/// format's `suppressions`): it drops the findings of those rules whose
/// source is that line.
struct SourceSuppression {
  std::string file;                 // as in SourceLoc::file
  unsigned line = 0;
  std::vector<std::string> tokens;  // rule selectors as written: "GL132", "inplace-alias"
};

class Model {
public:
  std::string path;
  ModelFormat format = ModelFormat::Onnx;
  uint64_t fileSize = 0;
  int64_t irVersion = 0;
  std::string producerName;
  std::string producerVersion;
  std::vector<OpsetImport> opsets;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::unique_ptr<Graph> graph;
  std::vector<std::unique_ptr<Function>> functions;
  std::vector<ImportProblem> problems;
  /// Every size symbol the file declares or its dims mention, sorted by name.
  std::vector<SymbolInfo> symbols;
  /// Setup problems the lint goes on after (a -D that binds nothing): one
  /// line each, without the path; the CLI prints them as warnings on stderr.
  std::vector<std::string> setupWarnings;
  /// Suppression comments in the user's source (FX exports).
  std::vector<SourceSuppression> sourceSuppressions;

  int64_t opsetVersion(llvm::StringRef domain) const;  // 0 when not imported
  const Function *findFunction(llvm::StringRef domain, llvm::StringRef name) const;
};

/// Calls fn(graph) for the main graph and every nested graph, outer first.
/// The memory format of a rank-4 tensor of `dims` laid out by `strides`
/// (Value::memoryFormat). Dims of size 1 are skipped (PyTorch leaves their
/// strides arbitrary), so a tensor both orders describe, [N, C, 1, 1] or
/// [N, 1, H, W], is Unknown; so is any other order, and any rank but 4.
Value::MemoryFormat memoryFormatOf(llvm::ArrayRef<Dim> dims, llvm::ArrayRef<Dim> strides);
/// The memory format of a dense row-major tensor of `dims` (an ONNX tensor).
Value::MemoryFormat contiguousMemoryFormat(llvm::ArrayRef<Dim> dims);

template <typename Fn> void forEachGraph(const Graph &g, Fn &&fn) {
  fn(g);
  for (const auto &n : g.nodes())
    for (const auto &sub : n->subgraphs())
      forEachGraph(*sub, fn);
}

}  // namespace graphlint
