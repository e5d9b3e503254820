#include "SourceInfo.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

namespace graphlint::onnxio {

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
    if (loc.valid() && loc.file.find("/torch/") == std::string::npos)
      best = loc;
  }
  return best;
}

std::string modulePathFromScopedName(llvm::StringRef nodeName) {
  if (!nodeName.startswith("/"))
    return {};
  llvm::SmallVector<llvm::StringRef, 8> parts;
  nodeName.drop_front().split(parts, '/', -1, false);
  if (parts.size() < 2)
    return {};
  parts.pop_back();  // the op itself
  // Linear in the name's length: a component either restates the path so
  // far plus ".x" (torch's "layer1/layer1.0") or extends it. Comparing
  // without building `path + "."` keeps a 100,000-component name linear.
  std::string path;
  for (llvm::StringRef p : parts) {
    if (path.empty() || (p.size() > path.size() && p[path.size()] == '.' && p.startswith(path))) {
      path.assign(p.data(), p.size());
    } else {
      path += '.';
      path.append(p.data(), p.size());
    }
  }
  return path;
}

void recoverSourceInfo(Node &n) {
  for (const auto &kv : n.metadata) {
    llvm::StringRef k = kv.first;
    if (k == "pkg.torch.onnx.stack_trace" || k == "stack_trace") {
      SourceLoc l = parseStackTrace(kv.second);
      if (l.valid())
        n.loc = l;
    } else if (k == "pkg.torch.onnx.name_scopes" || k == "namespace") {
      // "['', 'layer1', 'layer1.0']" or "layer1/layer1.0": keep the last scope.
      llvm::StringRef v = kv.second;
      v = v.trim("[] ");
      llvm::SmallVector<llvm::StringRef, 8> parts;
      v.split(parts, v.contains(',') ? ',' : '/', -1, false);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        llvm::StringRef p = it->trim(" '\"");
        if (!p.empty()) {
          n.modulePath = p.str();
          break;
        }
      }
    }
  }
  if (!n.loc.valid() && !n.docString.empty())
    n.loc = parseStackTrace(n.docString);
  if (n.modulePath.empty())
    n.modulePath = modulePathFromScopedName(n.name);
}

}  // namespace graphlint::onnxio
