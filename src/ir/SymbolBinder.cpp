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
  } else if (s.hint) {
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

void SymbolBinder::finish(Model &m) const {
  m.symbols.clear();
  for (const auto &[name, s] : symbols_) {
    SymbolInfo out = s;
    if (out.origin == SymbolInfo::Origin::Unbound) {
      // Declared but not mentioned by any dim: still report what -D or the hint gives it.
      if (auto c = cli_.find(name); c != cli_.end())
        out.origin = SymbolInfo::Origin::Cli, out.value = c->second;
      else if (out.hint)
        out.origin = SymbolInfo::Origin::Hint, out.value = out.hint;
    }
    m.symbols.push_back(std::move(out));
  }
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
