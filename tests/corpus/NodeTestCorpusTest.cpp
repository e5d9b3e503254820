// Shape-inference accuracy on real single-op models: ONNX's backend node tests
// (generated from the installed python3-onnx, and ../shared's newer copy when
// present). Every model must import without a fatal error; with the declared
// output types dropped, inferred dtype + shape must match the real outputs for
// at least 95% of the tests whose outputs are tensors with static shapes.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/MemoryBuffer.h>

#include <fmt/format.h>

#include <onnx/onnx_pb.h>

#include <map>

using namespace graphlint;
using namespace graphlint::test;

namespace {

// Integer and bool inputs with test data (shape vectors, axes, indices, K,
// repeats) and scalars/short vectors of any type (scales, Range bounds, OneHot
// depth) become initializers, as they are constants in exported models.
// Other float inputs stay unknown. Returns the model bytes to import.
std::string withIntegerInputsAsConstants(const std::string &dir, const llvm::json::Object &truth) {
  std::string bytes = readFile(dir + "/model.onnx");
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes))
    return bytes;
  const llvm::json::Array *ins = truth.getArray("inputs");
  bool changed = false;
  for (int i = 0; ins && i < m.graph().input_size() && i < static_cast<int>(ins->size()); ++i) {
    const auto *actual = (*ins)[i].getAsObject()->getObject("actual");
    if (!actual || actual->getString("kind").getValueOr("") != "tensor")
      continue;
    auto dt = dtypeFromName(actual->getString("dtype").getValueOr("").str());
    const llvm::json::Array *shape = actual->getArray("shape");
    bool smallVector = shape && shape->size() <= 1 && (shape->empty() || (*shape)[0].getAsInteger().getValueOr(99) <= 8);
    if (!dt || !(isInteger(*dt) || *dt == DType::Bool || smallVector))
      continue;
    std::string pb = readFile(dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb");
    onnx::TensorProto t;
    if (pb.empty() || pb.size() > 1024 || !t.ParseFromString(pb))
      continue;
    t.set_name(m.graph().input(i).name());
    *m.mutable_graph()->add_initializer() = t;
    changed = true;
  }
  if (changed)
    m.SerializeToString(&bytes);
  return bytes;
}

struct Tally {
  unsigned models = 0, fatal = 0, cases = 0, matched = 0;
  std::map<std::string, std::vector<std::string>> missesByOp;
  std::vector<std::string> fatalMessages;
};

std::string typeText(const Type &t) { return t.str(); }

// Compares one declared-stripped output against the real tensor.
bool matches(const Value &v, const llvm::json::Object &actual, std::string &why) {
  auto dtype = actual.getString("dtype");
  const llvm::json::Array *shape = actual.getArray("shape");
  if (!dtype || !shape)
    return false;
  std::string want = fmt::format("{}[", dtypeShortName(dtypeFromName(dtype->str()).value_or(DType::Undefined)));
  for (size_t i = 0; i < shape->size(); ++i)
    want += fmt::format("{}{}", i ? "," : "", (*shape)[i].getAsInteger().getValueOr(-1));
  want += "]";
  std::string got = typeText(v.type);
  why = fmt::format("{}: got {} want {}", v.name, got, want);
  return got == want;
}

Tally runCorpus(const std::string &nodeDir, const std::string &truthPath, bool integerInputsKnown) {
  Tally t;
  auto buf = llvm::MemoryBuffer::getFile(truthPath);
  EXPECT_TRUE(bool(buf)) << truthPath;
  if (!buf)
    return t;
  llvm::StringRef rest = (*buf)->getBuffer();
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (line.trim().empty())
      continue;
    auto parsed = llvm::json::parse(line);
    if (!parsed) {
      ADD_FAILURE() << llvm::toString(parsed.takeError());
      continue;
    }
    const llvm::json::Object &obj = *parsed->getAsObject();
    std::string name = obj.getString("test").getValueOr("").str();
    std::string model = nodeDir + "/" + name + "/model.onnx";
    if (!llvm::sys::fs::exists(model))
      continue;
    ++t.models;
    ImportOptions opts;
    opts.dropDeclaredTypes = true;
    auto m = integerInputsKnown
                 ? importOnnxBytes(withIntegerInputsAsConstants(nodeDir + "/" + name, obj), model, opts)
                 : importModelFile(model, opts);
    if (!m) {
      ++t.fatal;
      t.fatalMessages.push_back(name + ": " + llvm::toString(m.takeError()));
      continue;
    }
    // A case: every output is a tensor with a static real shape, and the
    // model's own declaration agrees with the data (onnx 1.12 writes a few
    // bfloat16 outputs as UINT16; those are flagged declared_differs).
    bool isCase = true;
    const llvm::json::Array *outs = obj.getArray("outputs");
    if (!outs || outs->empty())
      continue;
    for (const auto &o : *outs) {
      const auto *oo = o.getAsObject();
      const auto *actual = oo->getObject("actual");
      if (oo->getBoolean("declared_differs").getValueOr(false) || !actual || actual->getString("kind").getValueOr("") != "tensor") {
        isCase = false;
        break;
      }
      for (const auto &d : *actual->getArray("shape"))
        if (!d.getAsInteger())
          isCase = false;
    }
    if (!isCase)
      continue;
    ++t.cases;
    bool all = true;
    std::string why;
    for (const auto &o : *outs) {
      const auto *oo = o.getAsObject();
      std::string outName = oo->getString("name").getValueOr("").str();
      const Value *v = nullptr;
      for (const Value *gv : (*m)->graph->outputs)
        if (gv->name == outName)
          v = gv;
      std::string w;
      if (!v || !matches(*v, *oo->getObject("actual"), w)) {
        all = false;
        why += (why.empty() ? "" : "; ") + (v ? w : outName + ": missing");
      }
    }
    if (all) {
      ++t.matched;
    } else {
      std::string ops;
      if (const auto *a = obj.getArray("ops"))
        for (const auto &op : *a)
          ops += (ops.empty() ? "" : "+") + op.getAsString().getValueOr("").str();
      t.missesByOp[ops].push_back(name + " (" + why + ")");
    }
  }
  return t;
}

void report(const std::string &label, const Tally &t, double minRate) {
  double rate = t.cases ? 100.0 * t.matched / t.cases : 0;
  std::cout << fmt::format("[{}] models {} (fatal {}), static-output cases {}, matched {} = {:.1f}%\n", label,
                           t.models, t.fatal, t.cases, t.matched, rate);
  for (const auto &[op, misses] : t.missesByOp) {
    std::cout << fmt::format("  miss {:<28} {:>3}:", op, misses.size());
    for (size_t i = 0; i < misses.size() && i < 3; ++i)
      std::cout << " " << misses[i];
    std::cout << "\n";
  }
  for (const auto &f : t.fatalMessages)
    std::cout << "  fatal " << f << "\n";
  EXPECT_EQ(t.fatal, 0u);
  EXPECT_GT(t.cases, 500u);
  EXPECT_GE(rate, minRate) << label << " shape/dtype inference accuracy below 95%";
}

}  // namespace

// Every corpus model is a valid ONNX model: linting it as shipped (declared
// types kept) must not raise GL001, and nothing may be fatal.
void expectNoFalseInvalid(const std::string &nodeDir) {
  std::error_code ec;
  unsigned models = 0, invalid = 0;
  std::string first;
  for (llvm::sys::fs::directory_iterator it(nodeDir, ec), end; it != end && !ec; it.increment(ec)) {
    std::string path = it->path() + "/model.onnx";
    if (!llvm::sys::fs::exists(path))
      continue;
    ++models;
    FileReport r = lintFile(path, {});
    EXPECT_FALSE(r.fatal) << path << ": " << r.fatalMessage;
    for (const Diagnostic *d : withCode(r, "GL001")) {
      ++invalid;
      if (first.empty())
        first = path + ": " + d->message;
    }
  }
  std::cout << fmt::format("[{}] {} models linted, {} GL001 findings\n", nodeDir, models, invalid);
  EXPECT_GT(models, 500u);
  EXPECT_EQ(invalid, 0u) << first;
}

TEST(CorpusNodeTests, ValidModelsRaiseNoInvalidModel) {
  std::string dir = GRAPHLINT_NODE_TESTS_DIR;
  if (!llvm::sys::fs::exists(dir + "/node"))
    GTEST_SKIP() << "node tests not generated (run ctest, whose fixture generates them with /usr/bin/python3)";
  expectNoFalseInvalid(dir + "/node");
  if (sharedAvailable())
    expectNoFalseInvalid(sharedPath("corpus/onnx-backend/node"));
  else
    std::cout << "../shared/corpus absent: shared models skipped\n";
}

TEST(CorpusNodeTests, GeneratedFromInstalledOnnx) {
  std::string dir = GRAPHLINT_NODE_TESTS_DIR;
  if (!llvm::sys::fs::exists(dir + "/node_io_truth.jsonl"))
    GTEST_SKIP() << "node tests not generated (run ctest, whose fixture generates them with /usr/bin/python3)";
  // Without any input values: what a user gets from a model whose shape
  // inputs are graph inputs. Printed for the record; the bar is below.
  report("onnx-1.12 node tests, no input values", runCorpus(dir + "/node", dir + "/node_io_truth.jsonl", false), 75.0);
  report("onnx-1.12 node tests", runCorpus(dir + "/node", dir + "/node_io_truth.jsonl", true), 95.0);
}

TEST(CorpusNodeTests, SharedOnnxBackendCorpus) {
  if (!sharedAvailable())
    GTEST_SKIP() << "../shared/corpus is absent (only CI and developers have it)";
  std::string dir = sharedPath("corpus/onnx-backend");
  report("shared onnx-backend, no input values", runCorpus(dir + "/node", dir + "/node_io_truth.jsonl", false), 65.0);
  report("shared onnx-backend", runCorpus(dir + "/node", dir + "/node_io_truth.jsonl", true), 95.0);
}
