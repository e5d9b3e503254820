// SARIF 2.1.0 (docs/output-formats.md#sarif) for GitHub code scanning and
// other SARIF consumers: one run, the full rule catalogue as
// tool.driver.rules, one result per diagnostic, fatal files as tool execution
// notifications. Built with llvm::json; a pure function of the reports.
#include "graphlint/ir/Display.h"
#include "graphlint/engine/Paths.h"
#include "graphlint/engine/Grouping.h"
#include "graphlint/report/Reporters.h"
#include "graphlint/rules/Rule.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <fmt/format.h>

#include <cctype>
#include <map>

namespace graphlint {
namespace json = llvm::json;

namespace {

std::string levelOf(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  }
  return "warning";
}

// Percent-encodes what may not appear in a URI path (RFC 3986 pchar plus '/').
std::string encodePath(const std::string &p) {
  std::string out;
  for (unsigned char c : p) {
    if (std::isalnum(c) || std::string_view("/-._~!$&'()*+,;=:@").find(static_cast<char>(c)) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

}  // namespace

std::string sarifUri(const std::string &path) {
  std::string p = path;
  llvm::SmallString<256> cwd;
  if (llvm::sys::path::is_absolute(p) && !llvm::sys::fs::current_path(cwd))
    p = pathUnder(p, cwd).value_or(p);
  llvm::SmallString<256> native(p);
  llvm::sys::path::native(native, llvm::sys::path::Style::posix);
  p = std::string(native);
  while (p.rfind("./", 0) == 0)
    p = p.substr(2);
  if (llvm::sys::path::is_absolute(p))
    return "file://" + encodePath(p);
  return encodePath(p);
}

std::string firstParagraph(std::string_view doc) {
  std::string para;
  size_t at = 0;
  while (at < doc.size()) {
    size_t nl = doc.find('\n', at);
    std::string_view line = doc.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? doc.size() : nl + 1;
    bool blank = line.find_first_not_of(" \t\r") == std::string_view::npos;
    if (blank) {
      if (!para.empty())
        break;
      continue;
    }
    if (para.empty() && (line[0] == '#' || line.rfind("Default severity:", 0) == 0))
      continue;
    if (!para.empty())
      para += ' ';
    para += std::string(line);
  }
  return para;
}

static json::Value artifact(const std::string &path, std::optional<unsigned> line) {
  json::Object phys{{"artifactLocation", json::Object{{"uri", sarifUri(path)}}}};
  if (line)
    phys["region"] = json::Object{{"startLine", static_cast<int64_t>(*line)}};
  return json::Object{{"physicalLocation", std::move(phys)}};
}

void renderSarif(const std::vector<FileReport> &reports, llvm::raw_ostream &os) {
  const std::vector<const Rule *> &rules = allRules();
  json::Array ruleArr;
  std::map<std::string, int64_t, std::less<>> ruleIndex;
  for (const Rule *r : rules) {
    const RuleInfo &i = r->info();
    ruleIndex[std::string(i.code)] = static_cast<int64_t>(ruleArr.size());
    std::string doc(ruleDoc(i.code));
    std::string full = firstParagraph(doc);
    json::Object o{{"id", std::string(i.code)},
                   {"name", std::string(i.name)},
                   {"shortDescription", json::Object{{"text", std::string(i.summary)}}},
                   {"fullDescription", json::Object{{"text", full.empty() ? std::string(i.summary) : full}}},
                   {"defaultConfiguration", json::Object{{"level", levelOf(i.severity)}}}};
    if (!doc.empty())
      o["help"] = json::Object{{"text", doc}, {"markdown", doc}};
    ruleArr.push_back(std::move(o));
  }

  json::Array results, notifications;
  bool ok = true;
  for (const FileReport &r : reports) {
    if (r.fatal) {
      ok = false;
      json::Array locs;
      locs.push_back(artifact(r.path, std::nullopt));
      notifications.push_back(json::Object{{"level", "error"},
                                           {"message", json::Object{{"text", r.fatalMessage}}},
                                           {"locations", std::move(locs)}});
      continue;
    }
    for (const Diagnostic &d : r.diagnostics) {
      const Location &l = d.location;
      json::Object res{{"ruleId", d.code}, {"level", levelOf(d.severity)}};
      if (auto it = ruleIndex.find(d.code); it != ruleIndex.end())
        res["ruleIndex"] = it->second;
      std::string text = d.message;
      std::string also = occurrencesLine(d);
      if (!also.empty())
        text += "\n" + also;
      for (const Note &n : d.notes)
        text += "\nnote: " + n.message;
      res["message"] = json::Object{{"text", text}};
      unsigned modelLine = l.nodeIndex ? *l.nodeIndex + 1 : 1;
      json::Array locs;
      if (l.source.valid()) {
        json::Object phys{{"artifactLocation", json::Object{{"uri", sarifUri(l.source.file)}}}};
        json::Object region{{"startLine", static_cast<int64_t>(l.source.line)}};
        if (l.source.col)
          region["startColumn"] = static_cast<int64_t>(l.source.col);
        phys["region"] = std::move(region);
        locs.push_back(json::Object{{"physicalLocation", std::move(phys)}});
        // The model as a related location, unless the finding is about a
        // line of that same file (GL005 on a config entry).
        if (l.source.file != l.file) {
          json::Array related;
          json::Value model = artifact(l.file, modelLine);
          (*model.getAsObject())["id"] = 0;
          (*model.getAsObject())["message"] = json::Object{{"text", "graph: " + graphLocationText(l, true)}};
          related.push_back(std::move(model));
          res["relatedLocations"] = std::move(related);
        }
      } else {
        locs.push_back(artifact(l.file, modelLine));
      }
      if (l.nodeIndex) {
        std::string graph = l.graphPath.empty() ? "main" : l.graphPath;
        std::string node = l.nodeName.empty() ? nodeNumber(*l.nodeIndex) : l.nodeName;
        json::Array logical;
        logical.push_back(json::Object{{"name", node}, {"fullyQualifiedName", graph + "/" + node}, {"kind", "function"}});
        (*locs.back().getAsObject())["logicalLocations"] = std::move(logical);
      }
      res["locations"] = std::move(locs);
      res["partialFingerprints"] = json::Object{{"graphlint/v2", fingerprintOf(d)}};
      json::Object props;
      if (d.fusionId)
        props["fusion_id"] = static_cast<int64_t>(*d.fusionId);
      if (d.reason)
        props["reason"] = *d.reason;
      if (!props.empty())
        res["properties"] = std::move(props);
      results.push_back(std::move(res));
    }
  }

  json::Object invocation{{"executionSuccessful", ok}};
  if (!notifications.empty())
    invocation["toolExecutionNotifications"] = std::move(notifications);
  json::Array invocations;
  invocations.push_back(std::move(invocation));
  json::Object driver{{"name", "graphlint"}, {"version", GRAPHLINT_VERSION}, {"rules", std::move(ruleArr)}};
  json::Array runs;
  runs.push_back(json::Object{{"tool", json::Object{{"driver", std::move(driver)}}},
                              {"invocations", std::move(invocations)},
                              {"columnKind", "unicodeCodePoints"},
                              {"results", std::move(results)}});
  json::Object root{{"$schema", "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"},
                    {"version", "2.1.0"},
                    {"runs", std::move(runs)}};
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
}

}  // namespace graphlint
