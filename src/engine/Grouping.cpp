#include "graphlint/engine/Grouping.h"

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
