#include "graphlint/ir/SymbolBinder.h"

#include <fmt/format.h>

namespace graphlint {

void SymbolBinder::declare(SymbolInfo info) {
  std::string name = info.name;
  symbols_[name] = std::move(info);
}

std::optional<int64_t> SymbolBinder::lookup(llvm::StringRef name) {
  auto [it, fresh] = symbols_.try_emplace(name.str());
  SymbolInfo &s = it->second;
  if (fresh)
    s.name = name.str();
  if (s.origin != SymbolInfo::Origin::Unbound)
    return s.value;
  if (auto c = cli_.find(s.name); c != cli_.end()) {
    s.origin = SymbolInfo::Origin::Cli;
    s.value = c->second;
    return s.value;
  }
  // A default over the other symbols follows their -D (a rescaled batch
  // rescales tokens_per_expert); one that cannot be evaluated (or names
  // itself) falls back to the hint.
  if (s.defaultExpr && resolving_.insert(s.name).second) {
    std::optional<int64_t> v = s.defaultExpr->evaluate([&](llvm::StringRef n) { return lookup(n); });
    resolving_.erase(s.name);
    if (v) {
      s.origin = SymbolInfo::Origin::Default;
      s.value = v;
      return s.value;
    }
  }
  if (s.hint) {
    s.origin = SymbolInfo::Origin::Hint;
    s.value = s.hint;
  }
  return s.value;
}

Dim SymbolBinder::bind(const Dim &d) {
  if (!d.isSymbolic())
    return d;
  return d.substitute([&](llvm::StringRef n) { return lookup(n); });
}

void SymbolBinder::noteInput(const std::string &name, const Type &unbound) {
  inputs_.push_back(fmt::format("{} {}", name, unbound.str()));
}

void SymbolBinder::finish(Model &m) {
  m.symbols.clear();
  // Declared but not mentioned by any dim: still report what -D, the default
  // or the hint gives it.
  std::vector<std::string> declared;
  for (const auto &[name, s] : symbols_)
    declared.push_back(name);
  for (const std::string &name : declared)
    lookup(name);
  for (const auto &[name, s] : symbols_)
    m.symbols.push_back(s);
  std::string names, inputs;
  // Where a symbol comes from tells the user which size it is (.pt2 symbols
  // are torch's s0, s77: the Dim names are not saved).
  for (const auto &[name, s] : symbols_)
    names += (names.empty() ? "" : ", ") + name + (s.source.empty() ? "" : " (" + s.source + ")");
  for (const std::string &in : inputs_)
    inputs += (inputs.empty() ? "" : ", ") + in;
  if (inputs.empty())
    inputs = "none";
  for (const auto &[name, value] : cli_) {
    if (symbols_.count(name))
      continue;
    if (names.empty())
      m.setupWarnings.push_back(fmt::format("-D {}={} binds nothing: the file has no symbolic dims, its inputs are "
                                            "static ({}); re-export with dynamic sizes to rescale it",
                                            name, value, inputs));
    else
      m.setupWarnings.push_back(fmt::format("-D {}={} binds nothing: the file's size symbols are {} (inputs: {})",
                                            name, value, names, inputs));
  }
}

}  // namespace graphlint
