#include "graphlint/base/Diagnostic.h"

#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <tuple>

namespace graphlint {

std::string_view severityName(Severity s) {
  switch (s) {
  case Severity::Note: return "note";
  case Severity::Warning: return "warning";
  case Severity::Error: return "error";
  }
  return "note";
}

std::optional<Severity> severityFromName(std::string_view s) {
  if (s == "note" || s == "info")
    return Severity::Note;
  if (s == "warning")
    return Severity::Warning;
  if (s == "error")
    return Severity::Error;
  return std::nullopt;
}

Location Location::ofFile(std::string file) {
  Location l;
  l.file = std::move(file);
  makeValidUtf8(l.file);  // a path is bytes; reports are UTF-8
  return l;
}

Location Location::ofNode(std::string file, const Node &n) {
  Location l;
  l.file = std::move(file);
  makeValidUtf8(l.file);
  l.graphPath = n.graph ? n.graph->path() : "main";
  l.nodeName = n.name;
  l.opType = n.qualifiedOp();
  l.nodeIndex = n.index;
  l.source = n.loc;
  l.modulePath = n.modulePath;
  l.backward = n.backwardPhase;
  return l;
}

EditorPosition editorPosition(const Location &l) {
  if (l.source.valid())
    return {l.source.file, l.source.line, l.source.col ? l.source.col : 1};
  return {l.file, l.nodeIndex ? *l.nodeIndex + 1 : 1, 1};
}

bool diagnosticLess(const Diagnostic &a, const Diagnostic &b) {
  auto key = [](const Diagnostic &d) {
    return std::tie(d.location.file, d.location.graphPath, d.location.nodeIndex, d.code, d.message);
  };
  return key(a) < key(b);
}

std::string moduleTemplate(std::string_view path) {
  std::string out;
  size_t at = 0;
  while (at <= path.size()) {
    size_t end = path.find_first_of("./", at);
    std::string_view part = path.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos;
    out += digits ? std::string("{N}") : std::string(part);
    if (end == std::string_view::npos)
      break;
    out += path[end];
    at = end + 1;
  }
  return out;
}

std::string fingerprintOf(const Diagnostic &d) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // field separator: "ab"+"c" differs from "a"+"bc"
    h *= 1099511628211ull;
  };
  const Location &l = d.location;
  mix(d.code);
  mix(l.graphPath.empty() ? "main" : l.graphPath);
  mix(l.source.valid() ? l.source.file : "");
  mix(moduleTemplate(l.modulePath));
  mix(l.opType);
  // Only a file's own node names are stable enough to identify a finding.
  mix(l.source.valid() || !l.modulePath.empty() ? "" : l.nodeName);
  return fmt::format("{:016x}", h);
}

Diagnostic &DiagnosticSink::push(Location loc, std::string message) {
  Diagnostic d;
  d.code = code_;
  d.name = name_;
  d.severity = sev_;
  d.message = std::move(message);
  d.location = std::move(loc);
  out_.push_back(std::move(d));
  return out_.back();
}

Diagnostic &DiagnosticSink::report(const Node &n, std::string message) {
  return push(Location::ofNode(file_, n), std::move(message));
}

Diagnostic &DiagnosticSink::reportFile(std::string message) { return push(Location::ofFile(file_), std::move(message)); }

Diagnostic &DiagnosticSink::reportIn(const Graph &g, std::string message) {
  Location l = Location::ofFile(file_);
  l.graphPath = g.path();
  return push(std::move(l), std::move(message));
}

}  // namespace graphlint
