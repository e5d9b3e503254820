// GitHub Actions workflow commands, one per diagnostic:
//   ::error file=PATH,line=N,col=C,title=CODE name::MESSAGE
// (warning / notice for the other severities). PATH:line is the user's
// source when known, else the model file and the 1-based node index, as in
// the gcc format. Escaping follows the Actions runner: %, \r, \n in the
// message; additionally ':' and ',' in property values.
#include "graphlint/engine/Grouping.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/report/Reporters.h"

#include <fmt/format.h>

namespace graphlint {

std::string githubEscapeData(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::string githubEscapeProperty(const std::string &s) {
  std::string out;
  for (char c : githubEscapeData(s)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

static void command(llvm::raw_ostream &os, std::string_view kind, const Location &l, const std::string &title,
                    const std::string &msg) {
  EditorPosition p = editorPosition(l);
  os << fmt::format("::{} file={},line={},col={},title={}::{}\n", kind, githubEscapeProperty(p.file), p.line, p.col,
                    githubEscapeProperty(title), githubEscapeData(msg));
}

void renderGithub(const std::vector<FileReport> &reports, llvm::raw_ostream &os) {
  for (const FileReport &r : reports) {
    if (r.fatal) {
      command(os, "error", Location::ofFile(oneLine(r.path)), "graphlint fatal", r.fatalMessage);
      continue;
    }
    for (const Diagnostic &d : r.diagnostics) {
      std::string_view kind = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "notice";
      std::string msg = d.message;
      std::string also = occurrencesLine(d);
      if (!also.empty())
        msg += "\n" + also;
      if (d.location.source.valid() && d.location.source.file != d.location.file)
        msg += "\ngraph: " + graphLocationText(d.location, true);
      for (const Note &n : d.notes)
        msg += "\nnote: " + n.message;
      command(os, kind, d.location, d.code + " " + d.name, msg);
    }
  }
}

}  // namespace graphlint
