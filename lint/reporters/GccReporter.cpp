// gcc-style problem-matcher lines: `path:line:col: severity: message [CODE name]`.
// path:line is the user's source when the exporter recorded it; otherwise the
// model file and the 1-based index of the node in its graph (1 for whole-file
// findings). Fatal files print `path:1:1: error: message [fatal]`.
#include "graphlint/lint/Reporters.h"

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
      gccLine(os, Location::ofFile(r.path), "error", r.fatalMessage, "fatal");
      continue;
    }
    for (const Diagnostic &d : r.diagnostics) {
      std::string msg = d.message;
      if (d.location.source.valid() || d.location.nodeIndex) {
        // Name the node so the line stays meaningful without the model open.
        std::string node = d.location.nodeName.empty() ? d.location.opType : d.location.nodeName;
        if (!node.empty() && d.location.source.valid())
          msg += fmt::format(" (node '{}' in {})", node, d.location.file);
      }
      gccLine(os, d.location, severityName(d.severity), msg, d.code + " " + d.name);
      for (const Note &n : d.notes)
        gccLine(os, n.location.value_or(d.location), "note", n.message, "");
    }
  }
}

}  // namespace graphlint
