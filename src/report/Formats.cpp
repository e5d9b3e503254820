#include "graphlint/report/Reporters.h"

namespace graphlint {

std::optional<OutputFormat> outputFormatFromName(std::string_view s) {
  if (s == "text")
    return OutputFormat::Text;
  if (s == "gcc")
    return OutputFormat::Gcc;
  if (s == "json")
    return OutputFormat::Json;
  if (s == "sarif")
    return OutputFormat::Sarif;
  if (s == "github")
    return OutputFormat::Github;
  return std::nullopt;
}

Totals totalsOf(const std::vector<FileReport> &reports) {
  Totals t;
  for (const FileReport &r : reports) {
    t.fatal += r.fatal;
    t.suppressed += r.suppressed;
    t.baselined += r.baselined;
    for (const Diagnostic &d : r.diagnostics) {
      if (d.severity == Severity::Error)
        ++t.errors;
      else if (d.severity == Severity::Warning)
        ++t.warnings;
      else
        ++t.notes;
    }
  }
  return t;
}

}  // namespace graphlint
