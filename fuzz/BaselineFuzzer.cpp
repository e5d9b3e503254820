// Target 4: bytes as a baseline file -> Baseline::parse -> applied to a
// small model's findings (matching, budgets, stale entries).
#include "FuzzTargets.h"

#include "graphlint/engine/Baseline.h"

#include <onnx/defs/parser.h>

namespace {

const graphlint::FileReport &smallReport() {
  static graphlint::FileReport r = [] {
    onnx::ModelProto proto;
    onnx::OnnxParser::Parse(proto, R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[N, 4] x) => (float[N, 4] z) {
        y = Cast <to = 1> (x)
        z = Add(y, b)
      })");
    auto model = graphlint::importOnnxBytes(proto.SerializeAsString(), "/nonexistent-graphlint-fuzz/m.onnx", {});
    graphlint::LintOptions opts;
    opts.fusionSummary = opts.costSummary = opts.memorySummary = false;
    return model ? graphlint::lintModel(**model, opts) : graphlint::FileReport();
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace graphlint;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto b = Baseline::parse(text, "/nonexistent-graphlint-fuzz/baseline.json");
  if (!b) {
    llvm::consumeError(b.takeError());
    return 0;
  }
  std::vector<FileReport> reports{smallReport()};
  auto stale = b->apply(reports, [](size_t, const std::string &) { return true; });
  (void)stale;
  return 0;
}
