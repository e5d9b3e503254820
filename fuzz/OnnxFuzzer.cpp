// Target 1: bytes as an ONNX file -> importer (wire stripper, protobuf,
// GraphBuilder, checker, shape completion) -> all rules and analyses.
#include "FuzzTargets.h"

#include "graphlint/import/Importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace graphlint;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto model = importOnnxBytes(bytes, fuzz::kModelPath, ImportOptions());
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  fuzz::lintAndRender(**model);
  return 0;
}
