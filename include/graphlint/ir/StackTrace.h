// The user's source line from the stack traces exporters record: ONNX
// exporters in doc strings and metadata (src/onnx/SourceInfo.cpp), torch.export
// in each node's stack_trace (src/pt2). Format-neutral, so both frontends use it.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace graphlint {

/// One frame of a Python traceback: where it was and the first line of the
/// statement it was running (trimmed; empty when the trace omits it).
struct TraceFrame {
  std::string file;
  unsigned line = 0;
  std::string function;
  std::string code;
};

/// Parses the innermost frame of a Python traceback ('File "m.py", line 3, in
/// f') or a TorchScript source range ('m.py(3): f'); invalid loc when absent.
SourceLoc parseStackTrace(llvm::StringRef trace);

/// Every frame of a Python traceback ('File "m.py", line 3, in f' followed by
/// its source line), outermost first; frames past `maxFrames` are dropped.
std::vector<TraceFrame> parseTraceFrames(llvm::StringRef trace, size_t maxFrames);

/// The local names a Python statement binds, from its first line:
/// "a, _ = f(x)" -> a, _; "x: T = g(" -> x; "x += y" -> x. Empty for any other
/// statement (a return, a call, `self.x = ...`, `x[i] = ...`, a comparison).
llvm::SmallVector<llvm::StringRef, 4> assignedNames(llvm::StringRef code);

}  // namespace graphlint
