#include "graphlint/engine/Grouping.h"

#include "graphlint/ir/LibrarySource.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>
#include <tuple>

namespace graphlint {
namespace {

// The message without what names one node rather than the cause: quoted
// names ('mul_1', 'h.3.attn') and numbers (node #12, "18 consecutive
// kernels", sizes): at one source line and op they measure one cause.
std::string causeText(const std::string &m) {
  std::string out;
  for (size_t i = 0; i < m.size(); ++i) {
    char c = m[i];
    if (c == '\'') {
      size_t close = m.find('\'', i + 1);
      if (close != std::string::npos) {
        out += "''";
        i = close;
        continue;
      }
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      out += '#';
      while (i + 1 < m.size() && std::isdigit(static_cast<unsigned char>(m[i + 1])))
        ++i;
      continue;
    }
    out += c;
  }
  return out;
}

using CauseKey = std::tuple<std::string, int, std::string, std::string, std::string, std::string, std::string>;

std::optional<CauseKey> causeOf(const Diagnostic &d) {
  const Rule *rule = findRule(d.code);
  if (rule && rule->info().grouping == GroupScope::None)
    return std::nullopt;
  const Location &l = d.location;
  std::string place;
  if (l.source.valid())
    place = fmt::format("{}:{}:{}", l.source.file, l.source.line, l.source.col);
  else if (!l.modulePath.empty())
    place = "module " + moduleTemplate(l.modulePath);
  else
    return std::nullopt;
  return CauseKey{d.code, static_cast<int>(d.severity), d.reason.value_or(""), l.opType,
                  l.graphPath.empty() ? "main" : l.graphPath, place, causeText(d.message)};
}

}  // namespace

void groupDiagnostics(std::vector<Diagnostic> &diags) {
  std::map<CauseKey, size_t> first;  // cause -> index in `kept`
  std::vector<Diagnostic> kept;
  kept.reserve(diags.size());
  for (Diagnostic &d : diags) {
    std::optional<CauseKey> key = causeOf(d);
    if (key) {
      auto [it, fresh] = first.emplace(*key, kept.size());
      if (!fresh) {
        kept[it->second].alsoAt.push_back(std::move(d.location));
        continue;
      }
    }
    kept.push_back(std::move(d));
  }
  diags = std::move(kept);
  foldBackwardCopies(diags);
}

// A joint graph's backward node carries the forward line it differentiates
// (column 0): its finding of the same rule at that line (the gradient of a
// cast is the cast back, of a mixed-dtype op a mixed-dtype op) is one more
// place of the forward finding, not a finding of its own.
void foldBackwardCopies(std::vector<Diagnostic> &diags) {
  using LineKey = std::tuple<std::string, std::string, std::string, unsigned>;
  auto lineOf = [](const Diagnostic &d) {
    const Location &l = d.location;
    return LineKey{d.code, l.graphPath.empty() ? "main" : l.graphPath, l.source.file, l.source.line};
  };
  auto groups = [](const Diagnostic &d) {
    const Rule *rule = findRule(d.code);
    return d.location.source.valid() && !(rule && rule->info().grouping == GroupScope::None);
  };
  std::map<LineKey, size_t> forward;  // -> index in `kept`
  for (size_t i = 0; i < diags.size(); ++i)
    if (!diags[i].location.backward && groups(diags[i]))
      forward.emplace(lineOf(diags[i]), i);
  if (forward.empty())
    return;
  std::vector<bool> folded(diags.size(), false);
  for (size_t i = 0; i < diags.size(); ++i) {
    Diagnostic &d = diags[i];
    if (!d.location.backward || !groups(d))
      continue;
    auto it = forward.find(lineOf(d));
    if (it == forward.end() || diags[it->second].severity < d.severity)
      continue;  // no forward finding there, or a weaker one: keep it
    Diagnostic &into = diags[it->second];
    into.alsoAt.push_back(std::move(d.location));
    for (Location &l : d.alsoAt)
      into.alsoAt.push_back(std::move(l));
    folded[i] = true;
  }
  std::vector<Diagnostic> kept;
  kept.reserve(diags.size());
  for (size_t i = 0; i < diags.size(); ++i)
    if (!folded[i])
      kept.push_back(std::move(diags[i]));
  diags = std::move(kept);
}

void foldLibraryFindings(std::vector<Diagnostic> &diags) {
  using LibraryKey = std::tuple<std::string, std::string, std::string>;  // code, library, graph
  std::map<LibraryKey, size_t> first;  // -> index in `kept`
  std::map<size_t, std::string> libraries;
  std::vector<Diagnostic> kept;
  kept.reserve(diags.size());
  for (Diagnostic &d : diags) {
    // Errors stay one by one: each is a launch that fails, wherever its line is.
    std::string lib = d.severity == Severity::Error ? "" : libraryOf(d.location.source);
    if (lib.empty()) {
      kept.push_back(std::move(d));
      continue;
    }
    LibraryKey key{d.code, lib, d.location.graphPath};
    auto [it, fresh] = first.emplace(key, kept.size());
    if (fresh) {
      libraries[kept.size()] = lib;
      kept.push_back(std::move(d));
      continue;
    }
    Diagnostic &into = kept[it->second];
    into.severity = std::max(into.severity, d.severity);
    into.alsoAt.push_back(std::move(d.location));
    for (Location &l : d.alsoAt)
      into.alsoAt.push_back(std::move(l));
  }
  for (const auto &[index, lib] : libraries) {
    Diagnostic &d = kept[index];
    unsigned n = d.count();
    std::set<std::string> files;
    files.insert(d.location.source.file);
    for (const Location &l : d.alsoAt)
      if (l.source.valid())
        files.insert(l.source.file);
    std::string first = d.message;
    d.message = fmt::format("{} {} finding{} in library code ({}, {} file{}), not in your source "
                            "(--show-library-findings lists them); first: {}",
                            n, d.name, n == 1 ? "" : "s", lib, files.size(), files.size() == 1 ? "" : "s", first);
    d.notes.clear();
    d.note(fmt::format("to drop them, a per-file-ignores glob such as \"*/{}/*\": [{}] matches their source files",
                       lib, d.code));
  }
  diags = std::move(kept);
}

void splitLongMessages(std::vector<Diagnostic> &diags, size_t limit) {
  for (Diagnostic &d : diags) {
    if (d.message.size() <= limit)
      continue;
    // The last clause break ("; " or ": ") that keeps the head within the
    // limit and says something on its own (at least 30 characters), else
    // the first break after it: a head of 150 beats a line of 300. Only a
    // break outside brackets and quotes ends a clause: "(body: 6 node(s))"
    // and "'a: b'" stay whole.
    size_t cut = std::string::npos;
    int depth = 0;
    bool quoted = false;
    for (size_t at = 0; at < d.message.size(); ++at) {
      char c = d.message[at];
      if (c == '\'' && !(at > 0 && std::isalnum(static_cast<unsigned char>(d.message[at - 1])) &&
                         at + 1 < d.message.size() && std::isalnum(static_cast<unsigned char>(d.message[at + 1]))))
        quoted = !quoted;  // an apostrophe inside a word (don't) is no quote
      else if (!quoted && (c == '(' || c == '['))
        ++depth;
      else if (!quoted && (c == ')' || c == ']') && depth > 0)
        --depth;
      if ((c != ';' && c != ':') || depth > 0 || quoted)
        continue;
      if (at < 30 || at + 1 >= d.message.size() || d.message[at + 1] != ' ')
        continue;
      if (at > limit && cut != std::string::npos)
        break;
      cut = at;
      if (at > limit)
        break;
    }
    if (cut == std::string::npos)
      continue;
    std::string rest = d.message.substr(cut + 2);
    d.message.resize(cut);
    d.notes.insert(d.notes.begin(), Note{std::move(rest), std::nullopt});
  }
}

std::vector<std::string> modulesOf(const Diagnostic &d) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const Location &l) {
    if (!l.modulePath.empty() && seen.insert(l.modulePath).second)
      out.push_back(l.modulePath);
  };
  add(d.location);
  for (const Location &l : d.alsoAt)
    add(l);
  return out;
}

std::string occurrencesLine(const Diagnostic &d) {
  unsigned n = d.count();
  if (n == 1)
    return "";
  std::vector<std::string> mods = modulesOf(d);
  if (mods.empty())
    return fmt::format("at {} nodes", n);
  std::set<std::string> templates;
  for (const std::string &m : mods)
    templates.insert(moduleTemplate(m));
  // One module per occurrence, all the same block: the layers of a stack.
  if (mods.size() == n && templates.size() == 1 && templates.begin()->find("{N}") != std::string::npos)
    return fmt::format("in {} layers: {} {} {}", n, mods.front(), n == 2 ? "and" : "...", mods.back());
  std::string list;
  constexpr size_t kShown = 4;
  for (size_t i = 0; i < mods.size() && i < kShown; ++i)
    list += (i ? ", " : "") + mods[i];
  if (mods.size() > kShown)
    list += fmt::format(" and {} more", mods.size() - kShown);
  if (mods.size() == n)
    return fmt::format("in {} modules: {}", n, list);
  return fmt::format("{} times in {} module{}: {}", n, mods.size(), mods.size() == 1 ? "" : "s", list);
}

}  // namespace graphlint
