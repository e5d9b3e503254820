#include "graphlint/ir/StackTrace.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

namespace graphlint {

SourceLoc parseStackTrace(llvm::StringRef trace) {
  SourceLoc best;
  llvm::SmallVector<llvm::StringRef, 16> lines;
  trace.split(lines, '\n', -1, false);
  for (llvm::StringRef raw : lines) {
    llvm::StringRef line = raw.trim();
    SourceLoc loc;
    if (line.consume_front("File \"")) {
      // Python traceback frame: File "x.py", line 12, in forward
      size_t q = line.find('"');
      if (q == llvm::StringRef::npos)
        continue;
      loc.file = line.substr(0, q).str();
      llvm::StringRef rest = line.substr(q + 1);
      if (!rest.consume_front(", line "))
        continue;
      llvm::StringRef num = rest.take_while([](char c) { return llvm::isDigit(c); });
      if (num.getAsInteger(10, loc.line))
        continue;
      rest = rest.drop_front(num.size());
      if (rest.consume_front(", in "))
        loc.function = rest.trim().str();
    } else {
      // TorchScript source range: /path/x.py(12): forward
      size_t open = line.rfind("):");
      size_t paren = open == llvm::StringRef::npos ? open : line.rfind('(', open);
      if (paren == llvm::StringRef::npos || paren == 0)
        continue;
      llvm::StringRef num = line.slice(paren + 1, open);
      if (num.getAsInteger(10, loc.line))
        continue;
      loc.file = line.substr(0, paren).str();
      loc.function = line.substr(open + 2).trim().str();
      if (!llvm::StringRef(loc.file).endswith(".py"))
        continue;
    }
    // Frames are listed outermost first; the innermost user frame is the last
    // one outside torch itself.
    // (torch.export records some of its own frames relative: "torch/fx/...").
    // Generated code ("<eval_with_key>.23", "<string>") is not the user's either.
    if (loc.valid() && loc.file.find("/torch/") == std::string::npos && loc.file.rfind("torch/", 0) != 0 &&
        loc.file[0] != '<')
      best = loc;
  }
  return best;
}

}  // namespace graphlint
