// What the user states about the run: symbolic dim bindings, the fusion backend
// and, for later cost analyses, the training setup and target hardware. One
// struct, filled from the command line (and later the config file), read by
// importers and analyses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace graphlint {

/// Which compiler's fusion legality the planner applies (docs/fusion.md).
enum class FusionBackend : uint8_t { Inductor, TensorRT, Ort };
std::string_view fusionBackendName(FusionBackend b);
std::optional<FusionBackend> fusionBackendFromName(std::string_view s);

struct Setup {
  /// --dim NAME=SIZE: binds named symbolic dims before shape completion.
  std::map<std::string, int64_t> dims;
  /// --backend: inductor (default), tensorrt, ort.
  FusionBackend backend = FusionBackend::Inductor;
  /// --target: a hardware profile name (docs/hardware.md).
  std::string target = "H100-SXM";
};

}  // namespace graphlint
