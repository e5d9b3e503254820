#include "graphlint/lint/Diagnostic.h"

#include "graphlint/ir/MessageText.h"

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
