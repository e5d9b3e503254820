#include "graphlint/engine/SourceLines.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/engine/Paths.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <map>

namespace graphlint {

std::string repositoryRootOf(const std::string &modelPath) {
  std::string dir = absoluteDirectoryOf(modelPath);
  for (llvm::StringRef probe = dir; !probe.empty(); probe = llvm::sys::path::parent_path(probe)) {
    llvm::SmallString<256> git(probe);
    llvm::sys::path::append(git, ".git");
    if (llvm::sys::fs::exists(git))
      return probe.str();
    if (probe == llvm::sys::path::root_path(probe))
      break;
  }
  return dir;
}

namespace {

bool safeRelative(llvm::StringRef p) {
  if (p.empty() || llvm::sys::path::is_absolute(p))
    return false;
  for (auto it = llvm::sys::path::begin(p), e = llvm::sys::path::end(p); it != e; ++it)
    if (*it == "..")
      return false;
  return true;
}

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
  std::vector<std::string> roots{repositoryRootOf(r.path), absoluteDirectoryOf(r.path)};
  llvm::SmallString<256> cwd;
  if (!llvm::sys::fs::current_path(cwd))
    roots.push_back(std::string(cwd));
  std::map<std::string, std::vector<std::string>> files;  // source file -> lines (empty: unreadable)
  auto linesOf = [&](const std::string &file) -> const std::vector<std::string> & {
    auto [it, fresh] = files.emplace(file, std::vector<std::string>());
    if (!fresh || !safeRelative(file))
      return it->second;
    for (const std::string &root : roots) {
      llvm::SmallString<256> path(root);
      llvm::sys::path::append(path, file);
      if (!llvm::sys::fs::is_regular_file(path))
        continue;
      auto text = readInputFile(std::string(path), InputKind::SourceFile);
      if (!text) {
        llvm::consumeError(text.takeError());
        break;
      }
      llvm::SmallVector<llvm::StringRef, 0> lines;
      llvm::StringRef(*text).split(lines, '\n');
      for (llvm::StringRef l : lines)
        it->second.push_back(printable(l.rtrim("\r")));
      break;
    }
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
