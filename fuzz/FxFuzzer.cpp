// Target 2: bytes as a graphlint-export FX JSON file -> FX importer -> all
// rules and analyses.
#include "FuzzTargets.h"

#include "graphlint/import/Importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace graphlint;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto model = importFxBytes(bytes, "/nonexistent-graphlint-fuzz/model.fx.json", ImportOptions());
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  fuzz::lintAndRender(**model);
  return 0;
}
