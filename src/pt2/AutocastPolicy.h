// What torch.autocast does to an op's arguments, per device: the cast
// policies of ATen's autocast dispatch keys (aten/src/ATen/autocast_mode.cpp).
// torch.export records an autocast region as one higher-order op whose body
// holds the ops as the user called them (aten.linear on fp32 tensors); the
// casts autocast makes at run time are not in the graph, and the importer
// adds them from this table (docs/pt2.md, "Autocast regions").
#pragma once

#include <llvm/ADT/StringRef.h>

namespace graphlint::pt2 {

enum class AutocastPolicy {
  None,            // runs in its inputs' dtypes (type promotion, no copies)
  LowerPrecision,  // floating inputs cast to the region's dtype (linear, matmul, conv)
  Fp32,            // lower-precision floating inputs cast to float32 (losses; on CUDA layer_norm, exp)
  Promote,         // floating inputs cast to the widest floating dtype among them (cat on the CPU)
};

/// The policy of aten op `op` (no overload: "linear", "conv2d") in an
/// autocast region of device type `device` ("cpu", "cuda"; other device
/// types use the CUDA lists, as XPU does).
AutocastPolicy autocastPolicy(llvm::StringRef device, llvm::StringRef op);

}  // namespace graphlint::pt2
