#include "SetupFlags.h"

#include "graphlint/rules/Rule.h"
#include "graphlint/base/SetupKeys.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallVector.h>

#include "graphlint/ir/MessageText.h"

#include <algorithm>
#include <memory>
#include <tuple>
#include <variant>

namespace graphlint::cli {

namespace {

OptionEntry entry(const char *section, std::string valueHelp, std::string help, bool file = false) {
  OptionEntry e{nullptr, section, "", std::move(valueHelp), std::move(help), file, true};
  return e;
}

// --select/--extend-select/--ignore: comma-separated codes, names, prefixes.
std::optional<std::string> parseRuleList(const std::string &flag, const std::string &spec,
                                         std::vector<std::string> &out) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  llvm::StringRef(spec).split(parts, ',', -1, /*KeepEmpty=*/false);
  if (parts.empty())
    return flag + " needs a rule list, e.g. GL101,GL1,launch-bound";
  for (llvm::StringRef p : parts) {
    std::vector<std::string> codes = resolveRuleSelector(p.trim());
    if (codes.empty())
      return flag + ": unknown rule '" + p.trim().str() + "' (see 'graphlint rules')";
    out.insert(out.end(), codes.begin(), codes.end());
  }
  return std::nullopt;
}

}  // namespace

SetupFlags::SetupFlags(Command &c, const std::vector<std::string> &owned)
    : configOpt_(c.add<cl::opt<std::string>>(
          entry(kConfigSection, "FILE",
                "use FILE instead of the nearest .graphlint.yaml found\n"
                "by walking up from each model file; the command line\n"
                "overrides the file, the file the defaults",
                true),
          "config")),
      launchOpt_(c.add<cl::opt<std::string>>(
          entry(kConfigSection, "FILE",
                "read the training setup from a launch config: a\n"
                "DeepSpeed ds_config.json, an accelerate config\n"
                "(.yaml/.json) or a torchtitan job config (.toml);\n"
                "between .graphlint.yaml and the command line, which\n"
                "wins; keys graphlint does not model or know are a\n"
                "warning each (docs/configuration.md, Launch configs)",
                true),
          "launch-config")),
      noConfig_(c.add<cl::opt<bool>>(
          entry(kConfigSection, "",
                "use no config file: no .graphlint.yaml is looked for\n"
                "(the command line and the defaults only)"),
          "no-config")),
      isolated_(c.add<cl::opt<bool>>(
          entry(kConfigSection, "",
                "--no-config, and ignore GRAPHLINT_HARDWARE_FILE: the\n"
                "run depends on the command line alone\n"
                "(docs/configuration.md)"),
          "isolated")) {
  auto isOwned = [&](const char *key) { return llvm::is_contained(owned, std::string(key)); };
  if (!isOwned("world-size")) {
    nnodes_ = &c.add<cl::opt<std::string>>(
        entry(kSetupSection, "N",
              "torchrun's --nnodes: with --nproc-per-node G, the world\n"
              "size is N x G"),
        "nnodes");
    nprocPerNode_ = &c.add<cl::opt<std::string>>(
        entry(kSetupSection, "G",
              "torchrun's --nproc-per-node: --gpus-per-node G, and the\n"
              "world size N x G (N from --nnodes, default 1)"),
        "nproc-per-node");
  }

  for (const SetupKey &k : setupKeys()) {
    if (isOwned(k.key))
      continue;
    const char *section = k.lintSection && llvm::StringRef(c.name()) == "lint" ? kLintSection : kSetupSection;
    cl::Option *o = nullptr;
    if (k.isSwitch()) {
      o = &c.add<cl::opt<bool>>(entry(section, "", k.help), llvm::StringRef(k.flagName()));
    } else if (k.isMapping()) {
      auto &l = c.add<cl::list<std::string>>(entry(section, k.valueHelp, k.help), llvm::StringRef(k.flagName()));
      if (k.shortFlag)
        c.alias(l, k.shortFlag, /*prefix=*/true);
      o = std::addressof(l);
    } else {
      o = &c.add<cl::opt<std::string>>(entry(section, k.valueHelp, k.help), llvm::StringRef(k.flagName()));
    }
    flags_.push_back({&k, o, false});
    if (k.presetFlag) {
      std::string help = std::string("same as --") + k.key + " " + k.presetValue;
      flags_.push_back({&k, &c.add<cl::opt<bool>>(entry(section, "", help), llvm::StringRef(k.presetFlag)), true});
    }
  }
}

std::optional<std::string> SetupFlags::toLayer(ConfigLayer &layer) const {
  // (position on the command line, key, text), so that the later flag wins.
  std::vector<std::tuple<unsigned, const SetupKey *, std::string>> given;
  for (const Flag &f : flags_) {
    if (!f.option->getNumOccurrences())
      continue;
    if (f.preset) {
      given.emplace_back(f.option->getPosition(), f.key, f.key->presetValue);
    } else if (auto *b = dynamic_cast<cl::opt<bool> *>(f.option)) {
      given.emplace_back(b->getPosition(), f.key, *b ? "true" : "false");
    } else if (auto *l = dynamic_cast<cl::list<std::string> *>(f.option)) {
      for (size_t i = 0; i < l->size(); ++i)
        given.emplace_back(l->getPosition(i), f.key, (*l)[i]);
    } else if (auto *s = dynamic_cast<cl::opt<std::string> *>(f.option)) {
      given.emplace_back(s->getPosition(), f.key, s->getValue());
    }
  }
  if (nnodes_ && (nnodes_->getNumOccurrences() || nprocPerNode_->getNumOccurrences())) {
    if (!nprocPerNode_->getNumOccurrences())
      return std::string("--nnodes needs --nproc-per-node (the world size is their product)");
    auto number = [](const char *flag, const std::string &text, int64_t hi) -> std::variant<int64_t, std::string> {
      int64_t x = 0;
      if (llvm::StringRef(text).getAsInteger(10, x) || x < 1 || x > hi)
        return std::string(flag) + " expects an integer from 1 to " + std::to_string(hi) + ", got '" +
               escapedForMessage(text) + "'";
      return x;
    };
    auto nodes = nnodes_->getNumOccurrences() ? number("--nnodes", *nnodes_, 1 << 20) : int64_t(1);
    auto per = number("--nproc-per-node", *nprocPerNode_, 1024);
    if (auto *err = std::get_if<std::string>(&nodes))
      return *err;
    if (auto *err = std::get_if<std::string>(&per))
      return *err;
    int64_t world = std::get<int64_t>(nodes) * std::get<int64_t>(per);
    unsigned at = nprocPerNode_->getPosition();
    given.emplace_back(at, findSetupKey("gpus-per-node"), std::to_string(std::get<int64_t>(per)));
    given.emplace_back(at, findSetupKey("world-size"), std::to_string(world));
  }
  std::stable_sort(given.begin(), given.end(),
                   [](const auto &a, const auto &b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto &[pos, key, text] : given) {
    SetupKey::Checked c = key->check(text, SetupSyntax::CommandLine);
    if (!c.value)
      return c.error;
    layer.setup.push_back({key, *c.value});
  }
  return std::nullopt;
}

PolicyFlags::PolicyFlags(Command &c, bool withGate)
    : select_(c.add<cl::opt<std::string>>(
          entry(kConfigSection, "RULES",
                "run only these rules (comma-separated codes, names,\n"
                "prefixes like GL1, or ALL); replaces the file's select"),
          "select")),
      extendSelect_(
          c.add<cl::opt<std::string>>(entry(kConfigSection, "RULES", "add rules to the selection"), "extend-select")),
      ignore_(c.add<cl::opt<std::string>>(entry(kConfigSection, "RULES", "remove rules from the selection"), "ignore")),
      failOn_(!withGate ? nullptr
                        : &c.add<cl::opt<std::string>>(
                              entry(kConfigSection, "error|warning|note|never",
                                    "lowest severity that makes the exit code 1 (default\n"
                                    "error, or the config file's fail-on)"),
                              "fail-on")),
      baseline_(!withGate ? nullptr
                          : &c.add<cl::opt<std::string>>(
                                entry(kConfigSection, "FILE",
                                      "drop findings FILE accepts; only new ones count\n"
                                      "toward the exit code; stale entries go to stderr",
                                      true),
                                "baseline")),
      reportUnused_(c.add<cl::opt<bool>>(
          entry(kConfigSection, "",
                "report suppressions that suppress nothing (GL005):\n"
                "graphlint.ignore node metadata, per-file-ignores and\n"
                "per-node-ignores entries"),
          "report-unused-ignores")) {}

const std::string &PolicyFlags::baseline() const {
  static const std::string kNone;
  return baseline_ ? baseline_->getValue() : kNone;
}

std::optional<std::string> PolicyFlags::toLayer(ConfigLayer &layer) const {
  if (failOn_ && failOn_->getNumOccurrences()) {
    const std::string &v = *failOn_;
    if (v == "never")
      layer.failOn = std::optional<Severity>();
    else if (auto s = severityFromName(v))
      layer.failOn = s;
    else
      return std::string("--fail-on must be one of error, warning, note, never");
  }
  if (select_.getNumOccurrences()) {
    std::vector<std::string> codes;
    if (auto err = parseRuleList("--select", select_, codes))
      return err;
    layer.select = codes;
  }
  if (extendSelect_.getNumOccurrences())
    if (auto err = parseRuleList("--extend-select", extendSelect_, layer.extendSelect))
      return err;
  if (ignore_.getNumOccurrences())
    if (auto err = parseRuleList("--ignore", ignore_, layer.ignore))
      return err;
  if (reportUnused_)
    layer.reportUnusedIgnores = true;
  return std::nullopt;
}

std::optional<std::string> emptyFileName(const Command &c) {
  for (const OptionEntry &e : c.options())
    if (e.fileValue && e.option->getNumOccurrences())
      if (auto *s = dynamic_cast<cl::opt<std::string> *>(e.option); s && s->getValue().empty())
        return "--" + e.option->ArgStr.str() + " needs a file name";
  return std::nullopt;
}

}  // namespace graphlint::cli
