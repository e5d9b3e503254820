// The ONNX frontend (src/onnx): ONNX protobuf into the IR, weight payloads
// stripped at the wire level, shapes completed, every problem recorded.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/ImportOptions.h"

#include <llvm/Support/Error.h>

#include <memory>
#include <string>

namespace graphlint {

/// Imports ONNX bytes already in memory; `path` names them in messages and
/// locates external data.
llvm::Expected<std::unique_ptr<Model>> importOnnxBytes(llvm::StringRef bytes, const std::string &path,
                                                       const ImportOptions &opts);

/// Imports the ONNX file open on `fd` (not taken over, `size` bytes) through a
/// window read with pread, never mmap, so that weight pages do not become part
/// of the resident set.
llvm::Expected<std::unique_ptr<Model>> importOnnxFile(int fd, uint64_t size, const std::string &path,
                                                      const ImportOptions &opts);

}  // namespace graphlint
