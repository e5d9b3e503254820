#include "graphlint/engine/Baseline.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/JsonInput.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/engine/OutputFiles.h"
#include "graphlint/engine/Paths.h"

#include <fmt/format.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace graphlint {

namespace {

llvm::Error fail(const std::string &path, const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.c_str(), why.c_str());
}

// The model path as the baseline stores it: relative to the baseline file's
// directory when under it, else absolute; '/'-separated.
std::string keyOf(const std::string &modelPath, const std::string &baseDir) {
  return storedPathKey(modelPath, baseDir);
}

BaselineEntry entryOf(const Diagnostic &d, const std::string &file) {
  return {file,
          d.code,
          d.name,
          d.location.graphPath.empty() ? "main" : d.location.graphPath,
          d.location.nodeName,
          d.location.opType,
          fingerprintOf(d),
          d.message,
          d.location.source.valid() ? d.location.source.file : "",
          moduleTemplate(d.location.modulePath)};
}

using Key = std::tuple<std::string, std::string, std::string>;  // file, code, fingerprint
Key keyOf(const BaselineEntry &e) { return {e.file, e.code, e.fingerprint}; }

}  // namespace

llvm::Expected<Baseline> Baseline::load(const std::string &path) {
  auto text = readInputFile(path, InputKind::Baseline);
  if (!text)
    return text.takeError();
  return parse(*text, path);
}

llvm::Expected<Baseline> Baseline::parse(llvm::StringRef text, const std::string &path) {
  // Nesting and the number of values are checked before anything is built.
  JsonRefusal why;
  auto json = parseJsonInput(text, path, {}, &why);
  if (!json && why == JsonRefusal::Limit)
    return json.takeError();
  if (!json)
    return fail(path, "not a graphlint baseline (invalid JSON: " + oneLine(llvm::toString(json.takeError())) + ")");
  const llvm::json::Object *root = json->getAsObject();
  auto version = root ? root->getInteger("graphlint_baseline") : llvm::None;
  if (!version)
    return fail(path, "not a graphlint baseline (no \"graphlint_baseline\" version)");
  if (*version == 1)
    return fail(path, "baseline format version 1 keyed findings by FX node names, which change on every re-export; "
                      "write a new baseline with --write-baseline (version 2 keys them by source file and module)");
  if (*version != kBaselineVersion)
    return fail(path, fmt::format("baseline format version {} is not supported (this graphlint reads {})", *version,
                                  kBaselineVersion));
  const llvm::json::Array *findings = root->getArray("findings");
  if (!findings)
    return fail(path, "baseline has no \"findings\" list");
  Baseline b;
  b.path_ = path;
  b.baseDir_ = absoluteDirectoryOf(path);
  for (size_t i = 0; i < findings->size(); ++i) {
    const llvm::json::Object *o = (*findings)[i].getAsObject();
    auto field = [&](const char *k) -> std::optional<std::string> {
      if (!o)
        return std::nullopt;
      auto s = o->getString(k);
      return s ? std::optional<std::string>(s->str()) : std::nullopt;
    };
    auto file = field("file"), code = field("code"), fp = field("fingerprint");
    if (!file || !code || !fp)
      return fail(path, fmt::format("finding {} lacks \"file\", \"code\" or \"fingerprint\"", i + 1));
    b.entries_.push_back({*file, *code, field("name").value_or(""), field("graph").value_or("main"),
                          field("node").value_or(""), field("op").value_or(""), *fp, field("message").value_or(""),
                          field("source").value_or(""), field("module").value_or("")});
  }
  return b;
}

llvm::Error Baseline::write(const std::string &path, const std::vector<FileReport> &reports) {
  std::string baseDir = absoluteDirectoryOf(path);
  std::vector<BaselineEntry> entries;
  for (const FileReport &r : reports)
    for (const Diagnostic &d : r.diagnostics)
      entries.push_back(entryOf(d, keyOf(r.path, baseDir)));
  std::stable_sort(entries.begin(), entries.end(), [](const BaselineEntry &a, const BaselineEntry &b) {
    return std::tie(a.file, a.code, a.graph, a.source, a.module, a.node, a.fingerprint) <
           std::tie(b.file, b.code, b.graph, b.source, b.module, b.node, b.fingerprint);
  });
  llvm::json::Array arr;
  for (const BaselineEntry &e : entries)
    arr.push_back(llvm::json::Object{{"file", e.file},     {"code", e.code},     {"name", e.name},
                                     {"graph", e.graph},   {"source", e.source}, {"module", e.module},
                                     {"op", e.op},         {"node", e.node},     {"fingerprint", e.fingerprint},
                                     {"message", e.message}});
  llvm::json::Object root{{"graphlint_baseline", kBaselineVersion}, {"findings", std::move(arr)}};
  llvm::json::Value doc(std::move(root));
  if (llvm::Error e = writeOutputAtomically(path, [&](llvm::raw_ostream &os) { os << llvm::formatv("{0:2}", doc) << "\n"; }))
    return e;  // "cannot write 'PATH': why"
  return llvm::Error::success();
}

std::vector<BaselineEntry> Baseline::apply(std::vector<FileReport> &reports,
                                          const std::function<bool(size_t, const std::string &)> &checked) const {
  // How many findings each key may still absorb.
  std::map<Key, unsigned> budget;
  for (const BaselineEntry &e : entries_)
    ++budget[keyOf(e)];
  std::map<std::string, size_t> linted;  // baseline file key -> report index
  for (size_t i = 0; i < reports.size(); ++i) {
    FileReport &r = reports[i];
    std::string file = keyOf(r.path, baseDir_);
    linted.emplace(file, i);
    std::vector<Diagnostic> kept;
    for (Diagnostic &d : r.diagnostics) {
      auto it = budget.find(keyOf(entryOf(d, file)));
      if (it != budget.end() && it->second > 0) {
        --it->second;
        ++r.baselined;
      } else {
        kept.push_back(std::move(d));
      }
    }
    r.diagnostics = std::move(kept);
  }
  // Entries left over for files that were linted are stale; one report per
  // unmatched occurrence.
  std::vector<BaselineEntry> stale;
  std::map<Key, unsigned> left = budget;
  for (const BaselineEntry &e : entries_) {
    auto it = left.find(keyOf(e));
    auto report = linted.find(e.file);
    if (report != linted.end() && !reports[report->second].fatal && checked(report->second, e.code) &&
        it->second > 0) {
      --it->second;
      stale.push_back(e);
    }
  }
  return stale;
}

}  // namespace graphlint
