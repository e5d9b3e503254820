// The one resolver for ONNX external data (weights stored beside the model):
// the importer (lint, inspect) checks every location with it, and verify
// reads weights only through it. A location may only name a regular file
// inside the model's directory: absolute paths, '..' escapes, symlinks that
// leave the directory, FIFOs, devices and directories are refused, and none
// of them is ever opened.
#pragma once

#include <llvm/Support/Error.h>

#include <cstdint>
#include <string>
#include <vector>

namespace graphlint {

/// The path to open for `location` (as written in the model) next to the
/// model at `modelPath`. A location that does not exist resolves (it is
/// reported as missing weights). Refusals are one line, e.g. "names an
/// absolute external data path '/etc/passwd'; refused".
llvm::Expected<std::string> resolveExternalData(const std::string &modelPath, const std::string &location);

/// `length` bytes at `offset` of `location`, resolved again and opened
/// without blocking, refusing anything resolveExternalData refuses.
llvm::Expected<std::string> readExternalData(const std::string &modelPath, const std::string &location,
                                             uint64_t offset, uint64_t length);

/// The external-data files an ONNX model at `modelPath` names, resolved as
/// above (refused locations left out); empty for a file that is not ONNX or
/// does not parse. Outputs of a run are compared with them (OutputFiles.h).
std::vector<std::string> externalDataFilesOf(const std::string &modelPath);

}  // namespace graphlint
