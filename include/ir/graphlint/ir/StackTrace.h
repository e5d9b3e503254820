// The user's source line from the stack traces exporters record: ONNX
// exporters in doc strings and metadata (ir/onnx/SourceInfo.cpp), torch.export
// in each node's stack_trace (ir/pt2). Format-neutral, so both frontends use it.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/StringRef.h>

namespace graphlint {

/// Parses the innermost frame of a Python traceback ('File "m.py", line 3, in
/// f') or a TorchScript source range ('m.py(3): f'); invalid loc when absent.
SourceLoc parseStackTrace(llvm::StringRef trace);

}  // namespace graphlint
