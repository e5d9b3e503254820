// Target 5: bytes as a hardware file (GRAPHLINT_HARDWARE_FILE) -> the
// profile and interconnect readers -> a catalog merge and lookups.
#include "FuzzTargets.h"

#include "graphlint/base/HardwareProfile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace graphlint;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto profiles = parseHardwareYaml(text, "hw.yaml");
  if (!profiles) {
    llvm::consumeError(profiles.takeError());
  } else {
    for (const HardwareProfile &p : *profiles)
      (void)rooflineSeconds(p, 1e12, MathPrecision::FP32, 1e9);
  }
  auto links = parseInterconnectYaml(text, "hw.yaml");
  if (!links) {
    llvm::consumeError(links.takeError());
  } else {
    for (const Interconnect &l : *links)
      (void)l.busBandwidth(1 << 20);
  }
  return 0;
}
