// Built when CMake found no CUDA toolkit: verify runs only on the cpu backend.
#include "graphlint/verify/Executor.h"

namespace graphlint::verify {

llvm::Expected<std::unique_ptr<Backend>> makeCudaBackend() {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "no CUDA device is available: graphlint was built without the CUDA toolkit");
}

}  // namespace graphlint::verify
