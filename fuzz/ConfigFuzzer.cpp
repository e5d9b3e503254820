// Target 3: bytes as a .graphlint.yaml -> the config parser -> the resolved
// Config (as `graphlint config --dump` prints it) -> the suppression pass
// over a small model's findings with the config's globs.
#include "FuzzTargets.h"

#include "graphlint/engine/Config.h"

#include <onnx/defs/parser.h>

namespace {

// One small model whose nodes have names and module paths for the globs.
const graphlint::Model &smallModel() {
  static std::unique_ptr<graphlint::Model> m = [] {
    onnx::ModelProto proto;
    onnx::OnnxParser::Parse(proto, R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[N, 4] x) => (float[N, 4] z) {
        y = Cast <to = 1> (x)
        z = Cast <to = 1> (y)
      })");
    auto model = graphlint::importOnnxBytes(proto.SerializeAsString(), "/nonexistent-graphlint-fuzz/sub/m.onnx", {});
    return model ? std::move(*model) : nullptr;
  }();
  return *m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace graphlint;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto layer = parseConfigYaml(text, "/nonexistent-graphlint-fuzz/.graphlint.yaml");
  if (!layer) {
    llvm::consumeError(layer.takeError());
    return 0;
  }
  const std::string modelPath = "/nonexistent-graphlint-fuzz/sub/m.onnx";
  auto resolved = resolveConfig({&*layer}, modelPath);
  if (!resolved) {  // a mesh the world size disagrees with: refused, one line
    llvm::consumeError(resolved.takeError());
    return 0;
  }
  Config c = std::move(*resolved);
  llvm::raw_null_ostream sink;
  dumpConfig(c, modelPath, sink);
  LintOptions opts;
  opts.setup = c.setup;
  opts.policy = c.policy;
  opts.fusionSummary = opts.costSummary = opts.memorySummary = false;
  std::vector<FileReport> reports{lintModel(smallModel(), opts)};
  renderText(reports, sink, false);
  return 0;
}
