#include "SourceInfo.h"

#include "graphlint/ir/StackTrace.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringExtras.h>

namespace graphlint::onnxio {

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

std::optional<std::vector<std::string>> dynamoModuleScopes(const Node &n) {
  const std::string *scopes = n.metadataValue("pkg.torch.onnx.name_scopes");
  if (!scopes)
    return std::nullopt;
  const std::string *classes = n.metadataValue("pkg.torch.onnx.class_hierarchy");
  llvm::SmallVector<llvm::StringRef, 8> names = pythonStringList(*scopes);
  llvm::SmallVector<llvm::StringRef, 8> kinds = classes ? pythonStringList(*classes) : decltype(names){};
  // The last scope is the node itself when its class is an op, not a module;
  // without class_hierarchy (older exporters) every scope is a module.
  size_t modules = names.size();
  bool lastIsOp = kinds.size() == names.size() ? !kinds.empty() && (kinds.back().startswith("aten.") ||
                                                                    kinds.back().startswith("prims.") ||
                                                                    !kinds.back().contains('.'))
                                               : false;
  if (lastIsOp && modules > 0)
    --modules;
  std::vector<std::string> out;
  for (size_t i = 0; i < modules; ++i)
    out.push_back(names[i].str());
  return out;
}

std::vector<std::string> dynamoModuleClasses(const Node &n) {
  std::optional<std::vector<std::string>> scopes = dynamoModuleScopes(n);
  const std::string *classes = n.metadataValue("pkg.torch.onnx.class_hierarchy");
  if (!scopes || !classes)
    return {};
  llvm::SmallVector<llvm::StringRef, 8> kinds = pythonStringList(*classes);
  if (kinds.size() < scopes->size())
    return {};
  std::vector<std::string> out;
  for (size_t i = 0; i < scopes->size(); ++i)
    out.push_back(kinds[i].str());
  return out;
}

std::optional<std::string> dynamoModulePath(const Node &n) {
  std::optional<std::vector<std::string>> scopes = dynamoModuleScopes(n);
  if (!scopes)
    return std::nullopt;
  for (auto it = scopes->rbegin(); it != scopes->rend(); ++it)
    if (!it->empty())
      return *it;
  return std::string();
}

}  // namespace graphlint::onnxio
