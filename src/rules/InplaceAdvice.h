// The rewrite GL131 and GL132 suggest for an in-place write, by how the user
// most likely wrote it: `h[i] = v` / `h[:, 0] = 0` trace to fill_, copy_ or
// index_put_ on a view, where "use fill instead of fill_" would be no advice
// at all; `torch.add(a, b, out=c)` traces to the functional op name with a
// written argument.
#pragma once

#include "graphlint/ir/Graph.h"
#include "graphlint/ir/ValueFacts.h"

#include <fmt/format.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/ADT/StringSwitch.h>

#include <string>

namespace graphlint {

inline bool isIndexedAssignment(const Node &write, const Value &written, const Value &root) {
  llvm::StringRef op = write.opType;
  return op == "index_put_" || op == "_index_put_impl_" ||
         (&written != &root && llvm::StringSwitch<bool>(op).Cases("fill_", "copy_", "zero_", true).Default(false));
}

/// "use the out-of-place op (mul instead of mul_)" and its variants for
/// indexed assignment and out=.
inline std::string outOfPlaceAdvice(const Node &write, const Value &written, const Value &root) {
  llvm::StringRef op = write.opType;
  if (isIndexedAssignment(write, written, root))
    return fmt::format("assign into a copy (`{0} = {0}.clone()` before the indexed assignment), or build the value "
                       "out of place (torch.where, index_put, torch.cat)",
                       root.name);
  if (isInplaceOp(write) && !op.startswith("_"))
    return fmt::format("use the out-of-place op ({} instead of {})", op.rtrim('_').str(), op.str());
  return "use the op's returned tensor instead of writing into an existing one (drop out=)";
}

}  // namespace graphlint
