#include "graphlint/engine/ExpectedValues.h"

#include "graphlint/base/SetupKeys.h"
#include "graphlint/engine/ModelDiff.h"
#include "graphlint/engine/Paths.h"
#include "graphlint/engine/ReportMetrics.h"
#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/JsonInput.h"
#include "graphlint/ir/MessageText.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/JSON.h>

#include <fmt/format.h>

#include <cmath>

namespace graphlint {

namespace {

llvm::Error fail(const std::string &path, const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", path.c_str(), why.c_str());
}

}  // namespace

ExpectedValues::ExpectedValues(std::string path) : path_(std::move(path)) {
  if (!path_.empty())
    baseDir_ = absoluteDirectoryOf(path_);
}

llvm::Expected<ExpectedValues> ExpectedValues::load(const std::string &path) {
  auto text = readInputFile(path, InputKind::Baseline);
  if (!text)
    return text.takeError();
  return parse(*text, path);
}

llvm::Expected<ExpectedValues> ExpectedValues::parse(llvm::StringRef text, const std::string &path) {
  JsonRefusal why;
  auto json = parseJsonInput(text, path, {}, &why);
  if (!json && why == JsonRefusal::Limit)
    return json.takeError();
  if (!json)
    return fail(path, "not a graphlint expected-values file (invalid JSON: " +
                          oneLine(llvm::toString(json.takeError())) + ")");
  const llvm::json::Object *root = json->getAsObject();
  auto version = root ? root->getInteger("graphlint_expected") : llvm::None;
  if (!version)
    return fail(path, "not a graphlint expected-values file (no \"graphlint_expected\" version)");
  if (*version != kExpectedValuesVersion)
    return fail(path, fmt::format("expected-values format version {} is not supported (this graphlint reads {})",
                                  *version, kExpectedValuesVersion));
  const llvm::json::Array *models = root->getArray("models");
  if (!models)
    return fail(path, "has no \"models\" list");
  ExpectedValues ev(path);
  for (size_t i = 0; i < models->size(); ++i) {
    const llvm::json::Object *o = (*models)[i].getAsObject();
    auto model = o ? o->getString("model") : llvm::None;
    const llvm::json::Object *metrics = o ? o->getObject("metrics") : nullptr;
    if (!model || !metrics)
      return fail(path, fmt::format("models[{}] lacks \"model\" or \"metrics\"", i));
    ExpectedEntry e;
    e.model = model->str();
    e.setup = o->getString("setup").getValueOr("").str();
    for (const auto &[name, v] : *metrics) {
      const llvm::json::Object *m = v.getAsObject();
      auto value = m ? m->getNumber("value") : llvm::None;
      if (!value)
        return fail(path, fmt::format("models[{}].metrics.{}: expected {{\"value\": N, \"noise\": F}}", i,
                                      escapedForMessage(name.str())));
      double noise = m->getNumber("noise").getValueOr(defaultNoise(name.str()));
      if (!(noise >= 0) || !std::isfinite(noise))
        return fail(path, fmt::format("models[{}].metrics.{}.noise: expected a non-negative fraction", i,
                                      escapedForMessage(name.str())));
      e.metrics[name.str()] = {*value, noise};
    }
    ev.entries_.push_back(std::move(e));
  }
  return ev;
}

std::string ExpectedValues::render() const {
  llvm::json::Array models;
  for (const ExpectedEntry &e : entries_) {
    llvm::json::Object metrics;
    for (const auto &[name, m] : e.metrics)
      metrics[name] = llvm::json::Object{{"value", m.value}, {"noise", m.noise}};
    models.push_back(llvm::json::Object{{"model", e.model}, {"setup", e.setup}, {"metrics", std::move(metrics)}});
  }
  llvm::json::Value doc(llvm::json::Object{{"graphlint_expected", kExpectedValuesVersion}, {"models", std::move(models)}});
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", doc) << "\n";
  return os.str();
}

std::string ExpectedValues::key(const std::string &model) const {
  return storedPathKey(model, baseDir_);
}

const ExpectedEntry *ExpectedValues::find(const std::string &model, const std::string &setup) const {
  std::string k = key(model);
  for (const ExpectedEntry &e : entries_)
    if (e.model == k && e.setup == setup)
      return &e;
  return nullptr;
}

std::string setupKeyText(const Setup &s) {
  static const Setup kDefaults;
  std::string out;
  for (const SetupKey &k : setupKeys()) {
    if (!k.dump)
      continue;
    std::string v = k.dump(s);
    if (v == k.dump(kDefaults))
      continue;
    out += (out.empty() ? "" : "; ") + std::string(k.key) + ": " + llvm::StringRef(v).trim().str();
  }
  return out;
}

double defaultNoise(const std::string &metric) {
  llvm::StringRef m(metric);
  if (m == "mfu" || m == "kernels" || m.endswith("_s"))
    return 0.02;
  return 0.01;
}

ExpectedCheck checkExpected(const ExpectedValues &expected, const std::vector<FileReport> &reports,
                            const std::vector<std::string> &setups) {
  ExpectedCheck c{{}, expected};
  for (size_t i = 0; i < reports.size(); ++i) {
    const FileReport &r = reports[i];
    if (r.fatal)
      continue;
    const std::string &setup = setups[i];
    std::string where = fmt::format("{}{}", oneLine(r.path), setup.empty() ? "" : " [" + setup + "]");
    std::vector<MetricValue> actual = reportMetrics(r);
    const ExpectedEntry *e = expected.find(r.path, setup);
    if (!e)
      c.failures.push_back(fmt::format("{}: no expected values for this model and setup", where));
    else
      for (const auto &[name, want] : e->metrics) {
        const std::string &metric = name;  // a structured binding cannot be captured in C++17 (clang)
        auto it = std::find_if(actual.begin(), actual.end(), [&](const MetricValue &v) { return v.name == metric; });
        if (it == actual.end()) {
          c.failures.push_back(fmt::format("{}: {} is no longer predicted", where, name));
          continue;
        }
        double dev = want.value != 0 ? (it->value - want.value) / std::fabs(want.value)
                                     : (it->value == 0 ? 0.0 : (it->value > 0 ? 1.0 : -1.0));
        if (std::fabs(dev) <= want.noise)
          continue;
        bool worse = (it->sense == MetricSense::HigherIsWorse) == (dev > 0);
        MetricDelta shape{name, want.value, it->value, it->sense, it->bytes};
        c.failures.push_back(fmt::format(
            "{}: {} is {}, expected {} +-{:.1f}%: {} ({:+.1f}%)", where, name, formatMetricValue(shape, it->value),
            formatMetricValue(shape, want.value), 100 * want.noise,
            worse ? "a regression" : "better than expected (an unexplained win: update the file)", 100 * dev));
      }
    // The proposal: this run's values, the old margins.
    ExpectedEntry proposed;
    proposed.model = expected.key(r.path);
    proposed.setup = setup;
    for (const MetricValue &v : actual) {
      double noise = defaultNoise(v.name);
      if (e)
        if (auto old = e->metrics.find(v.name); old != e->metrics.end())
          noise = old->second.noise;
      proposed.metrics[v.name] = {v.value, noise};
    }
    std::vector<ExpectedEntry> &entries = c.proposed.entries();
    auto at = std::find_if(entries.begin(), entries.end(), [&](const ExpectedEntry &x) {
      return x.model == proposed.model && x.setup == proposed.setup;
    });
    if (at != entries.end())
      *at = std::move(proposed);
    else
      entries.push_back(std::move(proposed));
  }
  return c;
}

}  // namespace graphlint
