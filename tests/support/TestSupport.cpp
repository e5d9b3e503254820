#include "TestSupport.h"

#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace graphlint::test {

std::string sourcePath(const std::string &rel) { return std::string(GRAPHLINT_SOURCE_DIR) + "/" + rel; }
std::string binaryPath(const std::string &rel) { return std::string(GRAPHLINT_BINARY_DIR) + "/" + rel; }
std::string sharedPath(const std::string &rel) { return std::string(GRAPHLINT_SHARED_DIR) + "/" + rel; }
bool sharedAvailable() { return llvm::sys::fs::is_directory(GRAPHLINT_SHARED_DIR "/corpus"); }

std::string tempDir() {
  static std::atomic<int> counter{0};
  std::string dir = binaryPath("test-tmp/" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::create_directories(dir);
  return dir;
}

std::string onnxFromText(const std::string &text) {
  onnx::ModelProto m;
  onnx::OnnxParser parser(text.c_str());
  auto status = parser.Parse(m);
  EXPECT_TRUE(status.IsOK()) << status.ErrorMessage() << "\n" << text;
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::set<Finding> markerFindings(const std::string &pyPath) {
  std::set<Finding> out;
  std::istringstream in(readFile(pyPath));
  std::string line;
  for (unsigned no = 1; std::getline(in, line); ++no) {
    llvm::StringRef l(line);
    size_t at = l.find("# expect: ");
    if (at == llvm::StringRef::npos || l.trim().startswith("\""))
      continue;
    for (llvm::StringRef rest = l.drop_front(at + 10); !rest.empty();) {
      auto [code, tail] = rest.split(',');
      if (code.trim().startswith("GL"))
        out.insert({code.trim().str(), no});
      rest = tail;
    }
  }
  return out;
}

std::set<Finding> findingsByLine(const FileReport &r, const std::string &file, const std::set<std::string> &codes) {
  std::set<Finding> out;
  for (const Diagnostic &d : r.diagnostics) {
    if (!codes.count(d.code))
      continue;
    EXPECT_EQ(d.location.source.file, file) << d.code << ": " << d.message;
    out.insert({d.code, d.location.source.line});
  }
  return out;
}

std::string describeFindings(const std::set<Finding> &fs) {
  std::string s;
  for (const auto &[code, line] : fs)
    s += code + "@" + std::to_string(line) + " ";
  return s;
}

std::unique_ptr<Model> importText(const std::string &text, const ImportOptions &opts) {
  std::string dir = tempDir();
  auto m = importOnnxBytes(onnxFromText(text), dir + "/model.onnx", opts);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

FileReport lintText(const std::string &text, const LintOptions &opts) {
  auto m = importText(text, importOptionsFor(opts));
  if (!m)
    return {};
  return lintModel(*m, opts);
}

std::vector<const Diagnostic *> withCode(const FileReport &r, const std::string &code) {
  std::vector<const Diagnostic *> out;
  for (const Diagnostic &d : r.diagnostics)
    if (d.code == code)
      out.push_back(&d);
  return out;
}

uint64_t forwardBackwardPeak(const MemorySummary &m) {
  uint64_t peak = 0;
  for (const MemorySummary::Point &p : m.timeline)
    if (p.phase != "optimizer")
      peak = std::max(peak, p.liveBytes);
  return peak;
}

std::string dumpDiagnostics(const FileReport &r) {
  std::string s;
  for (const Diagnostic &d : r.diagnostics)
    s += d.code + " " + d.location.nodeName + ": " + d.message + "\n";
  return s;
}

static bool updatingGoldens() {
  const char *v = std::getenv("GRAPHLINT_UPDATE_GOLDENS");
  return v && *v && std::string(v) != "0";
}

// First differing line, so a failure reads like a diff hunk.
static std::string firstDifference(const std::string &want, const std::string &got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (unsigned line = 1;; ++line) {
    bool ha = static_cast<bool>(std::getline(a, la)), hb = static_cast<bool>(std::getline(b, lb));
    if (!ha && !hb)
      return "(only trailing bytes differ)";
    if (!ha || !hb || la != lb)
      return "line " + std::to_string(line) + ":\n  golden: " + (ha ? la : "<end>") + "\n  actual: " +
             (hb ? lb : "<end>");
  }
}

void expectGolden(const std::string &name, const std::string &actual) {
  std::string path = sourcePath("tests/golden/" + name);
  if (updatingGoldens()) {
    writeFile(path, actual);
    std::cerr << "updated " << path << "\n";
    return;
  }
  ASSERT_TRUE(llvm::sys::fs::exists(path)) << path << " is missing; run with GRAPHLINT_UPDATE_GOLDENS=1";
  std::string want = readFile(path);
  EXPECT_TRUE(want == actual) << name << " differs from the golden at " << firstDifference(want, actual)
                              << "\nIf the change is intended: GRAPHLINT_UPDATE_GOLDENS=1 and review git diff.";
}

CliResult runCli(const std::vector<std::string> &args) { return runCliTimed(args, 120); }

CliResult runCliTimed(const std::vector<std::string> &args, unsigned seconds, const std::vector<std::string> &env) {
  std::string dir = tempDir();
  std::string outPath = dir + "/stdout", errPath = dir + "/stderr";
  std::vector<llvm::StringRef> argv{GRAPHLINT_CLI};
  for (const auto &a : args)
    argv.push_back(a);
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(outPath), llvm::StringRef(errPath)};
  CliResult r;
  std::string errMsg;
  llvm::Optional<llvm::ArrayRef<llvm::StringRef>> envp;
  std::vector<std::string> vars;
  std::vector<llvm::StringRef> envRefs;
  if (!env.empty()) {
    for (char **e = environ; *e; ++e)
      vars.emplace_back(*e);
    vars.insert(vars.end(), env.begin(), env.end());
    envRefs.assign(vars.begin(), vars.end());
    envp = llvm::ArrayRef<llvm::StringRef>(envRefs);
  }
  r.exitCode = llvm::sys::ExecuteAndWait(GRAPHLINT_CLI, argv, envp, redirects, seconds, 0, &errMsg);
  r.out = readFile(outPath);
  r.err = readFile(errPath) + errMsg;
  return r;
}

}  // namespace graphlint::test
