// The default human format, one block per diagnostic: a header line at the
// primary location (the user's file:line:col when the export recorded it,
// else the model file), the source line with a caret when it could be read,
// the place in the graph (module path first; the model file as a note), the
// other occurrences of a grouped finding, its notes, the file's hints, and a
// closing summary line. docs/output-formats.md#text.
// With --fusion, each file's fusion table follows its diagnostics (FusionText.cpp).
#include "graphlint/ir/Display.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/engine/Grouping.h"
#include "graphlint/report/Reporters.h"

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

}  // namespace

std::string graphLocationText(const Location &l, bool withFile) {
  std::string s;
  if (!l.modulePath.empty())
    s += l.modulePath + ": ";
  if (l.nodeIndex) {
    s += fmt::format("node {} ", nodeNumber(*l.nodeIndex));
    s += l.nodeName.empty() ? fmt::format("({})", l.opType) : fmt::format("'{}' ({})", l.nodeName, l.opType);
  }
  bool sub = !l.graphPath.empty() && l.graphPath != "main";
  if (sub)
    s += (l.nodeIndex ? " in " : "in ") + l.graphPath;
  if (withFile)
    s += (l.nodeIndex || sub ? (sub ? " of " : " in ") : "in ") + l.file;
  else if (!l.nodeIndex && !sub && !l.modulePath.empty())
    s.resize(s.size() - 2);  // "blocks.3.attn: " alone
  return s;
}

std::string primaryPositionText(const Location &l) {
  if (!l.source.valid())
    return l.file;
  return l.source.col ? fmt::format("{}:{}:{}", l.source.file, l.source.line, l.source.col)
                      : fmt::format("{}:{}", l.source.file, l.source.line);
}

namespace {

// Characters before a 1-based byte column (Python's column offsets count
// UTF-8 bytes): where the caret goes.
size_t displayColumn(const std::string &line, unsigned col) {
  size_t chars = 0;
  for (size_t i = 0; i + 1 < col && i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80)
      ++chars;
  return chars;
}

// rustc/ruff-style snippet: the line under a gutter with its number, and a
// caret at the column (the whole statement underlined when the column is
// unknown).
void renderSnippet(Painter &p, const SourceLoc &s, const std::string &text, Severity sev) {
  std::string num = std::to_string(s.line);
  std::string pad(num.size() + 1, ' ');
  auto gutter = [&](const std::string &left) { p.paint(llvm::raw_ostream::BLUE, true, left + " |"); };
  gutter(pad);
  p.os << "\n";
  gutter(" " + num);
  p.os << (text.empty() ? "" : " ") << text << "\n";
  gutter(pad);
  size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) {
    p.os << "\n";
    return;
  }
  size_t at = s.col ? displayColumn(text, s.col) : first;
  size_t width = s.col ? 1 : displayColumn(text, static_cast<unsigned>(text.find_last_not_of(' ') + 2)) - first;
  p.os << " " << std::string(at, ' ');
  p.paint(severityColor(sev), true, std::string(std::max<size_t>(width, 1), '^'));
  p.os << "\n";
}

}  // namespace

void renderText(const std::vector<FileReport> &reports, llvm::raw_ostream &os, bool color, bool fusion, bool quiet,
                bool cost) {
  Painter p{os, color};
  for (const FileReport &r : reports) {
    // A file name is the user's bytes: a name holding "\r\x1b[2K" is shown escaped.
    const std::string path = oneLine(r.path);
    if (r.fatal) {
      p.paint(llvm::raw_ostream::WHITE, true, path + ": ");
      p.paint(llvm::raw_ostream::RED, true, "fatal: ");
      os << r.fatalMessage << "\n";
      continue;
    }
    for (const Diagnostic &d : r.diagnostics) {
      if (quiet)
        break;
      const Location &l = d.location;
      p.paint(llvm::raw_ostream::WHITE, true, primaryPositionText(l) + ": ");
      p.paint(severityColor(d.severity), true, fmt::format("{}[{}]", severityName(d.severity), d.code));
      os << " " << d.message << " ";
      p.paint(llvm::raw_ostream::BLUE, false, fmt::format("({})", d.name));
      os << "\n";
      if (l.source.valid())
        if (auto it = r.sourceLines.find({l.source.file, l.source.line}); it != r.sourceLines.end())
          renderSnippet(p, l.source, it->second, d.severity);
      // The graph location: the model file is a note when the user's line leads.
      bool fileNote = l.source.valid() && l.source.file != l.file;
      std::string w = graphLocationText(l, fileNote);
      if (!w.empty())
        os << "    --> " << w << "\n";
      std::string also = occurrencesLine(d);
      if (!also.empty())
        os << "     = note: " << also << "\n";
      for (const Note &n : d.notes)
        os << "     = note: " << n.message << "\n";
    }
    if (!quiet)
      for (const std::string &h : r.hints) {
        p.paint(llvm::raw_ostream::WHITE, true, path + ": ");
        p.paint(llvm::raw_ostream::CYAN, true, "hint:");
        os << " " << h << "\n";
      }
    if (fusion)
      renderFusionText(r.fusion, path, os);
    if (cost)
      renderCostText(r.cost, path, os);
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
