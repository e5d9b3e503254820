// What a user sees when the input is not a healthy model: one clear line that
// names the file and the problem, exit 2 when the file cannot be linted, GL001
// (exit 1) when it can but is invalid -- never a crash or a hang, and the
// input file is left exactly as it was.
#include "TestSupport.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

#include <sys/stat.h>
#include <unistd.h>

#include <random>

using namespace graphlint;
using namespace graphlint::test;

namespace {

// ---- helpers -------------------------------------------------------------

struct Snapshot {
  bool exists = false;
  std::string bytes;
  llvm::sys::TimePoint<> mtime;
};

Snapshot snapshot(const std::string &path) {
  Snapshot s;
  llvm::sys::fs::file_status st;
  if (llvm::sys::fs::status(path, st) || st.type() != llvm::sys::fs::file_type::regular_file)
    return s;
  s.exists = true;
  s.bytes = readFile(path);
  s.mtime = st.getLastModificationTime();
  return s;
}

void expectUnchanged(const Snapshot &before, const std::string &path) {
  Snapshot after = snapshot(path);
  EXPECT_EQ(after.exists, before.exists) << path;
  EXPECT_TRUE(after.bytes == before.bytes) << path << " was modified";
  EXPECT_TRUE(after.mtime == before.mtime) << path << " mtime changed";
}

size_t countLines(const std::string &s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// Runs the CLI with a short deadline: a hang (e.g. opening a FIFO) fails the
// test quickly instead of blocking the suite.
CliResult runCliWithin(const std::vector<std::string> &args, unsigned seconds) {
  std::string dir = tempDir();
  std::string outPath = dir + "/stdout", errPath = dir + "/stderr";
  std::vector<llvm::StringRef> argv{GRAPHLINT_CLI};
  for (const auto &a : args)
    argv.push_back(a);
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(outPath),
                                                 llvm::StringRef(errPath)};
  CliResult r;
  std::string errMsg;
  r.exitCode = llvm::sys::ExecuteAndWait(GRAPHLINT_CLI, argv, llvm::None, redirects, seconds, 0, &errMsg);
  r.out = readFile(outPath);
  r.err = readFile(errPath) + errMsg;
  return r;
}

// A file that cannot be linted: exit 2 and exactly one line naming the file
// and the problem, in every output format; the file is not touched.
void expectFatal(const std::string &path, const std::string &problem) {
  Snapshot before = snapshot(path);
  {
    CliResult r = runCliWithin({"--no-color", path}, 60);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    std::string want = path + ": fatal: ";
    ASSERT_EQ(r.out.rfind(want, 0), 0u) << r.out;
    std::string line = r.out.substr(0, r.out.find('\n'));
    EXPECT_NE(line.find(problem), std::string::npos) << "expected '" << problem << "' in: " << line;
    // The fatal line plus the summary line; nothing else.
    EXPECT_EQ(countLines(r.out), 2u) << r.out;
    EXPECT_NE(r.out.find("1 file could not be linted"), std::string::npos) << r.out;
  }
  {
    CliResult r = runCliWithin({"--format", "gcc", path}, 60);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_EQ(countLines(r.out), 1u) << r.out;
    EXPECT_EQ(r.out.rfind(path + ":1:1: error: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(problem), std::string::npos) << r.out;
    EXPECT_EQ(countLines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind(path + ": error: ", 0), 0u) << r.err;
  }
  {
    CliResult r = runCliWithin({"--format", "json", path}, 60);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_NE(r.out.find(R"("status": "fatal")"), std::string::npos) << r.out;
  }
  expectUnchanged(before, path);
}

std::vector<std::string> linesWith(const std::string &out, const std::string &needle) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (l.find(needle) != std::string::npos)
      lines.push_back(l);
  return lines;
}

// Lints a model that parses but is invalid: exit 1 and a GL001 error that
// contains `problem`.
CliResult expectGL001(const std::string &path, const std::string &problem) {
  Snapshot before = snapshot(path);
  CliResult r = runCliWithin({"--no-color", path}, 60);
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  auto hits = linesWith(r.out, "error[GL001]");
  bool found = false;
  for (const auto &l : hits) {
    EXPECT_EQ(l.rfind(path + ": error[GL001] ", 0), 0u) << l;
    found |= l.find(problem) != std::string::npos;
  }
  EXPECT_TRUE(found) << "no GL001 containing '" << problem << "' in:\n" << r.out;
  expectUnchanged(before, path);
  return r;
}

std::string writeText(const std::string &name, const std::string &text) {
  std::string path = tempDir() + "/" + name;
  writeFile(path, onnxFromText(text));
  return path;
}

// ---- files that are not models ---------------------------------------------

TEST(BadInput, MissingFile) {
  std::string path = tempDir() + "/no-such-model.onnx";
  expectFatal(path, "no such file");
  EXPECT_FALSE(llvm::sys::fs::exists(path)) << "the linter must not create its input";
}

TEST(BadInput, Directory) { expectFatal(tempDir(), "is a directory"); }

TEST(BadInput, EmptyFile) {
  std::string path = tempDir() + "/empty.onnx";
  writeFile(path, "");
  expectFatal(path, "empty file");
}

TEST(BadInput, TruncatedRealModel) {
  std::string full = readFile(sourcePath("models/resnet18.onnx"));
  ASSERT_GT(full.size(), 1000u);
  std::string path = tempDir() + "/resnet18-truncated.onnx";
  writeFile(path, full.substr(0, full.size() / 2));
  expectFatal(path, "not a valid ONNX model");
  // Cut at many points: never a crash, always one fatal line.
  for (size_t cut : {size_t(1), size_t(7), full.size() / 3, full.size() - 1}) {
    SCOPED_TRACE(cut);
    writeFile(path, full.substr(0, cut));
    CliResult r = runCliWithin({"--format", "gcc", path}, 60);
    EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
    EXPECT_EQ(countLines(r.out), 1u) << r.out;
  }
}

// .pt2 archives (docs/pt2.md): a cut archive, a zip that is not an export,
// an unsupported schema -- one fatal line each, exit 2, the file untouched.
TEST(BadInput, BrokenPt2Archives) {
  std::string full = readFile(sourcePath("tests/fixtures/pt2/mlp.pt2"));
  std::string cut = tempDir() + "/mlp-cut.pt2";
  writeFile(cut, full.substr(0, full.size() * 2 / 3));
  expectFatal(cut, "is not a readable zip archive (truncated or corrupt .pt2?)");
  expectFatal(sourcePath("tests/fixtures/pt2/not_export.pt2"), "not by torch.export.save");
  expectFatal(sourcePath("tests/fixtures/pt2/bad_schema.pt2"), "ExportedProgram schema version 99.20 is not supported");
  // The extension does not matter: a .onnx name on a .pt2 archive is still read as one.
  std::string renamed = tempDir() + "/really-a-pt2.onnx";
  writeFile(renamed, full);
  CliResult r = runCliWithin({"--format", "gcc", renamed}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

TEST(BadInput, RandomBytes) {
  for (unsigned seed : {1u, 2u, 3u, 42u, 1234u, 99999u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    std::string bytes(64 + rng() % 8192, '\0');
    for (char &c : bytes)
      c = static_cast<char>(rng() & 0xff);
    std::string path = tempDir() + "/random-" + std::to_string(seed) + ".onnx";
    writeFile(path, bytes);
    expectFatal(path, "not a valid ONNX model");
  }
}

TEST(BadInput, GitLfsPointer) {
  std::string path = tempDir() + "/model.onnx";
  writeFile(path, "version https://git-lfs.github.com/spec/v1\n"
                  "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
                  "size 46827520\n");
  expectFatal(path, "Git LFS pointer");
  CliResult r = runCli({path});
  EXPECT_NE(r.out.find("git lfs pull"), std::string::npos) << r.out;
}

TEST(BadInput, JsonFile) {
  std::string path = tempDir() + "/graph.json";
  writeFile(path, "\n  {\"nodes\": [], \"format\": \"fx\"}\n");
  expectFatal(path, "is a JSON file but not a graphlint FX graph");
}

TEST(BadInput, TextFileIsNotAModel) {
  std::string path = tempDir() + "/README.onnx";
  writeFile(path, "This is not a model, just some notes about one.\n");
  expectFatal(path, "not a valid ONNX model");
}

TEST(BadInput, ModelWithoutGraph) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  std::string path = tempDir() + "/nograph.onnx";
  writeFile(path, m.SerializeAsString());
  expectFatal(path, "it has no graph");
}

TEST(BadInput, SeveralFilesOneBad) {
  // One unreadable file does not stop the others; the exit code is still 2.
  std::string bad = tempDir() + "/missing.onnx";
  CliResult r = runCli({"--no-color", sourcePath("models/resnet18.onnx"), bad});
  EXPECT_EQ(r.exitCode, 2) << r.out;
  EXPECT_NE(r.out.find("resnet18.onnx: note[GL004]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(bad + ": fatal: no such file"), std::string::npos) << r.out;
  // --exit-zero does not hide a file that could not be linted.
  EXPECT_EQ(runCli({"--exit-zero", bad}).exitCode, 2);
}

// ---- models that parse but are invalid (GL001) -------------------------------

TEST(BadInput, CycleIsGL001) {
  std::string path = writeText("cycle.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      a = Add(x, c)
      c = Relu(a)
      y = Identity(c)
    })");
  CliResult r = expectGL001(path, "the graph has a cycle through 2 node(s): #1 (Add), #2 (Relu)");
  // Exactly one finding: the node after the cycle is not part of it.
  EXPECT_EQ(linesWith(r.out, "[GL001]").size(), 1u) << r.out;
}

TEST(BadInput, DanglingInputIsGL001) {
  std::string path = writeText("dangling.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      y = Add(x, ghost)
    })");
  CliResult r = expectGL001(path, "input 1 'ghost' of node #1 (Add) is not produced by any node");
  EXPECT_NE(r.out.find("--> node #1 (Add)"), std::string::npos) << r.out;
}

TEST(BadInput, DanglingGraphOutputIsGL001) {
  std::string path = writeText("dangling-output.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y, float[4] z) {
      y = Relu(x)
    })");
  expectGL001(path, "graph output 'z' is not produced");
}

TEST(BadInput, DuplicateDefinitionIsGL001) {
  std::string path = writeText("duplicate.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      y = Relu(x)
      y = Sigmoid(x)
    })");
  expectGL001(path, "'y' is defined twice, by node #1 (Relu) and by node #2 (Sigmoid)");
}

TEST(BadInput, DuplicateInitializerIsGL001) {
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, float[2] w = {1.0, 2.0}) => (float[2] y) {
      y = Add(x, w)
    })")));
  *m.mutable_graph()->add_initializer() = m.graph().initializer(0);
  std::string path = tempDir() + "/dup-init.onnx";
  writeFile(path, m.SerializeAsString());
  expectGL001(path, "initializer 'w' is defined more than once");
}

TEST(BadInput, UnsortedNodesAreGL001ButStillLinted) {
  std::string path = writeText("unsorted.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      y = Relu(h)
      h = Sigmoid(x)
    })");
  expectGL001(path, "nodes are not in topological order");
}

onnx::ModelProto addModelWithInitializer() {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x, float[2] w = {1.0, 2.0}) => (float[2] y) {
      y = Add(x, w)
    })")));
  return m;
}

TEST(BadInput, NegativeInitializerDimIsGL001) {
  onnx::ModelProto m = addModelWithInitializer();
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, -2);
  std::string path = tempDir() + "/negdim.onnx";
  writeFile(path, m.SerializeAsString());
  expectGL001(path, "initializer 'w' has a negative dimension -2");
}

TEST(BadInput, OverflowingInitializerDimsAreGL001) {
  onnx::ModelProto m = addModelWithInitializer();
  auto *t = m.mutable_graph()->mutable_initializer(0);
  t->clear_dims();
  t->add_dims(int64_t(1) << 40);
  t->add_dims(int64_t(1) << 40);
  std::string path = tempDir() + "/overflow.onnx";
  writeFile(path, m.SerializeAsString());
  expectGL001(path, "initializer 'w' has dimensions whose product overflows 64 bits");
}

TEST(BadInput, InitializerDataSizeMismatchIsGL001) {
  onnx::ModelProto m = addModelWithInitializer();
  auto *t = m.mutable_graph()->mutable_initializer(0);
  t->clear_float_data();
  t->set_raw_data(std::string(12, '\0'));  // float[2] needs 8 bytes
  std::string path = tempDir() + "/rawsize.onnx";
  writeFile(path, m.SerializeAsString());
  expectGL001(path, "holds 12 bytes of raw data, but FLOAT[2] needs 8");
}

TEST(BadInput, NegativeAndHugeInputDimsNeverCrash) {
  onnx::ModelProto m = addModelWithInitializer();
  auto *shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_value(-3);
  std::string path = tempDir() + "/neginput.onnx";
  writeFile(path, m.SerializeAsString());
  CliResult r = expectGL001(path, "graph input 'x' declares a negative size -3 for dimension 0");
  // The bogus size is dropped: inspect shows the dim as unknown, not -3.
  r = runCliWithin({"inspect", "--format", "json", path}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("\"name\": \"x\",\n      \"shape\": [\n        null\n      ]"), std::string::npos) << r.out;

  shape->mutable_dim(0)->set_dim_value(INT64_MAX);
  shape->add_dim()->set_dim_value(INT64_MAX);
  writeFile(path, m.SerializeAsString());
  r = runCliWithin({"--no-color", path}, 60);
  EXPECT_GE(r.exitCode, 0) << r.err;
  EXPECT_LE(r.exitCode, 1) << r.out << r.err;
  r = runCliWithin({"inspect", "--format", "json", path}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
}

TEST(BadInput, InvalidOpsetIsGL001) {
  std::string path = writeText("badopset.onnx", R"(
    <ir_version: 8, opset_import: ["" : 0]>
    g (float[4] x) => (float[4] y) {
      y = Relu(x)
    })");
  expectGL001(path, "opset import 'ai.onnx' has an invalid version 0");
}

TEST(BadInput, SchemaViolationIsGL001) {
  std::string path = writeText("schema.onnx", R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) {
      y = Relu(x, x)
    })");
  expectGL001(path, "violates its ONNX schema");
}

// ---- nesting -----------------------------------------------------------------

// An If whose then-branch holds another If, `depth` levels deep. Bodies read
// the outer `x` and `c`, as exporters write them.
onnx::GraphProto nestedBody(int level, int depth) {
  onnx::GraphProto g;
  g.set_name("b" + std::to_string(level));
  std::string out = "o" + std::to_string(level);
  auto *o = g.add_output();
  o->set_name(out);
  o->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto *n = g.add_node();
  n->add_output(out);
  if (level == depth) {
    n->set_op_type("Identity");
    n->add_input("x");
    return g;
  }
  n->set_op_type("If");
  n->set_name("if" + std::to_string(level));
  n->add_input("c");
  auto *thenAttr = n->add_attribute();
  thenAttr->set_name("then_branch");
  thenAttr->set_type(onnx::AttributeProto::GRAPH);
  *thenAttr->mutable_g() = nestedBody(level + 1, depth);
  auto *elseAttr = n->add_attribute();
  elseAttr->set_name("else_branch");
  elseAttr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto leaf;
  leaf.set_name("leaf" + std::to_string(level));
  auto *lo = leaf.add_output();
  lo->set_name("e" + std::to_string(level));
  lo->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto *ln = leaf.add_node();
  ln->set_op_type("Identity");
  ln->add_input("x");
  ln->add_output("e" + std::to_string(level));
  *elseAttr->mutable_g() = leaf;
  return g;
}

std::string nestedIfModel(int depth) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto g = nestedBody(0, depth);
  g.set_name("main");
  auto *c = g.add_input();
  c->set_name("c");
  c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  c->mutable_type()->mutable_tensor_type()->mutable_shape();
  auto *x = g.add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  *m.mutable_graph() = g;
  return m.SerializeAsString();
}

TEST(BadInput, SubgraphsNestedBeyondTheLimitAreRefusedClearly) {
  std::string path = tempDir() + "/nested40.onnx";
  writeFile(path, nestedIfModel(40));
  Snapshot before = snapshot(path);
  for (const char *fmt : {"text", "gcc", "json"}) {
    SCOPED_TRACE(fmt);
    CliResult r = runCliWithin({"--format", fmt, "--no-color", path}, 60);
    // Refused as a file (2) or linted with a GL001 (1): either way a message
    // about the nesting, and no crash.
    EXPECT_TRUE(r.exitCode == 1 || r.exitCode == 2) << r.exitCode << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("nest"), std::string::npos) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find("32 levels"), std::string::npos) << r.out << r.err;
  }
  expectUnchanged(before, path);
}

TEST(BadInput, SubgraphsNestedUpToTheLimitAreLinted) {
  // The documented limit is 32 levels of subgraphs: a model that deep is linted.
  std::string path = tempDir() + "/nested32.onnx";
  writeFile(path, nestedIfModel(32));
  CliResult r = runCliWithin({"--no-color", path}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 file checked: 0 errors"), std::string::npos) << r.out;
}

TEST(BadInput, OneLevelPastTheLimitIsAGL001NotACrash) {
  std::string path = tempDir() + "/nested33.onnx";
  writeFile(path, nestedIfModel(33));
  CliResult r = runCliWithin({"--no-color", path}, 60);
  EXPECT_TRUE(r.exitCode == 1 || r.exitCode == 2) << r.exitCode << r.out << r.err;
  EXPECT_NE(r.out.find("nested deeper than 32 levels"), std::string::npos) << r.out << r.err;
}

// ---- external data -------------------------------------------------------------

// y = Add(x, w) where w's bytes live at `location` (relative to the model).
std::string externalModel(const std::string &location) {
  onnx::ModelProto m = addModelWithInitializer();
  auto *t = m.mutable_graph()->mutable_initializer(0);
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char *k, const std::string &v) {
    auto *e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", "0");
  add("length", "8");
  return m.SerializeAsString();
}

struct ExternalCase {
  std::string dir;        // the model's directory
  std::string model;      // path of the model
};

ExternalCase writeExternal(const std::string &location) {
  ExternalCase c;
  c.dir = tempDir() + "/models";
  llvm::sys::fs::create_directories(c.dir);
  c.model = c.dir + "/m.onnx";
  writeFile(c.model, externalModel(location));
  return c;
}

TEST(ExternalData, MissingFileIsGL004AndExitsZero) {
  ExternalCase c = writeExternal("m.weights");
  Snapshot before = snapshot(c.model);
  CliResult r = runCliWithin({"--no-color", c.model}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  auto hits = linesWith(r.out, "warning[GL004]");
  ASSERT_EQ(hits.size(), 1u) << r.out;
  // The first line stops at the clause break; the rest is the first note.
  EXPECT_EQ(hits[0], c.model + ": warning[GL004] 1 tensor(s) (8 bytes, first 'w') are stored in external file "
                               "'m.weights', which does not exist next to the model (missing-weights)");
  EXPECT_NE(r.out.find("     = note: linting continues on shapes\n"), std::string::npos) << r.out;
  EXPECT_TRUE(linesWith(r.out, "[GL001]").empty()) << r.out;
  // With --fail-on warning the same finding fails the run.
  EXPECT_EQ(runCliWithin({c.model, "--fail-on", "warning"}, 60).exitCode, 1);
  expectUnchanged(before, c.model);
}

TEST(ExternalData, PresentFileIsClean) {
  ExternalCase c = writeExternal("m.weights");
  writeFile(c.dir + "/m.weights", std::string(8, '\0'));
  CliResult r = runCliWithin({"--no-color", c.model}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("0 errors, 0 warnings"), std::string::npos) << r.out;
}

TEST(ExternalData, ShortFileIsGL004) {
  ExternalCase c = writeExternal("m.weights");
  writeFile(c.dir + "/m.weights", std::string(4, '\0'));
  CliResult r = runCliWithin({"--no-color", c.model}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  auto hits = linesWith(r.out, "warning[GL004]");
  ASSERT_EQ(hits.size(), 1u) << r.out;
  EXPECT_NE(hits[0].find("reads bytes 0..8 of 'm.weights', which has only 4 bytes"), std::string::npos) << hits[0];
}

// A hostile location is refused with GL001 naming the initializer and is
// never opened; opening the targets below would either hang (FIFO) or read
// files the model has no business reading.
void expectRefused(const ExternalCase &c, const std::string &why) {
  Snapshot before = snapshot(c.model);
  CliResult r = runCliWithin({"--no-color", c.model}, 30);
  ASSERT_NE(r.exitCode, -2) << "graphlint hung (did it open the external data?) " << r.err;
  EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
  auto hits = linesWith(r.out, "error[GL001]");
  bool found = false;
  for (const auto &l : hits)
    found |= l.find("initializer 'w'") != std::string::npos && l.find(why) != std::string::npos &&
             l.find("refused") != std::string::npos;
  EXPECT_TRUE(found) << "want GL001 with '" << why << "' in:\n" << r.out;
  EXPECT_TRUE(linesWith(r.out, "[GL004]").empty()) << "a refused path is not a missing file:\n" << r.out;
  expectUnchanged(before, c.model);
}

TEST(ExternalData, AbsolutePathIsRefused) {
  expectRefused(writeExternal("/etc/passwd"), "names an absolute external data path '/etc/passwd'");
}

TEST(ExternalData, WindowsAbsolutePathIsRefused) {
  expectRefused(writeExternal("C:\\weights\\m.bin"), "names an absolute external data path");
}

TEST(ExternalData, DotDotEscapeIsRefused) {
  ExternalCase c = writeExternal("../secret.bin");
  writeFile(c.dir + "/../secret.bin", std::string(8, '\0'));
  expectRefused(c, "external data path '../secret.bin' escapes the model's directory");
}

TEST(ExternalData, DotDotThatStaysInsideIsAccepted) {
  ExternalCase c = writeExternal("sub/../m.weights");
  llvm::sys::fs::create_directories(c.dir + "/sub");
  writeFile(c.dir + "/m.weights", std::string(8, '\0'));
  CliResult r = runCliWithin({"--no-color", c.model}, 30);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_TRUE(linesWith(r.out, "[GL001]").empty()) << r.out;
}

TEST(ExternalData, DeepDotDotEscapeIsRefused) {
  expectRefused(writeExternal("a/../../../../../../etc/passwd"), "escapes the model's directory");
}

TEST(ExternalData, SymlinkOutsideTheModelDirIsRefused) {
  ExternalCase c = writeExternal("m.weights");
  std::string outside = tempDir() + "/outside.bin";
  writeFile(outside, std::string(8, '\0'));
  ASSERT_FALSE(llvm::sys::fs::create_link(outside, c.dir + "/m.weights"));
  expectRefused(c, "resolves outside the model's directory (symlink)");
}

TEST(ExternalData, SymlinkToDevZeroIsRefused) {
  ExternalCase c = writeExternal("m.weights");
  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/zero", c.dir + "/m.weights"));
  expectRefused(c, "is not a regular file");
}

TEST(ExternalData, FifoIsRefusedWithoutOpeningIt) {
  ExternalCase c = writeExternal("m.weights");
  ASSERT_EQ(::mkfifo((c.dir + "/m.weights").c_str(), 0600), 0);
  expectRefused(c, "is not a regular file");
}

TEST(ExternalData, SymlinkToFifoIsRefusedWithoutOpeningIt) {
  ExternalCase c = writeExternal("m.weights");
  std::string fifo = c.dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_FALSE(llvm::sys::fs::create_link(fifo, c.dir + "/m.weights"));
  expectRefused(c, "is not a regular file");
}

TEST(ExternalData, DirectoryIsRefused) {
  ExternalCase c = writeExternal("weights");
  llvm::sys::fs::create_directories(c.dir + "/weights");
  expectRefused(c, "is not a regular file");
}

TEST(ExternalData, ConstantAttributeWithHostilePathNeverHangs) {
  // External data may also sit in a Constant's tensor attribute.
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) {
      w = Constant <value = float[2] {1.0, 2.0}> ()
      y = Add(x, w)
    })")));
  auto *t = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *e = t->add_external_data();
  e->set_key("location");
  e->set_value("m.weights");
  std::string dir = tempDir();
  ASSERT_EQ(::mkfifo((dir + "/m.weights").c_str(), 0600), 0);
  std::string path = dir + "/m.onnx";
  writeFile(path, m.SerializeAsString());
  Snapshot before = snapshot(path);
  CliResult r = runCliWithin({"--no-color", path}, 30);
  ASSERT_NE(r.exitCode, -2) << "graphlint hung on a FIFO named by a Constant's external data";
  EXPECT_TRUE(r.exitCode == 0 || r.exitCode == 1) << r.exitCode << r.out << r.err;
  expectUnchanged(before, path);
}

}  // namespace
