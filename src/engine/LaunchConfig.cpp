// Launch configs (LaunchConfig.h): each format is flattened to dotted keys
// ("zero_optimization.stage"), then one mapping per format turns the keys it
// knows into setup values, checked by the setup table's rows.
#include "graphlint/engine/LaunchConfig.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/JsonInput.h"
#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/YAMLParser.h>

#include <cmath>
#include <map>
#include <set>

namespace graphlint {

namespace {

using Entry = TomlEntry;

llvm::Error failure(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), oneLine(message));
}

// ---------------------------------------------------------------- TOML

constexpr unsigned kMaxTomlArrayDepth = 8;

class TomlReader {
public:
  TomlReader(llvm::StringRef text, std::string path) : text_(text), path_(std::move(path)) {}

  llvm::Expected<std::vector<Entry>> read() {
    while (pos_ < text_.size() && error_.empty()) {
      skipBlank();
      if (pos_ >= text_.size())
        break;
      char c = text_[pos_];
      if (c == '#') {
        skipComment();
      } else if (c == '\n') {
        ++pos_, ++line_;
      } else if (c == '[') {
        header();
      } else {
        keyValue();
      }
    }
    if (!error_.empty())
      return failure(error_);
    return std::move(entries_);
  }

private:
  void fail(const std::string &why) {
    if (error_.empty())
      error_ = fmt::format("{}:{}: invalid TOML: {}", path_, line_, why);
  }
  void skipBlank() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  void skipComment() {
    while (pos_ < text_.size() && text_[pos_] != '\n')
      ++pos_;
  }
  // After a value or header: blanks, an optional comment, then a newline or the end.
  void endOfLine() {
    skipBlank();
    if (pos_ < text_.size() && text_[pos_] == '#')
      skipComment();
    if (pos_ < text_.size() && text_[pos_] != '\n')
      fail("expected the end of the line");
  }
  static bool bareChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '-'; }

  // A bare, quoted or dotted key.
  std::optional<std::string> key() {
    std::string out;
    while (true) {
      skipBlank();
      std::string part;
      if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'')) {
        auto s = string();
        if (!s)
          return std::nullopt;
        part = *s;
      } else {
        while (pos_ < text_.size() && bareChar(text_[pos_]))
          part += text_[pos_++];
        if (part.empty()) {
          fail("expected a key");
          return std::nullopt;
        }
      }
      out += (out.empty() ? "" : ".") + part;
      skipBlank();
      if (pos_ < text_.size() && text_[pos_] == '.') {
        ++pos_;
        continue;
      }
      return out;
    }
  }

  void header() {
    ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '[')
      return fail("arrays of tables ([[...]]) are not supported");
    auto k = key();
    if (!k)
      return;
    if (pos_ >= text_.size() || text_[pos_] != ']')
      return fail("expected ']' after the table name");
    ++pos_;
    if (!tables_.insert(*k).second)
      return fail(fmt::format("table [{}] is defined twice", escapedForMessage(*k, 64)));
    table_ = *k;
    endOfLine();
  }

  void keyValue() {
    unsigned at = line_;
    auto k = key();
    if (!k)
      return;
    if (pos_ >= text_.size() || text_[pos_] != '=')
      return fail("expected '=' after the key");
    ++pos_;
    skipBlank();
    Entry e{table_.empty() ? *k : table_ + "." + *k, "", Entry::String, at, {}};
    if (!value(e, 0))
      return;
    if (!keys_.insert(e.key).second)
      return fail(fmt::format("key '{}' is defined twice", escapedForMessage(e.key, 64)));
    entries_.push_back(std::move(e));
    endOfLine();
  }

  std::optional<std::string> string() {
    char q = text_[pos_++];
    if (pos_ + 1 < text_.size() && text_[pos_] == q && text_[pos_ + 1] == q) {
      fail("multi-line strings are not supported");
      return std::nullopt;
    }
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != q) {
      char c = text_[pos_++];
      if (c == '\n')
        break;
      if (c == '\\' && q == '"') {
        if (pos_ >= text_.size())
          break;
        char x = text_[pos_++];
        switch (x) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        default:
          fail("unsupported escape in a string");
          return std::nullopt;
        }
        continue;
      }
      out += c;
    }
    if (pos_ >= text_.size() || text_[pos_] != q) {
      fail("unterminated string");
      return std::nullopt;
    }
    ++pos_;
    return out;
  }

  bool value(Entry &e, unsigned depth) {
    if (pos_ >= text_.size()) {
      fail("expected a value");
      return false;
    }
    char c = text_[pos_];
    if (c == '"' || c == '\'') {
      auto s = string();
      if (!s)
        return false;
      e.kind = Entry::String;
      e.value = *s;
      return true;
    }
    if (c == '{') {
      fail("inline tables are not supported");
      return false;
    }
    if (c == '[')
      return array(e, depth + 1);
    std::string word;
    while (pos_ < text_.size() && (llvm::isAlnum(text_[pos_]) || llvm::StringRef("+-._").contains(text_[pos_])))
      word += text_[pos_++];
    if (word == "true" || word == "false") {
      e.kind = Entry::Boolean;
      e.value = word;
      return true;
    }
    std::string digits;
    for (char d : word)
      if (d != '_')
        digits += d;
    int64_t i = 0;
    double f = 0;
    if (!digits.empty() && !llvm::StringRef(digits).getAsInteger(10, i)) {
      e.kind = Entry::Integer;
      e.value = std::to_string(i);
      return true;
    }
    if (!digits.empty() && !llvm::StringRef(digits).getAsDouble(f) && std::isfinite(f)) {
      e.kind = Entry::Float;
      e.value = digits;
      return true;
    }
    fail(word.empty() ? "expected a value" : fmt::format("'{}' is not a string, number, boolean or array",
                                                         escapedForMessage(word, 40)));
    return false;
  }

  // Blanks, newlines and comments between an array's elements.
  void skipArraySpace() {
    while (pos_ < text_.size()) {
      skipBlank();
      if (pos_ < text_.size() && text_[pos_] == '#')
        skipComment();
      else if (pos_ < text_.size() && text_[pos_] == '\n')
        ++pos_, ++line_;
      else
        break;
    }
  }

  bool array(Entry &e, unsigned depth) {
    if (depth > kMaxTomlArrayDepth) {
      fail(fmt::format("arrays nested deeper than {} levels", kMaxTomlArrayDepth));
      return false;
    }
    ++pos_;
    e.kind = Entry::Array;
    std::vector<std::string> shown;
    while (true) {
      skipArraySpace();
      if (pos_ >= text_.size()) {
        fail("unterminated array");
        return false;
      }
      if (text_[pos_] == ']') {  // empty, or after a trailing comma
        ++pos_;
        break;
      }
      Entry item{"", "", Entry::String, line_, {}};
      if (!value(item, depth))
        return false;
      e.items.push_back(item.value);
      shown.push_back(item.kind == Entry::String ? "\"" + item.value + "\"" : item.value);
      skipArraySpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        break;
      }
      fail(pos_ >= text_.size() ? "unterminated array" : "expected ',' or ']' in an array");
      return false;
    }
    e.value = "[" + llvm::join(shown, ", ") + "]";
    return true;
  }

  llvm::StringRef text_;
  std::string path_;
  size_t pos_ = 0;
  unsigned line_ = 1;
  std::string table_, error_;
  std::set<std::string> tables_, keys_;
  std::vector<Entry> entries_;
};

}  // namespace

llvm::Expected<std::vector<TomlEntry>> parseToml(llvm::StringRef text, const std::string &path) {
  return TomlReader(text, path).read();
}

namespace {

// ---------------------------------------------------------------- JSON, YAML

void flattenJson(const llvm::json::Value &v, const std::string &key, std::vector<Entry> &out) {
  if (const llvm::json::Object *o = v.getAsObject()) {
    for (const auto &kv : *o)
      flattenJson(kv.second, key.empty() ? kv.first.str() : key + "." + kv.first.str(), out);
    return;
  }
  Entry e{key, "", Entry::String, 0, {}};
  if (auto s = v.getAsString()) {
    e.value = s->str();
  } else if (auto b = v.getAsBoolean()) {
    e.kind = Entry::Boolean;
    e.value = *b ? "true" : "false";
  } else if (auto i = v.getAsInteger()) {
    e.kind = Entry::Integer;
    e.value = std::to_string(*i);
  } else if (auto d = v.getAsNumber()) {
    e.kind = Entry::Float;
    e.value = fmt::format("{}", *d);
  } else if (const llvm::json::Array *a = v.getAsArray()) {
    e.kind = Entry::Array;
    for (const llvm::json::Value &x : *a)
      if (auto s = x.getAsString())
        e.items.push_back(s->str());
    e.value = fmt::format("[{} items]", a->size());
  } else {
    e.value = "null";
  }
  out.push_back(std::move(e));
}

class YamlFlattener {
public:
  YamlFlattener(llvm::StringRef text, std::string path) : path_(std::move(path)) {
    sm_.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *ctx) {
          auto *self = static_cast<YamlFlattener *>(ctx);
          if (self->error_.empty())
            self->error_ = fmt::format("{}:{}: invalid YAML: {}", self->path_, d.getLineNo(), d.getMessage().str());
        },
        this);
    stream_ = std::make_unique<llvm::yaml::Stream>(text, sm_);
  }

  llvm::Expected<std::vector<Entry>> read() {
    auto doc = stream_->begin();
    if (doc != stream_->end()) {
      llvm::yaml::Node *root = doc->getRoot();
      if (auto *m = llvm::dyn_cast_or_null<llvm::yaml::MappingNode>(root))
        walk(*m, "");
      else if (error_.empty() && root && !llvm::isa<llvm::yaml::NullNode>(root))
        error_ = path_ + ": the file must be a mapping of keys";
    }
    if (!error_.empty())
      return failure(error_);
    return std::move(out_);
  }

private:
  unsigned lineOf(llvm::yaml::Node *n) const {
    llvm::SMLoc at = n ? n->getSourceRange().Start : llvm::SMLoc();
    return at.isValid() && sm_.FindBufferContainingLoc(at) ? sm_.FindLineNumber(at) : 1;
  }
  void walk(llvm::yaml::MappingNode &map, const std::string &prefix) {
    for (llvm::yaml::KeyValueNode &kv : map) {
      if (!error_.empty())
        return;
      auto *k = llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(kv.getKey());
      if (!k) {
        error_ = fmt::format("{}:{}: a key must be a single value", path_, lineOf(kv.getKey()));
        return;
      }
      llvm::SmallString<64> kb;
      std::string key = prefix.empty() ? k->getValue(kb).str() : prefix + "." + k->getValue(kb).str();
      llvm::yaml::Node *v = kv.getValue();
      Entry e{key, "", Entry::String, lineOf(v), {}};
      if (auto *m = llvm::dyn_cast_or_null<llvm::yaml::MappingNode>(v)) {
        walk(*m, key);
        continue;
      }
      if (auto *s = llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(v)) {
        llvm::SmallString<64> vb;
        e.value = s->getValue(vb).str();
      } else if (auto *seq = llvm::dyn_cast_or_null<llvm::yaml::SequenceNode>(v)) {
        e.kind = Entry::Array;
        for (llvm::yaml::Node &item : *seq) {
          if (auto *s = llvm::dyn_cast<llvm::yaml::ScalarNode>(&item)) {
            llvm::SmallString<64> vb;
            e.items.push_back(s->getValue(vb).str());
          } else {
            item.skip();
          }
        }
        e.value = fmt::format("[{} items]", e.items.size());
      } else if (v) {
        v->skip();
        e.value = "null";
      }
      out_.push_back(std::move(e));
    }
  }

  std::string path_;
  llvm::SourceMgr sm_;
  std::unique_ptr<llvm::yaml::Stream> stream_;
  std::vector<Entry> out_;
  std::string error_;
};

// ---------------------------------------------------------------- mapping

// What a message may quote of a value: short and name-like, else its size
// (a launch config can hold paths and tokens; none is echoed whole).
std::string shownValue(const std::string &v) {
  bool nameLike = v.size() <= 40 && llvm::all_of(v, [](char c) {
                    return llvm::isAlnum(c) || llvm::StringRef("_.-+/[], \"").contains(c);
                  });
  return nameLike ? v : fmt::format("<{} bytes>", v.size());
}

class Mapper {
public:
  Mapper(std::string path, std::vector<Entry> entries) : path_(std::move(path)), entries_(std::move(entries)) {
    out_.layer.origin = path_;
    out_.layer.showOrigin = true;
  }

  /// The entry at `key` (marked as read), or nullptr.
  const Entry *get(llvm::StringRef key) {
    for (const Entry &e : entries_)
      if (e.key == key) {
        used_.insert(e.key);
        return &e;
      }
    return nullptr;
  }
  bool failed() const { return !error_.empty(); }

  void fail(const Entry &e, const std::string &why) {
    if (error_.empty())
      error_ = oneLine(fmt::format("{}{}: '{}' {}", path_, e.line ? fmt::format(":{}", e.line) : "",
                                   escapedForMessage(e.key, 80), why));
  }
  void warn(const Entry &e, const std::string &why) {
    out_.warnings.push_back(oneLine(fmt::format("{}: '{}' {}", path_, escapedForMessage(e.key, 80), why)));
  }
  void notModelled(const Entry &e, const std::string &what = "") {
    warn(e, fmt::format("{}: {}not modelled by graphlint; ignored", shownValue(e.value), what));
  }

  std::optional<int64_t> integer(const Entry &e) {
    int64_t v = 0;
    if (e.kind == Entry::Array || e.kind == Entry::Boolean || llvm::StringRef(e.value).trim().getAsInteger(10, v)) {
      fail(e, fmt::format("expects an integer, got '{}'", shownValue(e.value)));
      return std::nullopt;
    }
    return v;
  }
  std::optional<bool> boolean(const Entry &e) {
    std::string s = llvm::StringRef(e.value).trim().lower();
    if (e.kind != Entry::Array && (s == "true" || s == "yes" || s == "on"))
      return true;
    if (e.kind != Entry::Array && (s == "false" || s == "no" || s == "off"))
      return false;
    fail(e, fmt::format("expects true or false, got '{}'", shownValue(e.value)));
    return std::nullopt;
  }

  /// Sets setup key `name` to `text` (checked by its row), from entry `e`.
  void set(const char *name, const std::string &text, const Entry &e) {
    const SetupKey *k = findSetupKey(name);
    SetupKey::Checked c = k->check(text, SetupSyntax::ConfigFile);
    if (!c.value)
      return fail(e, fmt::format("{}: {}", shownValue(e.value), c.error));
    out_.layer.setup.push_back({k, *c.value});
  }
  /// Whether setup key `name` accepts `text` (a key a later change adds).
  static bool accepts(const char *name, const std::string &text) {
    const SetupKey *k = findSetupKey(name);
    return k && k->check(text, SetupSyntax::ConfigFile).value.has_value();
  }

  /// Every entry not read: silent when under a known, irrelevant prefix,
  /// else "unknown key".
  void finish(std::initializer_list<const char *> known) {
    for (const Entry &e : entries_) {
      if (used_.count(e.key))
        continue;
      bool quiet = llvm::any_of(known, [&](const char *p) {
        llvm::StringRef pre(p);
        return pre.endswith(".") ? llvm::StringRef(e.key).startswith(pre) : e.key == pre;
      });
      if (!quiet)
        warn(e, "is not a key graphlint knows; ignored");
    }
  }

  llvm::Expected<LaunchConfig> result(std::string format) {
    if (!error_.empty())
      return failure(error_);
    out_.format = std::move(format);
    return std::move(out_);
  }

  const std::string &path() const { return path_; }

private:
  std::string path_;
  std::vector<Entry> entries_;
  std::set<std::string> used_;
  LaunchConfig out_;
  std::string error_;
};

std::string lower(const std::string &s) { return llvm::StringRef(s).trim().lower(); }

// A launch config describes a training job.
void training(Mapper &m, const Entry &at) { m.set("train", "true", at); }

// ---- DeepSpeed ds_config.json (deepspeedai/DeepSpeed, docs/_pages/config-json.md)
llvm::Expected<LaunchConfig> mapDeepSpeed(Mapper &m) {
  Entry whole{"(file)", "", Entry::String, 0, {}};
  training(m, whole);
  if (const Entry *e = m.get("zero_optimization.stage"))
    if (auto v = m.integer(*e))
      m.set("zero", std::to_string(*v), *e);
  for (const char *k : {"zero_optimization.offload_optimizer.device", "zero_optimization.offload_param.device"})
    if (const Entry *e = m.get(k); e && lower(e->value) != "none")
      m.notModelled(*e, "offloading is ");
  std::optional<bool> bf16, fp16;
  for (const char *k : {"bf16.enabled", "bfloat16.enabled", "fp16.enabled"}) {
    const Entry *e = m.get(k);
    if (!e)
      continue;
    if (lower(e->value) == "auto") {
      m.warn(*e, "auto: filled in by the Hugging Face Trainer at launch; ignored (give --precision)");
      continue;
    }
    auto b = m.boolean(*e);
    if (!b)
      break;
    (llvm::StringRef(k).startswith("fp16") ? fp16 : bf16) = *b;
  }
  if (bf16.value_or(false) && fp16.value_or(false)) {
    m.fail(*m.get("fp16.enabled"), "and bf16 are both enabled; DeepSpeed refuses that");
  } else if (bf16.value_or(false)) {
    m.set("precision", "bf16-mixed", *m.get(m.get("bf16.enabled") ? "bf16.enabled" : "bfloat16.enabled"));
  } else if (fp16.value_or(false)) {
    m.set("precision", "fp16-mixed", *m.get("fp16.enabled"));
  } else if (bf16 || fp16) {
    m.set("precision", "fp32", *m.get(fp16 ? "fp16.enabled" : bf16 && m.get("bf16.enabled") ? "bf16.enabled"
                                                                                         : "bfloat16.enabled"));
  }
  if (const Entry *e = m.get("train_micro_batch_size_per_gpu")) {
    if (lower(e->value) == "auto")
      m.warn(*e, "auto: filled in by the Hugging Face Trainer at launch; ignored (give -D batch=N)");
    else if (auto v = m.integer(*e))
      m.set("dims", fmt::format("batch={}", *v), *e);
  }
  if (const Entry *e = m.get("gradient_accumulation_steps"); e && lower(e->value) != "auto" && e->value != "1")
    m.warn(*e, fmt::format("{}: noted; graphlint predicts one micro-batch's step (the accumulated gradients are "
                           "held as one step's)",
                           shownValue(e->value)));
  if (const Entry *e = m.get("optimizer.type")) {
    std::string t = lower(e->value);
    if (t == "adam" || t == "adamw") {
      m.set("optimizer", t, *e);
    } else if (t == "sgd") {
      const Entry *mom = m.get("optimizer.params.momentum");
      double x = 0;
      bool momentum = mom && !llvm::StringRef(mom->value).getAsDouble(x) && x != 0;
      m.set("optimizer", momentum ? "momentum" : "sgd", *e);
    } else {
      m.notModelled(*e, "this optimizer is ");
    }
  }
  // The section configures deepspeed.checkpointing.checkpoint, which the
  // model calls per layer.
  bool checkpointing = false;
  for (const char *k : {"activation_checkpointing.partition_activations", "activation_checkpointing.cpu_checkpointing",
                        "activation_checkpointing.contiguous_memory_optimization",
                        "activation_checkpointing.number_checkpoints",
                        "activation_checkpointing.synchronize_checkpoint_boundary",
                        "activation_checkpointing.profile"}) {
    const Entry *e = m.get(k);
    if (!e)
      continue;
    checkpointing = true;
    if ((llvm::StringRef(k).endswith("partition_activations") || llvm::StringRef(k).endswith("cpu_checkpointing")) &&
        lower(e->value) == "true")
      m.notModelled(*e);
  }
  if (checkpointing)
    m.set("recompute", "layer", whole);
  m.finish({"zero_optimization.", "optimizer.params.", "scheduler.", "fp16.", "bf16.", "bfloat16.", "amp.",
            "train_batch_size", "gradient_clipping", "steps_per_print", "wall_clock_breakdown", "dump_state",
            "memory_breakdown", "prescale_gradients", "gradient_predivide_factor", "zero_allow_untested_optimizer",
            "flops_profiler.", "tensorboard.", "wandb.", "csv_monitor.", "comms_logger.", "checkpoint.",
            "communication_data_type", "data_types.", "seq_parallel_communication_data_type",
            "activation_checkpointing."});
  return m.result("DeepSpeed config");
}

// ---- accelerate config (huggingface/accelerate, src/accelerate/commands/config/)
llvm::Expected<LaunchConfig> mapAccelerate(Mapper &m) {
  Entry whole{"(file)", "", Entry::String, 0, {}};
  training(m, whole);
  std::optional<int64_t> world, machines;
  const Entry *procs = m.get("num_processes");
  if (procs && (world = m.integer(*procs)))
    m.set("world-size", std::to_string(*world), *procs);
  if (const Entry *e = m.get("num_machines"); e && (machines = m.integer(*e)) && world) {
    if (*machines < 1 || *world % *machines)
      m.fail(*e, fmt::format("{} does not divide num_processes {} (accelerate's num_processes counts every machine's "
                             "processes)",
                             *machines, *world));
    else
      m.set("gpus-per-node", std::to_string(*world / *machines), *e);
  }
  if (m.failed())
    return m.result("");
  const Entry *dt = m.get("distributed_type");
  std::string type = dt ? llvm::StringRef(dt->value).trim().upper() : "";
  if (type == "MULTI_GPU") {
    m.set("zero", "0", *dt);
  } else if (type == "NO") {
    if (!world)
      m.set("world-size", "1", *dt);
  } else if (type == "DEEPSPEED") {
    if (const Entry *e = m.get("deepspeed_config.zero_stage"))
      if (auto v = m.integer(*e))
        m.set("zero", std::to_string(*v), *e);
  } else if (type == "FSDP") {
    const Entry *version = m.get("fsdp_config.fsdp_version");
    bool fsdp2 = version && version->value == "2";
    const Entry *strat = m.get("fsdp_config.fsdp_sharding_strategy");
    const Entry *reshard = m.get("fsdp_config.fsdp_reshard_after_forward");
    static const std::map<std::string, std::string> byNumber = {
        {"1", "FULL_SHARD"}, {"2", "SHARD_GRAD_OP"}, {"3", "NO_SHARD"}, {"4", "HYBRID_SHARD"},
        {"5", "HYBRID_SHARD_ZERO2"}};
    std::string s = strat ? llvm::StringRef(strat->value).trim().upper() : "FULL_SHARD";
    if (auto it = byNumber.find(s); it != byNumber.end())
      s = it->second;
    const Entry &at = strat ? *strat : *dt;
    if (reshard) {  // FSDP2 spells the strategy as reshard_after_forward
      std::string r = llvm::StringRef(reshard->value).trim().upper();
      s = r == "TRUE" || r == "FULL_SHARD" ? "FULL_SHARD" : r == "FALSE" || r == "SHARD_GRAD_OP" ? "SHARD_GRAD_OP" : r;
    }
    bool hybrid = llvm::StringRef(s).startswith("HYBRID_SHARD");
    if (s == "NO_SHARD") {
      m.set("zero", "0", at);
    } else if (s == "SHARD_GRAD_OP" || s == "HYBRID_SHARD_ZERO2") {
      m.set("zero", "2", at);
    } else if (s == "FULL_SHARD" || s == "HYBRID_SHARD") {
      // FSDP1 is graphlint's --fsdp (--zero 3); FSDP2 is fully_shard over dp-shard.
      if (!fsdp2 || hybrid)
        m.set("zero", "3", at);
      else if (world)
        m.set("dp-shard", std::to_string(*world), at);
      else
        m.warn(at, "FULL_SHARD: without num_processes the dp-shard degree is unknown; give --dp-shard N");
    } else {
      m.warn(at, fmt::format("{}: not a sharding strategy graphlint knows; ignored", shownValue(s)));
    }
    if (hybrid && !m.failed()) {
      if (world && machines) {
        m.set("dp-replicate", std::to_string(*machines), at);
        m.set("dp-shard", std::to_string(*world / *machines), at);
      } else {
        m.warn(at, "HYBRID_SHARD: needs num_processes and num_machines to size the mesh; give --dp-replicate and "
                   "--dp-shard");
      }
    }
    if (const Entry *e = m.get("fsdp_config.fsdp_activation_checkpointing"))
      if (auto b = m.boolean(*e))
        m.set("recompute", *b ? "layer" : "none", *e);
    if (const Entry *e = m.get("fsdp_config.fsdp_offload_params"); e && lower(e->value) == "true")
      m.notModelled(*e, "offloading is ");
  } else if (dt) {
    m.warn(*dt, fmt::format("{}: not a distributed type graphlint models (FSDP, DEEPSPEED, MULTI_GPU, NO); ignored",
                            shownValue(dt->value)));
  }
  if (const Entry *e = m.get("mixed_precision")) {
    std::string p = lower(e->value);
    if (p == "no")
      m.set("precision", "fp32", *e);
    else if (p == "bf16" || p == "fp16")
      m.set("precision", p + "-mixed", *e);
    else if (p == "fp8" && Mapper::accepts("float8", "tensorwise"))
      m.set("float8", "tensorwise", *e);
    else
      m.notModelled(*e, p == "fp8" ? "float8 training is " : "this precision is ");
  }
  if (const Entry *e = m.get("dynamo_config.dynamo_backend")) {
    std::string b = lower(e->value);
    if (b == "inductor")
      m.set("backend", "inductor", *e);
    else if (b == "no" || b == "eager")
      m.set("backend", "eager", *e);
    else
      m.notModelled(*e, "this dynamo backend is ");
  }
  if (const Entry *e = m.get("deepspeed_config.gradient_accumulation_steps"); e && e->value != "1")
    m.warn(*e, fmt::format("{}: noted; graphlint predicts one micro-batch's step", shownValue(e->value)));
  for (const char *k : {"deepspeed_config.offload_optimizer_device", "deepspeed_config.offload_param_device"})
    if (const Entry *e = m.get(k); e && lower(e->value) != "none")
      m.notModelled(*e, "offloading is ");
  if (const Entry *e = m.get("deepspeed_config.deepspeed_config_file"))
    m.warn(*e, "names a DeepSpeed config: give that file to --launch-config to read it; ignored");
  m.finish({"compute_environment", "machine_rank", "main_process_ip", "main_process_port", "main_training_function",
            "rdzv_backend", "same_network", "tpu_env", "tpu_use_cluster", "tpu_use_sudo", "use_cpu", "gpu_ids",
            "debug", "enable_cpu_affinity", "downcast_bf16", "fsdp_config.", "deepspeed_config.", "dynamo_config.",
            "megatron_lm_config.", "ipex_config.", "mpirun_config."});
  return m.result("accelerate config");
}

// ---- torchtitan job config TOML (pytorch/torchtitan, torchtitan/config/job_config.py;
// before mid-2025 torchtitan/config_manager.py; [training] held the degrees before [parallelism])
llvm::Expected<LaunchConfig> mapTorchtitan(Mapper &m) {
  Entry whole{"(file)", "", Entry::String, 0, {}};
  training(m, whole);
  auto either = [&](const char *name) -> const Entry * {
    const Entry *e = m.get(std::string("parallelism.") + name);
    const Entry *old = m.get(std::string("training.") + name);
    return e ? e : old;
  };
  const Entry *shard = either("data_parallel_shard_degree");
  for (auto [name, key] : {std::pair{"data_parallel_replicate_degree", "dp-replicate"},
                           {"tensor_parallel_degree", "tp"},
                           {"pipeline_parallel_degree", "pp"},
                           {"context_parallel_degree", "cp"},
                           {"expert_parallel_degree", "ep"}}) {
    if (const Entry *e = either(name))
      if (auto v = m.integer(*e))
        m.set(key, std::to_string(*v), *e);
  }
  if (shard)
    if (auto v = m.integer(*shard))
      m.set("dp-shard", std::to_string(*v), *shard);
  if (const Entry *e = either("pipeline_parallel_schedule")) {
    static const std::map<std::string, std::string> schedules = {
        {"gpipe", "gpipe"}, {"1f1b", "1f1b"}, {"interleaved1f1b", "interleaved-1f1b"}, {"zbvzerobubble", "zbv"}};
    if (auto it = schedules.find(lower(e->value)); it != schedules.end())
      m.set("pp-schedule", it->second, *e);
    else
      m.notModelled(*e, "this schedule is ");
  }
  if (const Entry *e = either("pipeline_parallel_split_points"); e && !e->items.empty())
    m.set("pp-split-points", llvm::join(e->items, ","), *e);
  if (const Entry *e = either("enable_async_tensor_parallel"))
    if (auto b = m.boolean(*e))
      m.set("async-tp", *b ? "true" : "false", *e);
  if (const Entry *e = either("fsdp_reshard_after_forward"); e && lower(e->value) != "default")
    m.notModelled(*e);
  std::optional<int64_t> batch;
  const Entry *local = m.get("training.local_batch_size");
  const Entry *older = m.get("training.batch_size");
  if (const Entry *e = local ? local : older)
    if ((batch = m.integer(*e)))
      m.set("dims", fmt::format("batch={}", *batch), *e);
  if (const Entry *e = m.get("training.seq_len"))
    if (auto v = m.integer(*e))
      m.set("dims", fmt::format("seq={}", *v), *e);
  if (const Entry *e = either("pipeline_parallel_microbatch_size")) {
    auto mb = m.integer(*e);
    if (mb && batch && *mb > 0 && *batch % *mb == 0)
      m.set("microbatches", std::to_string(*batch / *mb), *e);
    else if (mb)
      m.warn(*e, fmt::format("{}: needs a local batch it divides to count the micro-batches; ignored", *mb));
  }
  if (const Entry *e = m.get("training.global_batch_size"); e && e->value != "-1")
    m.warn(*e, fmt::format("{}: noted; gradient accumulation is not modelled, graphlint predicts one local batch's step",
                           shownValue(e->value)));
  if (const Entry *e = m.get("training.mixed_precision_param")) {
    std::string p = lower(e->value);
    if (p == "bfloat16")
      m.set("precision", "bf16-mixed", *e);
    else if (p == "float16")
      m.set("precision", "fp16-mixed", *e);
    else if (p == "float32")
      m.set("precision", "fp32", *e);
    else
      m.notModelled(*e, "this dtype is ");
  }
  if (const Entry *e = m.get("training.mixed_precision_reduce"); e && lower(e->value) != "float32")
    m.notModelled(*e, "a reduce dtype other than float32 is ");
  if (const Entry *e = m.get("training.enable_cpu_offload"); e && lower(e->value) == "true")
    m.notModelled(*e, "offloading is ");
  if (const Entry *e = m.get("activation_checkpoint.mode")) {
    std::string mode = lower(e->value);
    if (mode == "none" || mode == "full") {
      m.set("recompute", mode == "none" ? "none" : "layer", *e);
    } else if (mode == "selective") {
      const Entry *opt = m.get("activation_checkpoint.selective_ac_option");
      std::string o = opt ? lower(opt->value) : "2";
      std::string want = o == "op" ? "selective-op" : "selective-layer=" + o;
      if (Mapper::accepts("recompute", want))
        m.set("recompute", want, opt ? *opt : *e);
      else
        m.warn(opt ? *opt : *e,
               fmt::format("selective ({}): selective checkpointing is not modelled yet (--recompute takes {}); "
                           "the recompute value stays as the other layers set it",
                           shownValue(o), recomputeChoices()));
    } else {
      m.notModelled(*e, "this mode is ");
    }
  }
  if (const Entry *e = m.get("compile.enable")) {
    if (auto b = m.boolean(*e))
      m.set("backend", *b ? "inductor" : "eager", *e);
  } else if (const Entry *old = m.get("training.compile")) {
    if (auto b = m.boolean(*old))
      m.set("backend", *b ? "inductor" : "eager", *old);
  }
  const Entry *converters = m.get("model.converters");
  bool float8 = converters && llvm::is_contained(converters->items, "float8");
  const Entry *oldFloat8 = m.get("float8.enable_float8_linear");
  if (oldFloat8 && lower(oldFloat8->value) == "true")
    float8 = true;
  if (float8) {
    const Entry *recipe = m.get("float8.recipe_name");
    std::string r = recipe ? lower(recipe->value) : "tensorwise";
    const Entry &at = converters ? *converters : *oldFloat8;
    if (Mapper::accepts("float8", r))
      m.set("float8", r, at);
    else
      m.warn(at, fmt::format("float8 ({}): not a float8 recipe graphlint models (tensorwise, rowwise); ignored",
                             shownValue(r)));
    // torchtitan's tensorwise-only FSDP2 options (ignored with a recipe_name
    // other than tensorwise there; graphlint refuses them with rowwise).
    if (const Entry *e = m.get("float8.enable_fsdp_float8_all_gather"))
      if (auto b = m.boolean(*e))
        m.set("float8-all-gather", *b ? "true" : "false", *e);
    if (const Entry *e = m.get("float8.precompute_float8_dynamic_scale_for_fsdp"))
      if (auto b = m.boolean(*e))
        m.set("float8-precompute-scale", *b ? "true" : "false", *e);
  }
  if (const Entry *e = m.get("optimizer.name")) {
    std::string o = lower(e->value);
    if (o == "adam" || o == "adamw" || o == "sgd")
      m.set("optimizer", o, *e);
    else
      m.notModelled(*e, "this optimizer is ");
  }
  m.finish({"job.", "profiling.", "metrics.", "model.", "optimizer.", "lr_scheduler.", "checkpoint.", "comm.",
            "experimental.", "fault_tolerance.", "validation.", "memory_estimation.", "mx.", "quantize.", "compile.",
            "float8.", "activation_checkpoint.", "training.dataset", "training.dataset_path", "training.steps",
            "training.max_norm", "training.seed", "training.deterministic", "training.warmup_steps",
            "training.gc_freq", "training.enable_cpu_offload", "training.data_parallel_degree",
            "parallelism.disable_loss_parallel", "parallelism.enable_compiled_autograd",
            "parallelism.pipeline_parallel_layers_per_stage", "parallelism.pipeline_parallel_first_stage_less_layers",
            "parallelism.pipeline_parallel_last_stage_less_layers", "parallelism.pipeline_parallel_schedule_csv",
            "parallelism.context_parallel_rotate_method", "parallelism.expert_tensor_parallel_degree"});
  return m.result("torchtitan job config");
}

bool hasKey(const std::vector<Entry> &es, llvm::StringRef prefix) {
  return llvm::any_of(es, [&](const Entry &e) {
    return e.key == prefix || llvm::StringRef(e.key).startswith((prefix + ".").str());
  });
}

}  // namespace

llvm::Expected<LaunchConfig> parseLaunchConfig(llvm::StringRef text, const std::string &path) {
  llvm::StringRef ext = llvm::StringRef(path).rsplit('.').second;
  std::string e = ext.lower();
  std::vector<Entry> entries;
  if (e == "toml") {
    auto t = parseToml(text, path);
    if (!t)
      return t.takeError();
    Mapper m(path, std::move(*t));
    return mapTorchtitan(m);
  }
  if (e == "json") {
    JsonRefusal why;
    auto json = parseJsonInput(text, path, {}, &why);
    if (!json && why == JsonRefusal::Limit)
      return failure(llvm::toString(json.takeError()));
    if (!json)
      return failure(path + ": invalid JSON: " + oneLine(llvm::toString(json.takeError())));
    if (!json->getAsObject())
      return failure(path + ": a launch config must be a JSON object");
    flattenJson(*json, "", entries);
  } else if (e == "yaml" || e == "yml") {
    if (llvm::Error err = checkNestingDepth(text, TextSyntax::Yaml, path))
      return std::move(err);
    auto y = YamlFlattener(text, path).read();
    if (!y)
      return y.takeError();
    entries = std::move(*y);
  } else {
    return failure(path + ": not a launch config graphlint reads: expected .json (DeepSpeed or accelerate), "
                          ".yaml/.yml (accelerate) or .toml (torchtitan)");
  }
  bool accelerate = hasKey(entries, "distributed_type") || hasKey(entries, "compute_environment");
  bool deepspeed = hasKey(entries, "zero_optimization") || hasKey(entries, "train_micro_batch_size_per_gpu") ||
                   hasKey(entries, "train_batch_size");
  Mapper m(path, std::move(entries));
  if (accelerate)
    return mapAccelerate(m);
  if (deepspeed || e == "json")
    return mapDeepSpeed(m);
  return failure(path + ": not an accelerate config (no distributed_type) nor a DeepSpeed config "
                        "(no zero_optimization or train_micro_batch_size_per_gpu)");
}

llvm::Expected<LaunchConfig> loadLaunchConfig(const std::string &path) {
  auto text = readInputFile(path, InputKind::Config);
  if (!text)
    return text.takeError();
  return parseLaunchConfig(*text, path);
}

}  // namespace graphlint
