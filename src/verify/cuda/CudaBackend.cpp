// Device discovery and the cuda backend module's entry point, which
// src/verify/CudaLoader.cpp finds with dlsym; the class is in
// CudaBackend.h, its device ops in CudaOps.cpp.
#include "CudaBackend.h"

#include <dlfcn.h>

namespace graphlint::verify {

using cuda::fail;

namespace {
// Why cudaGetDeviceCount found no device. cudart reports a machine with no
// NVIDIA driver at all as "driver version is insufficient", which sends the
// reader looking for an upgrade: name the missing libcuda.so.1 instead.
std::string whyNoDevice(cudaError_t e) {
  if (e == cudaSuccess)
    return "the driver reports 0 devices";
  if (e == cudaErrorInsufficientDriver) {
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver) {
      const char *why = dlerror();
      return fmt::format("no NVIDIA driver is installed: {}", why ? why : "libcuda.so.1 cannot be loaded");
    }
    dlclose(driver);
  }
  return cudaGetErrorString(e);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) llvm::Expected<std::unique_ptr<Backend>>
graphlint_make_cuda_backend() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    return fail(fmt::format("no CUDA device is available ({})", whyNoDevice(e)));
  auto b = std::make_unique<cuda::CudaBackend>();
  if (auto err = b->init())
    return fail("cannot start the cuda backend: " + llvm::toString(std::move(err)));
  return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace graphlint::verify
