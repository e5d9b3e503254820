// What the verify executor feeds a model: random graph inputs of the declared
// dtypes and bound shapes, and the parameters' real bytes read from the model
// file (inline payloads at the offsets the importer recorded, or external
// data files) or, with --random-weights, random values of the right shapes.
#pragma once

#include "graphlint/verify/Executor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace graphlint::verify {

struct FeedOptions {
  /// Random parameters instead of the file's (for weightless exports).
  bool randomWeights = false;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
};

/// Reads `p`'s bytes from the model file or its external data file.
llvm::Expected<HostTensor> loadParam(const Model &m, const Param &p);

/// Binds every graph input and parameter of `plan` on `backend`. A param
/// whose bytes are absent is an error naming it, unless randomWeights.
llvm::Error feedModel(const Model &m, const ExecPlan &plan, Backend &backend, const FeedOptions &opts);

}  // namespace graphlint::verify
