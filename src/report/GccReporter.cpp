// gcc-style problem-matcher lines: `path:line:col: severity: message [CODE name]`.
// path:line is the user's source when the exporter recorded it (the graph
// node follows as a note at the model file); otherwise the model file and
// the 1-based index of the node in its graph (1 for whole-file findings). A
// grouped finding's other occurrences are a note. Fatal files print
// `path:1:1: error: message [fatal]`.
#include "graphlint/engine/Grouping.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

namespace graphlint {

static void gccLine(llvm::raw_ostream &os, const Location &l, std::string_view sev, const std::string &msg,
                    const std::string &tag) {
  EditorPosition p = editorPosition(l);
  os << fmt::format("{}:{}:{}: {}: {}", p.file, p.line, p.col, sev, msg);
  if (!tag.empty())
    os << " [" << tag << "]";
  os << "\n";
}

void renderGcc(const std::vector<FileReport> &reports, llvm::raw_ostream &os) {
  for (const FileReport &r : reports) {
    if (r.fatal) {
      gccLine(os, Location::ofFile(oneLine(r.path)), "error", r.fatalMessage, "fatal");
      continue;
    }
    for (const Diagnostic &d : r.diagnostics) {
      const Location &l = d.location;
      gccLine(os, l, severityName(d.severity), d.message, d.code + " " + d.name);
      std::string also = occurrencesLine(d);
      if (!also.empty())
        gccLine(os, l, "note", also, "");
      // Under the user's line, the graph node as a note at the model file,
      // so the line stays meaningful without the model open.
      if (l.source.valid() && l.source.file != l.file && (l.nodeIndex || !l.modulePath.empty())) {
        Location graph = l;
        graph.source = SourceLoc();
        gccLine(os, graph, "note", graphLocationText(l, false), "");
      }
      for (const Note &n : d.notes)
        gccLine(os, n.location.value_or(l), "note", n.message, "");
    }
  }
}

}  // namespace graphlint
