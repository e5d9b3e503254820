// Entry point of the ONNX frontend: maps the file, strips weight payloads at
// the wire level, parses the structure, builds the IR, completes shapes and
// records every problem it finds without stopping at the first.
#include "DynamoFacts.h"
#include "GraphBuilder.h"
#include "InferenceGuard.h"
#include "ProtoConvert.h"
#include "ShapeCompletion.h"
#include "WireStripper.h"
#include "graphlint/onnx/ExternalData.h"
#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/onnx/OnnxImporter.h"
#include "graphlint/ir/PhaseTimes.h"
#include "graphlint/ir/PythonLocals.h"
#include "graphlint/ir/OpRegistry.h"
#include "graphlint/ir/Verifier.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>

#include <fmt/format.h>

#include <llvm/ADT/StringMap.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <optional>
#include <set>
#include <llvm/Support/Path.h>

namespace graphlint {
namespace {

std::string firstLine(const std::string &s) {
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// True for tensors whose bytes are not inline: payloads we skipped, and
// external data (the ONNX checker would stat its path, which we validate
// ourselves without following hostile paths).
bool withoutInlineData(const onnx::TensorProto &t) {
  return onnxio::payloadRef(t).stripped || t.data_location() == onnx::TensorProto::EXTERNAL;
}

bool hasStrippedTensor(const onnx::GraphProto &g);
bool hasStrippedTensor(const onnx::NodeProto &n) {
  for (const auto &a : n.attribute()) {
    if (a.has_t() && withoutInlineData(a.t()))
      return true;
    for (const auto &t : a.tensors())
      if (withoutInlineData(t))
        return true;
    if (a.has_g() && hasStrippedTensor(a.g()))
      return true;
    for (const auto &g : a.graphs())
      if (hasStrippedTensor(g))
        return true;
  }
  return false;
}
bool hasStrippedTensor(const onnx::GraphProto &g) {
  for (const auto &t : g.initializer())
    if (withoutInlineData(t))
      return true;
  for (const auto &n : g.node())
    if (hasStrippedTensor(n))
      return true;
  return false;
}

class OnnxImport {
public:
  OnnxImport(const std::string &path, const ImportOptions &opts)
      : path_(path), opts_(opts), proto_(*google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena_)) {}

  llvm::Expected<std::unique_ptr<Model>> run(onnxio::ByteWindow &bytes) {
    if (bytes.size() == 0)
      return stringError("empty file: not an ONNX model");
    std::optional<PhaseTimes::Scope> phase(std::in_place, "import: read, strip weight payloads");
    auto stripped = onnxio::stripPayloads(bytes);
    if (!stripped.ok)
      return stringError("not a valid ONNX model: " + stripped.error);
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(stripped.stripped.data()),
                                              static_cast<int>(stripped.stripped.size()));
    in.SetRecursionLimit(400);
    phase.emplace("import: parse protobuf");
    if (!proto_.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
      return stringError("not a valid ONNX model: the protobuf structure does not parse as a ModelProto");
    if (!proto_.has_graph())
      return stringError("not a valid ONNX model: it has no graph (is this really an .onnx file?)");
    if (proto_.graph().node_size() == 0 && proto_.graph().input_size() == 0 && proto_.graph().output_size() == 0 &&
        proto_.opset_import_size() == 0)
      return stringError("not a valid ONNX model: the graph is empty and no opset is imported");

    uint64_t nodes = static_cast<uint64_t>(proto_.graph().node_size());
    phase.emplace("import: UTF-8 check, header", nodes);
    std::string firstRepaired;
    size_t repaired = onnxio::makeStringsValidUtf8(proto_, &firstRepaired);

    model_ = std::make_unique<Model>();
    Model &m = *model_;
    m.path = path_;
    m.fileSize = bytes.size();
    m.irVersion = proto_.ir_version();
    m.producerName = proto_.producer_name();
    m.producerVersion = proto_.producer_version();
    for (const auto &kv : proto_.metadata_props())
      m.metadata.emplace_back(kv.key(), kv.value());
    checkModelHeader();
    if (repaired)
      problem(fmt::format("{} name{} or text field{} not valid UTF-8, as ONNX requires (the first: '{}'); "
                          "shown with \\xNN escapes",
                          repaired, repaired == 1 ? "" : "s", repaired == 1 ? " is" : "s are",
                          escapedForMessage(firstRepaired, 60)));

    phase.emplace("import: build IR", nodes);
    onnxio::GraphBuilder builder(m);
    for (const auto &fp : proto_.functions()) {
      auto f = std::make_unique<Function>();
      f->domain = fp.domain();
      f->name = fp.name();
      f->attributeNames.assign(fp.attribute().begin(), fp.attribute().end());
      for (const auto &imp : fp.opset_import())
        f->opsets.push_back({imp.domain(), imp.version()});
      m.functions.push_back(std::move(f));
    }
    m.graph = builder.build(proto_.graph(), nullptr, nullptr, "main");
    // The main graph's metadata_props (field 16, newer than the installed
    // ONNX): the dynamo exporter writes the ExportedProgram's signature there.
    for (auto &kv : onnxio::newerMetadataProps(proto_.graph(), 16))
      m.metadata.push_back(std::move(kv));
    phase.emplace("import: exporter facts", nodes);
    markTrainedParams(*m.graph);
    onnxio::markDynamoParams(m);
    markUniformFolds(bytes);
    onnxio::inferDynamoScopes(*m.graph);
    onnxio::holdFoldsSharedAcrossCalls(*m.graph);
    onnxio::recordDynamoModuleContainers(m);
    for (std::string &call : onnxio::holdDynamoPythonLocals(m))
      m.metadata.emplace_back(kUnseenHelperCall, std::move(call));
    importFunctionBodies(builder);
    checkFunctionCycles();
    phase.emplace("import: ONNX checker", nodes);
    checkNodes(builder);
    checkParams();
    phase.emplace("import: shape completion", nodes);
    onnxio::completeShapes(m, builder, proto_, opts_);
    phase.emplace("import: dynamo merges, layouts", nodes);
    onnxio::restoreDynamoMerges(m);
    // ONNX tensors have no strides: dense row-major, as the PyTorch run they
    // were exported from holds them unless it was made channels-last (which
    // the file cannot say). The cost model's layout transforms read this.
    forEachGraph(*m.graph, [](const Graph &g) {
      for (const auto &v : g.values())
        if (v->type.isTensor() && v->type.shape.rankKnown)
          v->memoryFormat = contiguousMemoryFormat(v->type.shape.dims);
    });
    return std::move(model_);
  }

private:
  void problem(std::string msg, const Node *n = nullptr, const Graph *g = nullptr,
               ImportProblem::Kind kind = ImportProblem::Kind::Invalid) {
    ImportProblem p;
    p.kind = kind;
    p.message = std::move(msg);
    p.node = n;
    p.graph = g ? g : (n ? n->graph : model_->graph.get());
    model_->problems.push_back(std::move(p));
  }

  // A fold of what the forward computes, too large to keep in the IR (a
  // [b, 1, s, s] attention mask, or its bool condition): whether every byte
  // is the same, which the memory plan reads (docs/memory.md, "An attention
  // mask eager skips"), or whether it is a causal mask ("The causal mask a
  // tracer builds"). Only these initializers are read; weights never are.
  void markUniformFolds(onnxio::ByteWindow &bytes) {
    llvm::StringMap<Param *> computed;
    for (const auto &p : model_->graph->params())
      if (p->computed && !p->trained.value_or(false) && !p->tensor.data.known)
        computed[p->tensor.name] = p.get();
    if (computed.empty())
      return;
    for (const auto &t : proto_.graph().initializer())
      if (auto it = computed.find(t.name()); it != computed.end()) {
        onnxio::PayloadPattern pattern = onnxio::strippedPayloadPattern(t, bytes);
        it->second->tensor.uniformByte = pattern.uniformByte;
        it->second->tensor.causalMask = pattern.causalMask;
      }
  }

  void checkModelHeader() {
    Model &m = *model_;
    if (!proto_.has_ir_version())
      problem("the model has no ir_version");
    else if (proto_.ir_version() < 3 && proto_.opset_import_size() > 0)
      problem(fmt::format("ir_version {} predates opset imports", proto_.ir_version()));
    for (const auto &imp : proto_.opset_import()) {
      std::string d = isDefaultDomain(imp.domain()) ? std::string() : imp.domain();
      if (imp.version() < 1 || imp.version() > 1000)
        problem(fmt::format("opset import '{}' has an invalid version {}", d.empty() ? "ai.onnx" : d, imp.version()));
      m.opsets.push_back({d, imp.version()});
    }
    if (proto_.opset_import_size() == 0) {
      problem("the model imports no opset (opset_import is empty); assuming ai.onnx version 1");
      m.opsets.push_back({"", 1});
    } else {
      // Every domain a node uses must be imported (ONNX checker rule).
      std::set<std::string> imported, reported;
      for (const auto &o : m.opsets)
        imported.insert(o.domain);
      const std::string *previous = nullptr;
      for (const auto &n : proto_.graph().node()) {
        // Runs of one domain (a million ai.onnx nodes) are judged once.
        if (previous && n.domain() == *previous)
          continue;
        previous = &n.domain();
        std::string d = isDefaultDomain(n.domain()) ? std::string() : n.domain();
        if (!imported.count(d) && reported.insert(d).second)
          problem(fmt::format("nodes use the domain '{}' (first: {} '{}') but the model does not import it",
                              d.empty() ? "ai.onnx" : d, n.op_type(), n.name()));
      }
    }
  }

  void importFunctionBodies(onnxio::GraphBuilder &builder) {
    for (int i = 0; i < proto_.functions_size(); ++i) {
      const auto &fp = proto_.functions(i);
      // A function body is a graph whose formal inputs/outputs are names.
      auto *gp = bodies_.emplace_back(std::make_unique<onnx::GraphProto>()).get();
      gp->set_name(fp.name());
      for (const auto &in : fp.input())
        gp->add_input()->set_name(in);
      for (const auto &out : fp.output())
        gp->add_output()->set_name(out);
      *gp->mutable_node() = fp.node();
      model_->functions[i]->body = builder.build(*gp, nullptr, nullptr, "function:" + fp.name());
    }
  }

  // A model-local function that reaches itself through calls would make
  // ONNX's function inference recurse until the stack overflows.
  void checkFunctionCycles() {
    std::vector<std::string> cycles;
    std::set<std::string> recursive = onnxio::recursiveFunctions(proto_, cycles);
    for (auto &f : model_->functions)
      f->recursive = recursive.count(f->domain + ":" + f->name) > 0;
    for (const std::string &c : cycles)
      problem(fmt::format("model-local functions call themselves without end ({}); their calls are not "
                          "shape-inferred",
                          c));
  }

  void checkNodes(onnxio::GraphBuilder &builder) {
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(static_cast<int>(proto_.ir_version()));
    std::unordered_map<std::string, int> imports;
    for (const auto &o : model_->opsets)
      imports[o.domain] = static_cast<int>(o.version);
    ctx.set_opset_imports(imports);
    ctx.set_is_main_graph(true);
    ctx.set_model_dir(llvm::sys::path::parent_path(path_).str());
    onnx::checker::LexicalScopeContext lex;
    const Graph &g = *model_->graph;
    // The scope only matters to nodes with bodies (it names outer values).
    bool anyBodies = false;
    for (const auto &n : g.nodes())
      anyBodies |= !n->subgraphs().empty();
    if (anyBodies)
      for (const auto &v : g.values())
        lex.add(v->name);
    for (const auto &n : g.nodes()) {
      if (n->op->kind == OpKind::Unknown || n->op->newerThanLibrary ||
          model_->findFunction(n->domain, n->opType))
        continue;  // GL002 reports unknown ops; newer opsets are not checkable here
      const onnx::NodeProto *np = builder.protoOf(n.get());
      try {
        if (hasStrippedTensor(*np)) {
          // The checker would reject tensors whose payload we skipped.
          if (const auto *s = n->op->schema)
            s->Verify(*np);
        } else {
          onnx::checker::check_node(*np, ctx, lex);
        }
      } catch (const std::exception &e) {
        problem(fmt::format("node {} violates its ONNX schema: {}", describeNode(*n), firstLine(e.what())),
                n.get());
      }
    }
  }

  void checkParams() {
    struct Missing { uint64_t count = 0, bytes = 0; std::string first; };
    std::map<std::string, Missing> missing;
    forEachGraph(*model_->graph, [&](const Graph &g) {
      for (const auto &p : g.params()) {
        TensorLiteral &t = p->tensor;
        const Node *none = nullptr;
        if (t.dtype == DType::Undefined)
          problem(fmt::format("initializer '{}' has no valid data type", t.name), none, &g);
        for (int64_t d : t.dims)
          if (d < 0) {
            problem(fmt::format("initializer '{}' has a negative dimension {}", t.name, d), none, &g);
            break;
          }
        auto numel = t.numElements();
        if (!numel) {
          bool negative = false;
          for (int64_t d : t.dims)
            negative |= d < 0;
          if (!negative)
            problem(fmt::format("initializer '{}' has dimensions whose product overflows 64 bits", t.name), none, &g);
          continue;
        }
        if (t.storage == TensorLiteral::Storage::External) {
          auto full = resolveExternalData(path_, t.externalPath);
          if (!full) {
            problem(fmt::format("initializer '{}' {}", t.name, llvm::toString(full.takeError())), none, &g);
            model_->problems.back().refusedPath = true;
            continue;
          }
          uint64_t size = 0;
          p->externalFileExists = !llvm::sys::fs::file_size(*full, size);
          if (!p->externalFileExists) {
            Missing &ms = missing[t.externalPath];
            ++ms.count;
            ms.bytes += t.byteSize;
            if (ms.first.empty())
              ms.first = t.name;
          } else if (t.externalOffset + t.externalLength.value_or(t.byteSize) > size) {
            problem(fmt::format("initializer '{}' reads bytes {}..{} of '{}', which has only {} bytes", t.name,
                                t.externalOffset, t.externalOffset + t.externalLength.value_or(t.byteSize),
                                t.externalPath, size),
                    none, &g, ImportProblem::Kind::MissingWeights);
          }
          continue;
        }
        if (t.storage == TensorLiteral::Storage::Empty && *numel > 0) {
          problem(fmt::format("initializer '{}' ({}[{}], {} bytes) has no data", t.name, dtypeName(t.dtype), dimsStr(t),
                              t.byteSize),
                  none, &g);
          continue;
        }
        // raw_data must hold exactly dims x width bytes (sub-byte types packed).
        if (t.storedBytes && t.dtype != DType::String && t.storedBytes != t.byteSize &&
            t.storage == TensorLiteral::Storage::Inline && isRaw(t))
          problem(fmt::format("initializer '{}' holds {} bytes of raw data, but {}[{}] needs {}", t.name,
                              t.storedBytes, dtypeName(t.dtype), dimsStr(t), t.byteSize),
                  none, &g);
      }
    });
    // Tensors inside attributes (Constant values) may name external data too:
    // the same path rules apply, and nothing is ever opened.
    forEachGraph(*model_->graph, [&](const Graph &g) {
      for (const auto &n : g.nodes())
        for (const Attribute &a : n->attributes)
          for (const TensorLiteral &t : a.tensors) {
            if (t.storage != TensorLiteral::Storage::External)
              continue;
            auto full = resolveExternalData(path_, t.externalPath);
            if (!full) {
              problem(fmt::format("attribute '{}' of node {} {}", a.name, describeNode(*n),
                                  llvm::toString(full.takeError())),
                      n.get());
              model_->problems.back().refusedPath = true;
              continue;
            }
            uint64_t size = 0;
            if (llvm::sys::fs::file_size(*full, size)) {
              Missing &ms = missing[t.externalPath];
              ++ms.count;
              ms.bytes += t.byteSize;
              if (ms.first.empty())
                ms.first = n->name + "." + a.name;
            }
          }
    });
    for (const auto &[file, ms] : missing)
      problem(fmt::format("{} tensor(s) ({} bytes, first '{}') are stored in external file '{}', which does not "
                          "exist next to the model; linting continues on shapes",
                          ms.count, ms.bytes, ms.first, file),
              nullptr, nullptr, ImportProblem::Kind::MissingWeights);
  }

  static bool isRaw(const TensorLiteral &t) { return t.storedBytes > 0; }
  static std::string dimsStr(const TensorLiteral &t) {
    std::string s;
    for (size_t i = 0; i < t.dims.size(); ++i)
      s += (i ? "," : "") + std::to_string(t.dims[i]);
    return s;
  }

  std::string path_;
  const ImportOptions &opts_;
  // The parsed structure lives in an arena: millions of small messages are
  // allocated and released in bulk.
  google::protobuf::Arena arena_;
  /// ONNX training info names what a training step updates (update_binding
  /// keys): those initializers are trained, the others are not.
  void markTrainedParams(Graph &g) {
    if (proto_.training_info_size() == 0)
      return;
    std::set<std::string> updated;
    for (const auto &ti : proto_.training_info())
      for (const auto &b : ti.update_binding())
        updated.insert(b.key());
    for (const auto &p : g.params())
      if (p->value)
        p->trained = updated.count(p->value->name) > 0;
  }

  onnx::ModelProto &proto_;
  std::vector<std::unique_ptr<onnx::GraphProto>> bodies_;
  std::unique_ptr<Model> model_;
};

llvm::Expected<std::unique_ptr<Model>> importWindow(onnxio::ByteWindow &bytes, const std::string &path,
                                                    const ImportOptions &opts) {
  try {
    auto import = std::make_unique<OnnxImport>(path, opts);
    auto model = import->run(bytes);
    PhaseTimes::Scope phase("import: free the parsed file");
    import.reset();
    return model;
  } catch (const std::exception &e) {
    return stringError(fmt::format("internal error while importing: {}", firstLine(e.what())));
  }
}

}  // namespace

llvm::Expected<std::unique_ptr<Model>> importOnnxBytes(llvm::StringRef bytes, const std::string &path,
                                                       const ImportOptions &opts) {
  onnxio::ByteWindow w(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  return importWindow(w, path, opts);
}

llvm::Expected<std::unique_ptr<Model>> importOnnxFile(int fd, uint64_t size, const std::string &path,
                                                      const ImportOptions &opts) {
  onnxio::ByteWindow window(fd, size);
  return importWindow(window, path, opts);
}

}  // namespace graphlint
