// Device discovery and the cuda backend module's entry point, which
// src/verify/CudaLoader.cpp finds with dlsym; the class is in
// CudaBackend.h, its device ops in CudaOps.cpp.
#include "CudaBackend.h"

namespace graphlint::verify {

using cuda::fail;

extern "C" __attribute__((visibility("default"))) llvm::Expected<std::unique_ptr<Backend>>
graphlint_make_cuda_backend() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return fail(fmt::format("no CUDA device is available ({})",
                            e != cudaSuccess ? cudaGetErrorString(e) : "the driver reports 0 devices"));
  auto b = std::make_unique<cuda::CudaBackend>();
  if (auto err = b->init())
    return fail("cannot start the cuda backend: " + llvm::toString(std::move(err)));
  return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace graphlint::verify
