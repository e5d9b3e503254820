#include "graphlint/engine/SourceLines.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/engine/Paths.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <map>
#include <optional>

namespace graphlint {

namespace {

// One line as a terminal shows it: tabs to 4 spaces' stops... kept simple:
// a tab becomes one space (so caret columns still count characters), and
// control characters (an escape sequence in a comment) are dropped.
std::string printable(llvm::StringRef line) {
  std::string out;
  for (char c : line) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\t')
      out += ' ';
    else if (u >= 0x20 && u != 0x7f)
      out += c;
  }
  return out;
}

}  // namespace

void attachSourceLines(FileReport &r) {
  if (r.fatal || r.diagnostics.empty())
    return;
  // Only the model's repository, whatever the current directory is: a
  // recorded ".ssh/id_rsa" or a "notes.py -> /etc/passwd" link reads nothing.
  // A path is tried against the repository's top level, then the model's
  // folder (which lies inside it).
  std::vector<std::string> roots{repositoryRootOf(r.path), absoluteDirectoryOf(r.path)};
  std::map<std::string, std::vector<std::string>> files;  // source file -> lines (empty: unreadable)
  auto linesOf = [&](const std::string &file) -> const std::vector<std::string> & {
    auto [it, fresh] = files.emplace(file, std::vector<std::string>());
    if (!fresh)
      return it->second;
    std::optional<std::string> text;
    for (const std::string &root : roots) {
      auto t = readFileUnder(root, file);
      if (t) {
        text = std::move(*t);
        break;
      }
      llvm::consumeError(t.takeError());
    }
    if (!text)
      return it->second;
    llvm::SmallVector<llvm::StringRef, 0> lines;
    llvm::StringRef(*text).split(lines, '\n');
    for (llvm::StringRef l : lines)
      it->second.push_back(printable(l.rtrim("\r")));
    return it->second;
  };
  for (const Diagnostic &d : r.diagnostics) {
    const SourceLoc &s = d.location.source;
    if (!s.valid())
      continue;
    const std::vector<std::string> &lines = linesOf(s.file);
    if (s.line <= lines.size())
      r.sourceLines[{s.file, s.line}] = lines[s.line - 1];
  }
}

std::vector<std::string> coverageHints(const Model &m, const RulePolicy &policy) {
  std::vector<std::string> out;
  if (m.format != ModelFormat::Fx)
    return out;
  auto meta = [&](llvm::StringRef key) -> std::string {
    for (const auto &[k, v] : m.metadata)
      if (k == key)
        return v;
    return "";
  };
  if (policy.isEnabled("GL132") && meta("mode") == "forward")
    out.push_back("GL132 (inplace-on-saved-tensor) could not run: this is a forward-only export, which records no "
                  "saved tensors; re-export with `graphlint-export --train`");
  if (policy.isEnabled("GL111")) {
    bool any = false, offCpu = false;
    forEachGraph(*m.graph, [&](const Graph &g) {
      for (const auto &v : g.values())
        if (v->device.kind != Device::Kind::Unknown) {
          any = true;
          offCpu |= v->device.kind != Device::Kind::CPU;
        }
    });
    if (any && !offCpu)
      out.push_back("GL111 (cross-device) saw every tensor on one CPU device, so no copy can cross devices: "
                    "re-export with `graphlint-export --device cuda` (or let the model place itself with .cuda())");
  }
  return out;
}

}  // namespace graphlint
