// Binds the size symbols of one model file, the same way for every frontend:
// a `-D NAME=N` binding first, else the file's default expression over the
// other symbols (an assumption it states: MoE tokens_per_expert), else the
// exporter's hint (the traced size), else the symbol stays symbolic (unbacked sizes, ONNX dim_params without -D).
// It records what it used for Model::symbols (the JSON `dims` section) and
// the setup warnings for a -D that binds nothing in the file.
#pragma once

#include "graphlint/ir/Graph.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace graphlint {

class SymbolBinder {
public:
  explicit SymbolBinder(const std::map<std::string, int64_t> &cliDims) : cli_(cliDims) {}

  /// A symbol the file declares (FX version 2 `symbols`, .pt2 range constraints).
  void declare(SymbolInfo info);
  bool declared(llvm::StringRef name) const { return symbols_.count(name.str()) != 0; }
  /// The value a dim's symbol takes, recording that the file uses it.
  std::optional<int64_t> lookup(llvm::StringRef name);
  /// `d` with every bindable symbol replaced; static when fully bound.
  Dim bind(const Dim &d);
  /// Remembers a user input and its unbound type for the warning text.
  void noteInput(const std::string &name, const Type &unbound);
  /// Writes Model::symbols and Model::setupWarnings.
  void finish(Model &m);

private:
  const std::map<std::string, int64_t> &cli_;
  std::map<std::string, SymbolInfo> symbols_;
  std::set<std::string> resolving_;  // defaults being evaluated (a default naming itself)
  std::vector<std::string> inputs_;  // "x f32[batch,3]"
};

}  // namespace graphlint
