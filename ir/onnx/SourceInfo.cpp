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
    // (torch.export records some of its own frames relative: "torch/fx/...").
    // Generated code ("<eval_with_key>.23", "<string>") is not the user's either.
    if (loc.valid() && loc.file.find("/torch/") == std::string::npos && loc.file.rfind("torch/", 0) != 0 &&
        loc.file[0] != '<')
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
  if (std::optional<std::string> dynamo = dynamoModulePath(n))
    n.modulePath = *dynamo;
  if (n.modulePath.empty())
    n.modulePath = modulePathFromScopedName(n.name);
}

// "['', 'block', 'block.fc']" -> "", "block", "block.fc" (Python list repr).
static llvm::SmallVector<llvm::StringRef, 8> pythonStringList(llvm::StringRef v) {
  llvm::SmallVector<llvm::StringRef, 8> parts, out;
  v.trim().trim("[]").split(parts, ',', -1, true);
  for (llvm::StringRef p : parts)
    out.push_back(p.trim().trim("'\""));
  return out;
}

std::optional<std::string> dynamoModulePath(const Node &n) {
  llvm::StringRef scopes, classes;
  for (const auto &kv : n.metadata) {
    if (kv.first == "pkg.torch.onnx.name_scopes")
      scopes = kv.second;
    else if (kv.first == "pkg.torch.onnx.class_hierarchy")
      classes = kv.second;
  }
  if (scopes.empty())
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef, 8> names = pythonStringList(scopes);
  llvm::SmallVector<llvm::StringRef, 8> kinds = pythonStringList(classes);
  // The last scope is the node itself when its class is an op, not a module;
  // without class_hierarchy (older exporters) every scope is a module.
  size_t modules = names.size();
  bool lastIsOp = kinds.size() == names.size() ? !kinds.empty() && (kinds.back().startswith("aten.") ||
                                                                    kinds.back().startswith("prims.") ||
                                                                    !kinds.back().contains('.'))
                                               : false;
  if (lastIsOp && modules > 0)
    --modules;
  for (size_t i = modules; i-- > 0;)
    if (!names[i].empty())
      return names[i].str();
  return std::string();
}

}  // namespace graphlint::onnxio
