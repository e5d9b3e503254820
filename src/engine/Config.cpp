#include "graphlint/engine/Config.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/engine/Glob.h"
#include "graphlint/engine/Paths.h"
#include "graphlint/rules/Rule.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/YAMLParser.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>

#include <unistd.h>

namespace graphlint {

namespace yaml = llvm::yaml;

RulePolicy RulePolicy::allRules() {
  RulePolicy p;
  for (const Rule *r : graphlint::allRules())
    p.enabled.emplace(r->info().code);
  return p;
}

namespace {

/// Reads one config file's YAML into a layer; the first error wins.
class ConfigParser {
public:
  ConfigParser(llvm::StringRef text, std::string path) : path_(std::move(path)) {
    sm_.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *ctx) {
          auto *self = static_cast<ConfigParser *>(ctx);
          if (self->error_.empty())
            self->error_ = oneLine(fmt::format("{}:{}: {}", self->path_, d.getLineNo(), d.getMessage().str()));
        },
        this);
    stream_ = std::make_unique<yaml::Stream>(text, sm_);
  }

  llvm::Expected<ConfigLayer> parse() {
    layer_.origin = path_;
    layer_.baseDir = absoluteDirectoryOf(path_);
    auto doc = stream_->begin();
    if (doc != stream_->end()) {
      yaml::Node *root = doc->getRoot();
      if (root && !llvm::isa<yaml::NullNode>(root)) {
        if (auto *map = llvm::dyn_cast<yaml::MappingNode>(root))
          parseTop(*map);
        else if (error_.empty())
          fail(root, "the file must be a mapping of keys (select, ignore, rules, setup, ...)");
      }
      if (error_.empty() && ++doc != stream_->end())
        fail(nullptr, "only one YAML document is allowed");
    }
    if (!error_.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), error_);
    return std::move(layer_);
  }

private:
  unsigned lineOf(const yaml::Node *n) const {
    // A node the parser built after an error can point at no byte of the
    // file (a flow sequence broken by stray text): the file's first line then.
    llvm::SMLoc at = n ? n->getSourceRange().Start : llvm::SMLoc();
    return at.isValid() && sm_.FindBufferContainingLoc(at) ? sm_.FindLineNumber(at) : 1;
  }
  std::string where(const yaml::Node *n) const { return fmt::format("{}:{}", path_, lineOf(n)); }
  void fail(const yaml::Node *n, const std::string &why) {
    if (error_.empty())  // one line, whatever the file's strings hold
      error_ = oneLine(fmt::format("{}: {}", where(n), why));
  }
  // What a message may quote of the file: a short name-like token (a key, a
  // rule, a severity, a glob). Anything else is described by its size, so a
  // file that is not a config at all (a shadow or key file a symlink or
  // --config named) never has its content printed (docs/configuration.md).
  static std::string shown(const std::string &userText) {
    bool nameLike = !userText.empty() && userText.size() <= 64 &&
                    llvm::all_of(userText, [](char c) {
                      return llvm::isAlnum(c) || llvm::StringRef("_.-/*?[]{}!,+@ ").contains(c);
                    });
    return nameLike ? userText : fmt::format("<{} bytes, not shown>", userText.size());
  }

  std::optional<std::string> scalar(yaml::Node *n, const std::string &key) {
    if (auto *s = llvm::dyn_cast_or_null<yaml::ScalarNode>(n)) {
      llvm::SmallString<64> buf;
      return s->getValue(buf).str();
    }
    fail(n, fmt::format("'{}' expects a single value", shown(key)));
    return std::nullopt;
  }

  // A list of scalars; a lone scalar counts as a one-element list.
  std::optional<std::vector<std::string>> list(yaml::Node *n, const std::string &key) {
    std::vector<std::string> out;
    if (llvm::isa_and_nonnull<yaml::ScalarNode>(n)) {
      auto v = scalar(n, key);
      if (!v)
        return std::nullopt;
      out.push_back(*v);
      return out;
    }
    auto *seq = llvm::dyn_cast_or_null<yaml::SequenceNode>(n);
    if (!seq) {
      fail(n, fmt::format("'{}' expects a list", shown(key)));
      return std::nullopt;
    }
    for (yaml::Node &item : *seq) {
      auto v = scalar(&item, key);
      if (!v)
        return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }

  // Rule selectors to codes; an unknown selector is an error. (A YAML node
  // can be read once only: callers that need the selectors as written use
  // codesOf() on the list.)
  std::optional<std::vector<std::string>> rules(yaml::Node *n, const std::string &key) {
    auto names = list(n, key);
    return names ? codesOf(*names, n, key) : std::nullopt;
  }

  std::optional<std::vector<std::string>> codesOf(const std::vector<std::string> &names, yaml::Node *n,
                                                  const std::string &key) {
    std::vector<std::string> codes;
    for (const std::string &s : names) {
      std::vector<std::string> c = resolveRuleSelector(s);
      if (c.empty()) {
        fail(n, fmt::format("unknown rule '{}' in '{}' (see 'graphlint rules')", shown(s), shown(key)));
        return std::nullopt;
      }
      codes.insert(codes.end(), c.begin(), c.end());
    }
    return codes;
  }

  std::optional<bool> boolean(yaml::Node *n, const std::string &key) {
    auto v = scalar(n, key);
    if (!v)
      return std::nullopt;
    std::string s = llvm::StringRef(*v).lower();
    if (s == "true" || s == "yes" || s == "on")
      return true;
    if (s == "false" || s == "no" || s == "off")
      return false;
    fail(n, fmt::format("'{}' expects true or false, got '{}'", shown(key), shown(*v)));
    return std::nullopt;
  }

  template <typename Fn> void forEachKey(yaml::MappingNode &map, Fn fn) {
    for (yaml::KeyValueNode &kv : map) {
      if (!error_.empty())
        return;
      auto key = scalar(kv.getKey(), "key");
      if (!key)
        return;
      fn(*key, kv.getKey(), kv.getValue());
    }
  }

  yaml::MappingNode *mapping(yaml::Node *n, const std::string &key) {
    auto *m = llvm::dyn_cast_or_null<yaml::MappingNode>(n);
    if (!m)
      fail(n, fmt::format("'{}' expects a mapping", shown(key)));
    return m;
  }

  void parseTop(yaml::MappingNode &map) {
    forEachKey(map, [&](const std::string &key, yaml::Node *keyNode, yaml::Node *v) {
      if (key == "select") {
        if (auto c = rules(v, key)) layer_.select = *c;
      } else if (key == "extend-select") {
        if (auto c = rules(v, key)) layer_.extendSelect = *c;
      } else if (key == "ignore") {
        if (auto c = rules(v, key)) layer_.ignore = *c;
      } else if (key == "fail-on") {
        auto s = scalar(v, key);
        if (s && *s == "never")
          layer_.failOn = std::optional<Severity>();
        else if (s && severityFromName(*s))
          layer_.failOn = severityFromName(*s);
        else if (s)
          fail(v, fmt::format("'fail-on' must be one of error, warning, note, never, got '{}'", shown(*s)));
      } else if (key == "report-unused-ignores") {
        if (auto b = boolean(v, key)) layer_.reportUnusedIgnores = *b;
      } else if (key == "rules") {
        if (auto *m = mapping(v, key)) parseRules(*m);
      } else if (key == "per-file-ignores") {
        if (auto *m = mapping(v, key)) parseIgnores(*m, key, layer_.perFileIgnores);
      } else if (key == "per-node-ignores") {
        if (auto *m = mapping(v, key)) parseIgnores(*m, key, layer_.perNodeIgnores);
      } else if (key == "setup") {
        if (auto *m = mapping(v, key)) parseSetup(*m);
      } else {
        fail(keyNode, fmt::format("unknown key '{}' (known: select, extend-select, ignore, fail-on, "
                                  "report-unused-ignores, rules, per-file-ignores, per-node-ignores, setup)",
                                  shown(key)));
      }
    });
  }

  void parseRules(yaml::MappingNode &map) {
    forEachKey(map, [&](const std::string &sel, yaml::Node *keyNode, yaml::Node *v) {
      const Rule *rule = findRule(sel);
      if (!rule) {
        fail(keyNode, fmt::format("unknown rule '{}' in 'rules' (see 'graphlint rules')", shown(sel)));
        return;
      }
      const RuleInfo &info = rule->info();
      std::string code(info.code);
      auto *m = mapping(v, "rules: " + sel);
      if (!m)
        return;
      forEachKey(*m, [&](const std::string &key, yaml::Node *optKey, yaml::Node *val) {
        if (key == "severity") {
          auto s = scalar(val, key);
          if (s && *s == "off")
            layer_.disabled.insert(code);
          else if (s && severityFromName(*s))
            layer_.severity[code] = *severityFromName(*s);
          else if (s)
            fail(val, fmt::format("'severity' of {} must be one of error, warning, note, off, got '{}'", code, shown(*s)));
          return;
        }
        const RuleOptionInfo *opt = nullptr;
        for (const RuleOptionInfo &o : info.options)
          if (o.name == key)
            opt = &o;
        if (!opt) {
          std::string known = "severity";
          for (const RuleOptionInfo &o : info.options)
            known += ", " + std::string(o.name);
          fail(optKey, fmt::format("unknown option '{}' for {} {} (known: {})", shown(key), code, info.name, known));
          return;
        }
        auto s = scalar(val, key);
        double x = 0;
        if (!s)
          return;
        if (llvm::StringRef(*s).getAsDouble(x) || !std::isfinite(x) || x < opt->min || x > opt->max) {
          fail(val, fmt::format("option '{}' of {} expects a number from {} to {}, got '{}'", key, code, opt->min,
                                opt->max, shown(*s)));
          return;
        }
        layer_.options[code][key] = x;
      });
    });
  }

  void parseIgnores(yaml::MappingNode &map, const std::string &key, std::vector<IgnoreEntry> &out) {
    forEachKey(map, [&](const std::string &pattern, yaml::Node *keyNode, yaml::Node *v) {
      if (auto g = Glob::compile(pattern); !g) {
        fail(keyNode, fmt::format("'{}': bad glob '{}': {}", shown(key), shown(pattern), llvm::toString(g.takeError())));
        return;
      }
      auto selectors = list(v, key + ": " + pattern);
      if (!selectors)
        return;
      if (auto codes = codesOf(*selectors, v, key + ": " + pattern))
        out.push_back({pattern, *codes, *selectors, where(keyNode)});
    });
  }

  // Every key is a row of the setup table (SetupKeys.h); dims is a mapping
  // of NAME: SIZE, the others take one scalar.
  void parseSetup(yaml::MappingNode &map) {
    forEachKey(map, [&](const std::string &key, yaml::Node *keyNode, yaml::Node *v) {
      const SetupKey *k = findSetupKey(key);
      if (!k || key != k->key) {
        fail(keyNode, fmt::format("unknown key 'setup: {}' (known: {})", shown(key), setupKeyNames()));
        return;
      }
      auto take = [&](yaml::Node *at, const std::string &text) {
        SetupKey::Checked c = k->check(text, SetupSyntax::ConfigFile);
        if (!c.value)
          fail(at, c.error);
        else
          layer_.setup.push_back({k, *c.value});
      };
      if (k->isMapping()) {
        if (auto *m = mapping(v, key))
          forEachKey(*m, [&](const std::string &name, yaml::Node *, yaml::Node *size) {
            if (auto x = scalar(size, key + ": " + name))
              take(size, name + "=" + *x);
          });
      } else if (auto x = scalar(v, key)) {
        take(v, *x);
      }
    });
  }

  std::string path_;
  llvm::SourceMgr sm_;
  std::unique_ptr<yaml::Stream> stream_;
  ConfigLayer layer_;
  std::string error_;
};

// A per-file-ignores glob matches the model's path relative to the config
// file's directory; a glob without '/' also matches the bare file name.
bool fileGlobMatches(const IgnoreEntry &e, const std::string &baseDir, const std::string &modelPath) {
  auto glob = Glob::compile(e.pattern);
  if (!glob) {
    llvm::consumeError(glob.takeError());  // refused when the config was read
    return false;
  }
  std::string abs = absolutePath(modelPath);
  if (glob->matches(pathUnder(abs, baseDir).value_or(abs)))
    return true;
  return e.pattern.find('/') == std::string::npos && glob->matches(llvm::sys::path::filename(abs));
}

}  // namespace

bool sourceGlobMatches(const IgnoreEntry &e, const std::string &sourceFile) {
  auto glob = Glob::compile(e.pattern);
  if (!glob || sourceFile.empty()) {
    if (!glob)
      llvm::consumeError(glob.takeError());  // refused when the config was read
    return false;
  }
  // As recorded: relative to the model's repository (the user's files) or
  // absolute (libraries); an absolute path also relative to the config's folder.
  if (glob->matches(sourceFile))
    return true;
  if (llvm::sys::path::is_absolute(sourceFile) && !e.baseDir.empty())
    if (auto under = pathUnder(sourceFile, e.baseDir); under && glob->matches(*under))
      return true;
  return e.pattern.find('/') == std::string::npos && glob->matches(llvm::sys::path::filename(sourceFile));
}

llvm::Expected<ConfigLayer> parseConfigYaml(llvm::StringRef text, const std::string &path) {
  // llvm::yaml recurses once per level (and again when skipping a value).
  if (llvm::Error e = checkNestingDepth(text, TextSyntax::Yaml, path))
    return std::move(e);
  return ConfigParser(text, path).parse();
}

llvm::Expected<ConfigLayer> loadConfigFile(const std::string &path) {
  auto text = readInputFile(path, InputKind::Config);
  if (!text)
    return text.takeError();
  return parseConfigYaml(*text, path);
}

namespace {

// Why a discovered config file is not trusted, or "" when it is: git's
// safe.directory rule (a file another user controls does not configure this
// user's run) and no symlink out of the tree it was found in.
std::string untrustedConfigReason(const std::string &candidate, const std::string &boundary) {
  llvm::sys::fs::file_status link, st;
  if (llvm::sys::fs::status(candidate, link, /*Follow=*/false))
    return "cannot be read";
  if (link.type() == llvm::sys::fs::file_type::symlink_file) {
    llvm::SmallString<256> real, realBoundary;
    if (llvm::sys::fs::real_path(candidate, real) || llvm::sys::fs::real_path(boundary, realBoundary) ||
        !pathUnder(real, realBoundary))
      return "it is a symlink that resolves outside '" + escapedForMessage(boundary) + "'";
  }
  if (llvm::sys::fs::status(candidate, st) || st.type() != llvm::sys::fs::file_type::regular_file)
    return "not a regular file";
  unsigned me = ::geteuid();
  if (st.getUser() != me && st.getUser() != 0)
    return fmt::format("owned by another user (uid {})", st.getUser());
  if (st.permissions() & llvm::sys::fs::others_write)
    return "writable by every user";
  llvm::sys::fs::file_status dir;
  std::string parent = absoluteDirectoryOf(candidate);
  if (!llvm::sys::fs::status(parent, dir) && (dir.permissions() & llvm::sys::fs::others_write))
    return "its directory '" + escapedForMessage(parent) + "' is writable by every user";
  return "";
}

}  // namespace

ConfigDiscovery discoverConfigFile(const std::string &modelPath) {
  ConfigDiscovery out;
  std::optional<std::string> repo = gitTopLevelOf(modelPath);
  llvm::SmallString<256> dir(absoluteDirectoryOf(modelPath));
  while (!dir.empty()) {
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, kConfigFileName);
    llvm::sys::fs::file_status st;
    if (!llvm::sys::fs::status(candidate, st, /*Follow=*/false) &&
        st.type() != llvm::sys::fs::file_type::directory_file) {
      std::string why = untrustedConfigReason(std::string(candidate), repo ? *repo : std::string(dir));
      if (why.empty()) {
        // Report the path the way the user wrote the model's: relative when
        // the model path was relative and the config is under the cwd.
        llvm::SmallString<256> cwd;
        if (!llvm::sys::path::is_absolute(modelPath) && !llvm::sys::fs::current_path(cwd))
          if (auto rel = pathUnder(candidate, cwd)) {
            out.path = *rel;
            return out;
          }
        out.path = std::string(candidate);
        return out;
      }
      out.ignored.push_back(fmt::format("ignoring config file '{}': {}", escapedForMessage(candidate, 400), why));
    }
    // The repository's top level is as far as discovery goes.
    if (repo && dir == *repo)
      break;
    llvm::StringRef parent = llvm::sys::path::parent_path(dir);
    if (parent == dir)
      break;
    dir.truncate(parent.size());  // parent is a prefix of dir: assigning it would read the buffer it overwrites
  }
  return out;
}

std::string findConfigFile(const std::string &modelPath) { return discoverConfigFile(modelPath).path; }

llvm::Expected<Config> resolveConfig(const std::vector<const ConfigLayer *> &layers, const std::string &modelPath) {
  Config c;
  Setup &s = c.setup;
  std::vector<SetupSetting> settings;
  for (const ConfigLayer *l : layers) {
    if (l->origin != "command line" && !l->showOrigin)
      c.file = l->origin;
    for (const SetupSetting &x : l->setup) {
      if (l->showOrigin)
        c.setupOrigin[x.key->key] = l->origin;
      else
        c.setupOrigin.erase(x.key->key);
    }
    std::set<std::string> &on = c.policy.enabled;
    if (l->select)
      on = std::set<std::string>(l->select->begin(), l->select->end());
    on.insert(l->extendSelect.begin(), l->extendSelect.end());
    for (const std::string &code : l->ignore)
      on.erase(code);
    for (const std::string &code : l->disabled)
      on.erase(code);
    for (const auto &[code, sev] : l->severity)
      c.policy.severity[code] = sev;
    for (const auto &[code, opts] : l->options)
      for (const auto &[name, v] : opts)
        s.ruleOptions[code][name] = v;
    for (IgnoreEntry e : l->perFileIgnores) {
      e.baseDir = l->baseDir;
      (fileGlobMatches(e, l->baseDir, modelPath) ? c.policy.fileIgnores : c.policy.sourceIgnores).push_back(e);
    }
    c.policy.nodeIgnores.insert(c.policy.nodeIgnores.end(), l->perNodeIgnores.begin(), l->perNodeIgnores.end());
    if (l->failOn)
      c.failOn = *l->failOn;
    if (l->reportUnusedIgnores)
      c.policy.reportUnusedIgnores = *l->reportUnusedIgnores;
    settings.insert(settings.end(), l->setup.begin(), l->setup.end());
  }
  // The one place setup values are merged and the hardware and mesh resolved.
  if (auto err = applySetup(s, settings))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), *err);
  return c;
}

namespace {

std::string flowList(const std::vector<std::string> &items) {
  return "[" + llvm::join(items, ", ") + "]";
}

}  // namespace

void dumpConfig(const Config &c, const std::string &modelPath, llvm::raw_ostream &os) {
  const Setup &s = c.setup;
  os << "# effective configuration for " << modelPath << "\n";
  os << "# config file: " << (c.file.empty() ? "none (built-in defaults)" : c.file) << "\n";
  std::vector<std::string> on(c.policy.enabled.begin(), c.policy.enabled.end());
  os << "select: " << flowList(on) << "\n";
  os << "fail-on: " << (c.failOn ? severityName(*c.failOn) : "never") << "\n";
  os << "report-unused-ignores: " << (c.policy.reportUnusedIgnores ? "true" : "false") << "\n";
  os << "rules:\n";
  for (const Rule *r : allRules()) {
    const RuleInfo &i = r->info();
    std::string code(i.code);
    auto sev = c.policy.severity.find(code);
    os << "  " << code << ":  # " << i.name << (c.policy.isEnabled(code) ? "" : " (not selected)") << "\n";
    os << "    severity: " << severityName(sev == c.policy.severity.end() ? i.severity : sev->second) << "\n";
    for (const RuleOptionInfo &o : i.options)
      os << "    " << o.name << ": " << fmt::format("{}", s.ruleOption(code, o.name, o.defaultValue)) << "  # "
         << o.help << "\n";
  }
  auto ignores = [&](const char *key, const std::vector<IgnoreEntry> &entries) {
    os << key << ":" << (entries.empty() ? " {}" : "") << "\n";
    for (const IgnoreEntry &e : entries)
      os << "  " << yamlQuoted(e.pattern) << ": " << flowList(e.selectors) << "  # " << e.origin << "\n";
  };
  ignores("per-file-ignores", c.policy.fileIgnores);
  ignores("per-node-ignores", c.policy.nodeIgnores);
  os << "setup:\n";
  // A value a launch config set names it: on the line of a scalar, after
  // the key of a mapping (`dims:  # from ds_config.json`).
  for (const SetupKey &k : setupKeys()) {
    auto from = c.setupOrigin.find(k.key);
    std::string note = from == c.setupOrigin.end() ? "" : "  # from " + escapedForMessage(from->second, 200);
    std::string value = k.dump(s);
    // An unstated backend is the fusion planner's default only; a dump read
    // back as a config file must not state it (that would switch the memory
    // plan to compiled execution), so it is printed as a comment.
    if (llvm::StringRef(k.key) == "backend" && !s.backendStated) {
      os << "  # backend:" << value << "  # not stated: fusion as" << value
         << ", memory and time as eager execution\n";
      continue;
    }
    if (!note.empty() && !value.empty() && value[0] == '\n')
      os << "  " << k.key << ":" << note << value << "\n";
    else
      os << "  " << k.key << ":" << value << note << "\n";
  }
}

}  // namespace graphlint
