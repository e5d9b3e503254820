// Versioned JSON report (docs/output-formats.md): one object per file with
// every Diagnostic field, plus totals. Built with llvm::json.
#include "graphlint/lint/Reporters.h"

namespace graphlint {
namespace json = llvm::json;

static json::Value locationToJson(const Location &l) {
  json::Object o{{"file", l.file}, {"graph", l.graphPath.empty() ? "main" : l.graphPath}};
  o["node"] = l.nodeIndex ? json::Value(l.nodeName) : json::Value(nullptr);
  o["op_type"] = l.nodeIndex ? json::Value(l.opType) : json::Value(nullptr);
  o["node_index"] = l.nodeIndex ? json::Value(static_cast<int64_t>(*l.nodeIndex)) : json::Value(nullptr);
  if (l.source.valid())
    o["source"] = json::Object{{"file", l.source.file},
                               {"line", static_cast<int64_t>(l.source.line)},
                               {"column", static_cast<int64_t>(l.source.col)},
                               {"function", l.source.function}};
  else
    o["source"] = nullptr;
  o["module"] = l.modulePath.empty() ? json::Value(nullptr) : json::Value(l.modulePath);
  return o;
}

json::Value diagnosticToJson(const Diagnostic &d) {
  json::Array notes;
  for (const Note &n : d.notes) {
    json::Object no{{"message", n.message}};
    no["location"] = n.location ? locationToJson(*n.location) : json::Value(nullptr);
    notes.push_back(std::move(no));
  }
  json::Object o{{"code", d.code},
                 {"name", d.name},
                 {"severity", std::string(severityName(d.severity))},
                 {"message", d.message},
                 {"location", locationToJson(d.location)},
                 {"notes", std::move(notes)}};
  o["fusion_id"] = d.fusionId ? json::Value(static_cast<int64_t>(*d.fusionId)) : json::Value(nullptr);
  o["reason"] = d.reason ? json::Value(*d.reason) : json::Value(nullptr);
  return o;
}

void renderJson(const std::vector<FileReport> &reports, llvm::raw_ostream &os) {
  json::Array files;
  for (const FileReport &r : reports) {
    json::Array diags;
    for (const Diagnostic &d : r.diagnostics)
      diags.push_back(diagnosticToJson(d));
    json::Object f{{"path", r.path}, {"status", r.fatal ? "fatal" : "linted"}, {"diagnostics", std::move(diags)}};
    f["error"] = r.fatal ? json::Value(r.fatalMessage) : json::Value(nullptr);
    f["stats"] = json::Object{{"nodes", static_cast<int64_t>(r.stats.nodes)},
                              {"graphs", static_cast<int64_t>(r.stats.graphs)},
                              {"params", static_cast<int64_t>(r.stats.params)},
                              {"param_bytes", static_cast<int64_t>(r.stats.paramBytes)}};
    files.push_back(std::move(f));
  }
  Totals t = totalsOf(reports);
  json::Object root{{"version", kJsonFormatVersion},
                    {"tool", json::Object{{"name", "graphlint"}, {"version", GRAPHLINT_VERSION}}},
                    {"files", std::move(files)},
                    {"summary", json::Object{{"files", static_cast<int64_t>(reports.size())},
                                             {"errors", t.errors},
                                             {"warnings", t.warnings},
                                             {"notes", t.notes},
                                             {"fatal", t.fatal}}}};
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
}

}  // namespace graphlint
