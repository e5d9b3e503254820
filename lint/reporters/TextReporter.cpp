// The default human format: one header line per diagnostic, its place in the
// graph (and the user's source line), its notes, and a closing summary line.
// With --fusion, each file's fusion table follows its diagnostics (FusionText.cpp).
#include "graphlint/lint/Reporters.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace graphlint {
namespace {

std::string plural(unsigned n, const char *word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

struct Painter {
  llvm::raw_ostream &os;
  bool color;
  void paint(llvm::raw_ostream::Colors c, bool bold, llvm::StringRef s) {
    if (color)
      os.changeColor(c, bold);
    os << s;
    if (color)
      os.resetColor();
  }
};

llvm::raw_ostream::Colors severityColor(Severity s) {
  switch (s) {
  case Severity::Error: return llvm::raw_ostream::RED;
  case Severity::Warning: return llvm::raw_ostream::MAGENTA;
  case Severity::Note: return llvm::raw_ostream::CYAN;
  }
  return llvm::raw_ostream::WHITE;
}

std::string where(const Location &l) {
  if (!l.nodeIndex)
    return l.graphPath.empty() || l.graphPath == "main" ? "" : "in " + l.graphPath;
  std::string s = fmt::format("node #{} ", *l.nodeIndex + 1);
  s += l.nodeName.empty() ? fmt::format("({})", l.opType) : fmt::format("'{}' ({})", l.nodeName, l.opType);
  if (!l.graphPath.empty() && l.graphPath != "main")
    s += " in " + l.graphPath;
  return s;
}

}  // namespace

void renderText(const std::vector<FileReport> &reports, llvm::raw_ostream &os, bool color, bool fusion, bool quiet,
                bool cost) {
  Painter p{os, color};
  for (const FileReport &r : reports) {
    if (r.fatal) {
      p.paint(llvm::raw_ostream::WHITE, true, r.path + ": ");
      p.paint(llvm::raw_ostream::RED, true, "fatal: ");
      os << r.fatalMessage << "\n";
      continue;
    }
    for (const Diagnostic &d : r.diagnostics) {
      if (quiet)
        break;
      p.paint(llvm::raw_ostream::WHITE, true, d.location.file + ": ");
      p.paint(severityColor(d.severity), true, fmt::format("{}[{}]", severityName(d.severity), d.code));
      os << " " << d.message << " ";
      p.paint(llvm::raw_ostream::BLUE, false, fmt::format("({})", d.name));
      os << "\n";
      std::string w = where(d.location);
      if (!w.empty())
        os << "    --> " << w << "\n";
      if (d.location.source.valid()) {
        const SourceLoc &s = d.location.source;
        os << "    --> " << s.file << ":" << s.line;
        if (s.col)
          os << ":" << s.col;
        if (!s.function.empty())
          os << " in " << s.function;
        os << "\n";
      }
      for (const Note &n : d.notes)
        os << "     = note: " << n.message << "\n";
    }
    if (fusion)
      renderFusionText(r.fusion, r.path, os);
    if (cost)
      renderCostText(r.cost, r.path, os);
  }
  Totals t = totalsOf(reports);
  std::string summary = fmt::format("{} checked: {}, {}, {}", plural(static_cast<unsigned>(reports.size()), "file"),
                                    plural(t.errors, "error"), plural(t.warnings, "warning"), plural(t.notes, "note"));
  if (t.fatal)
    summary += fmt::format(", {} could not be linted", plural(t.fatal, "file"));
  if (t.suppressed)
    summary += fmt::format(" ({} suppressed)", t.suppressed);
  if (t.baselined)
    summary += fmt::format(" ({} in the baseline)", t.baselined);
  p.paint(t.errors || t.fatal ? llvm::raw_ostream::RED : t.warnings ? llvm::raw_ostream::MAGENTA : llvm::raw_ostream::GREEN,
          true, summary);
  os << "\n";
}

void renderStatistics(const std::vector<FileReport> &reports, llvm::raw_ostream &os) {
  std::map<std::pair<std::string, std::string>, unsigned> counts;
  for (const FileReport &r : reports)
    for (const Diagnostic &d : r.diagnostics)
      ++counts[{d.code, d.name}];
  std::vector<std::pair<std::pair<std::string, std::string>, unsigned>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  for (const auto &[rule, n] : rows)
    os << fmt::format("{:>6}  {} {}\n", n, rule.first, rule.second);
}

}  // namespace graphlint
