// makeCudaBackend(): loads the cuda backend module (libgraphlint_cuda.so,
// src/verify/cuda) on first use, so that linting never loads cuBLAS, cuDNN
// or CUPTI. The module is looked for in GRAPHLINT_CUDA_MODULE (a file), next
// to the running executable, in ../lib/graphlint/ from it (an installed
// tree), and in the build tree it was built in.
#include "graphlint/verify/Executor.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace graphlint::verify {

/// The module's entry point (CudaBackend.cpp).
using CudaFactory = llvm::Expected<std::unique_ptr<Backend>> (*)();
inline constexpr const char *kCudaFactorySymbol = "graphlint_make_cuda_backend";
inline constexpr const char *kCudaModuleName = "libgraphlint_cuda.so";

namespace {

llvm::Error noDevice(const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "no CUDA device is available: %s", why.c_str());
}

// Any address inside this binary, for getMainExecutable().
int anchor;

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char *env = std::getenv("GRAPHLINT_CUDA_MODULE"); env && *env)
    out.emplace_back(env);
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  if (!exe.empty()) {
    llvm::SmallString<256> dir(exe);
    llvm::sys::path::remove_filename(dir);
    llvm::SmallString<256> beside(dir), installed(dir);
    llvm::sys::path::append(beside, kCudaModuleName);
    llvm::sys::path::append(installed, "..", "lib", "graphlint", kCudaModuleName);
    out.emplace_back(beside);
    out.emplace_back(installed);
  }
#ifdef GRAPHLINT_CUDA_MODULE_BUILD_PATH
  out.emplace_back(GRAPHLINT_CUDA_MODULE_BUILD_PATH);
#endif
  return out;
}

}  // namespace

llvm::Expected<std::unique_ptr<Backend>> makeCudaBackend() {
#ifndef GRAPHLINT_CUDA_MODULE_BUILD_PATH
  if (!std::getenv("GRAPHLINT_CUDA_MODULE"))
    return noDevice(GRAPHLINT_CUDA_MISSING);
#endif
  static CudaFactory factory = nullptr;
  static std::string loadError;
  if (!factory && loadError.empty()) {
    for (const std::string &path : candidates()) {
      if (!llvm::sys::fs::is_regular_file(path))
        continue;
      // The module resolves graphlint's symbols from this executable; it is
      // never unloaded (the backend's code must outlive every Backend).
      void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) {
        const char *e = dlerror();
        loadError = "cannot load the cuda backend " + path + ": " + (e ? e : "unknown error");
        break;
      }
      factory = reinterpret_cast<CudaFactory>(dlsym(h, kCudaFactorySymbol));
      if (!factory)
        loadError = path + " has no " + kCudaFactorySymbol;
      break;
    }
    if (!factory && loadError.empty())
      loadError = std::string("the cuda backend module ") + kCudaModuleName + " was not found next to graphlint";
  }
  if (!factory)
    return noDevice(loadError);
  return factory();
}

}  // namespace graphlint::verify
