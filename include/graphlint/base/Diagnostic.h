// Diagnostics are plain data: rules create them, reporters render them. A
// location is graph-native (file, graph path, node, op, index) plus the user's
// source line when the exporter recorded one.
#pragma once

#include "graphlint/ir/Graph.h"

#include <optional>
#include <string>
#include <vector>

namespace graphlint {

enum class Severity : uint8_t { Note = 0, Warning = 1, Error = 2 };
std::string_view severityName(Severity s);
std::optional<Severity> severityFromName(std::string_view s);

struct Location {
  std::string file;        // the model file
  std::string graphPath;   // "main", "main/loop:body"
  std::string nodeName;    // empty for whole-file diagnostics
  std::string opType;
  std::optional<unsigned> nodeIndex;  // 0-based position in its graph
  SourceLoc source;        // user's source, when known
  std::string modulePath;
  /// A joint graph's backward node: `source` is the forward line it differentiates.
  bool backward = false;

  static Location ofFile(std::string file);
  static Location ofNode(std::string file, const Node &n);
};

/// Where an editor or CI system should point for a location: the user's
/// source file:line:col when the exporter recorded it, else the model file
/// and the 1-based node index as the line (1 for whole-file findings).
struct EditorPosition {
  std::string file;
  unsigned line = 1;
  unsigned col = 1;
};
EditorPosition editorPosition(const Location &l);

struct Note {
  std::string message;
  std::optional<Location> location;
};

struct Diagnostic {
  std::string code;        // "GL001"
  std::string name;        // "invalid-model"
  Severity severity = Severity::Warning;
  std::string message;
  Location location;
  std::vector<Note> notes;
  std::optional<unsigned> fusionId;
  std::optional<std::string> reason;
  /// The other places with the same cause, folded into this diagnostic by
  /// the grouping pass (src/engine/Grouping.cpp): one line of a layer that runs in
  /// 24 layers is one finding with 23 more locations. Empty for a lone finding.
  std::vector<Location> alsoAt;

  unsigned count() const { return 1 + static_cast<unsigned>(alsoAt.size()); }
  /// Appends a note and returns the diagnostic, so a rule writes
  /// `sink.report(n, "...").note("...").note("...")`.
  Diagnostic &note(std::string message) {
    notes.push_back({std::move(message), std::nullopt});
    return *this;
  }
  /// A note at another place (the reader of a mutated tensor, a branch).
  Diagnostic &noteAt(Location at, std::string message) {
    notes.push_back({std::move(message), std::move(at)});
    return *this;
  }
};

/// Deterministic order: file, graph path, node index, code, message.
bool diagnosticLess(const Diagnostic &a, const Diagnostic &b);

/// The finding's stable identity, for baselines and SARIF's
/// partialFingerprints: FNV-1a 64 (16 hex digits) of the rule code, the graph
/// path, the user's source file (not its line), the module path with layer
/// indices folded (`h.{N}.attn`) and the op type. Node names and indices,
/// which an exporter renumbers when any op is added, are used only when the
/// finding has neither a source file nor a module path (an ONNX file without
/// exporter metadata, whose node names are the file's own).
std::string fingerprintOf(const Diagnostic &d);

/// A module path with every run of digits that forms a whole dotted (or
/// '/'-separated) component replaced by `{N}`: `blocks.3.attn` ->
/// `blocks.{N}.attn`; `conv3x3` is left alone.
std::string moduleTemplate(std::string_view modulePath);

/// Where rules append diagnostics. Holds the file and rule identity so a rule
/// only states what it found.
class DiagnosticSink {
public:
  DiagnosticSink(std::string file, std::vector<Diagnostic> &out) : file_(std::move(file)), out_(out) {}
  void setRule(std::string code, std::string name, Severity s) { code_ = std::move(code); name_ = std::move(name); sev_ = s; }
  Diagnostic &report(const Node &n, std::string message);
  Diagnostic &reportFile(std::string message);
  Diagnostic &reportIn(const Graph &g, std::string message);
  /// At a location the rule built (a line of the user's source).
  Diagnostic &reportAt(Location loc, std::string message) { return push(std::move(loc), std::move(message)); }
  const std::string &file() const { return file_; }

private:
  Diagnostic &push(Location loc, std::string message);
  std::string file_, code_, name_;
  Severity sev_ = Severity::Warning;
  std::vector<Diagnostic> &out_;
};

}  // namespace graphlint
