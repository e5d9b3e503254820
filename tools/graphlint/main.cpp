// The graphlint command line: lint (default), inspect, rules, rule, config, verify.
// Exit codes: 0 clean, 1 a finding at or above --fail-on, 2 usage error or a
// file that could not be linted.
#include "graphlint/ir/Importer.h"
#include "graphlint/ir/Printer.h"
#include "graphlint/lint/Baseline.h"
#include "graphlint/lint/Config.h"
#include "graphlint/lint/Driver.h"
#include "graphlint/lint/FusionPlan.h"
#include "graphlint/lint/HardwareProfile.h"
#include "graphlint/lint/OutputFiles.h"
#include "graphlint/lint/Reporters.h"
#include "graphlint/lint/Rule.h"
#include "graphlint/verify/Comparison.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/Threading.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

using namespace graphlint;

namespace {

constexpr const char *kHelp = R"(graphlint - static pre-launch linter for deep-learning graphs

USAGE
  graphlint [lint] [OPTIONS] FILE...     lint models: ONNX, PyTorch FX graphs (*.fx.json)
                                         written by tools/graphlint-export, or
                                         torch.export.save archives (*.pt2, docs/pt2.md);
                                         the format is recognised by content
  graphlint inspect [OPTIONS] FILE       print a model's structure, types and parameters
  graphlint rules [--format text|json]   list every rule
  graphlint rule CODE|NAME               print a rule's documentation
  graphlint config --dump FILE [OPTIONS] print the effective configuration for FILE
  graphlint verify [OPTIONS] FILE        run the model once and print predicted vs
                                         measured kernels, time and peak memory
  graphlint --help | --version      (--version: the version, and the FX format versions read)

LINT OPTIONS
  --format text|gcc|json|sarif|github
                           output format (default text). gcc prints
                           `path:line:col: severity: message [CODE name]` where
                           path:line is the user's source when the exporter
                           recorded it, else the model file and the 1-based node
                           index; sarif is SARIF 2.1.0 (GitHub code scanning);
                           github prints Actions workflow commands
                           (::error file=...,line=...,title=...::message);
                           all are documented in docs/output-formats.md
  -o, --output FILE        write the report to FILE instead of stdout (exit 2
                           if FILE cannot be written)
  --statistics             text format: after the report, the number of
                           findings per rule, most frequent first
  -q, --quiet              text format: print only fatal-file lines and the
                           summary line (other formats ignore it)
  --no-group               one finding per node: do not fold findings of one
                           rule and cause at one source line (a layer's line run
                           in 24 layers) into one with the list of modules
  --fail-on error|warning|note|never
                           lowest severity that makes the exit code 1 (default
                           error, or the config file's fail-on)
  --exit-zero              exit 0 even when findings exist (unreadable files still exit 2)
  -D, --dim NAME=SIZE      bind a symbolic dimension (repeatable), e.g. -D batch=8;
                           size expressions over it (batch*seq) are rescaled. A NAME
                           that binds nothing in a file is a warning on stderr
                           (`FILE: warning: -D NAME=N binds nothing: ...`) naming the
                           file's size symbols and inputs; the lint goes on
  -j, --jobs N             lint N files in parallel (default: number of cores);
                           with several files and stderr on a terminal, a
                           progress line shows on stderr (not with --quiet)
  --color auto|always|never
                           colour text output (default auto: on a TTY unless NO_COLOR is set)
  --no-color               same as --color never
  --backend inductor|inductor-cpu|tensorrt|ort-cpu|ort-cuda|eager
                           fusion legality the planner applies (default inductor;
                           ort = ort-cpu); docs/fusion.md describes each backend
  --target GPU             hardware profile for GL141/GL142 and the memory
                           capacity of GL201 (default H100-SXM):
                           V100, A100-40GB, A100-80GB, H100-SXM, H200, L4,
                           RTX-4090, or one from hardware.yaml (docs/hardware.md)
  --fusion                 text format: after each file's findings, its fusion
                           groups and a summary line (json always has a `fusion`
                           section; gcc ignores the flag)
  --emit-dot FILE          write the fusion plan as Graphviz DOT to FILE; with
                           several models, one file each: FILE's stem + '.' +
                           the model's stem, e.g. out.dot -> out.resnet18.dot
  --cost                   text format: after each file's findings, its predicted
                           step: forward, backward, optimizer, communication and
                           step time, MFU, collectives and gradient buckets (json
                           always has `compute` and `communication` sections);
                           docs/cost-model.md
  --memory                 text format: after the report, each model's predicted
                           memory per GPU (params, grads, optimizer state,
                           activations, peak allocated/reserved, capacity,
                           headroom) and the largest tensors at the peak (json
                           always has a `memory` section); docs/memory.md
  --memory-plot FILE.svg   draw live memory over the step as an SVG chart
                           (phases shaded, peak and device capacity marked);
                           several models: FILE's stem + '.' + the model's stem

CONFIGURATION (docs/configuration.md)
  --config FILE            use FILE instead of the nearest .graphlint.yaml found
                           by walking up from each model file; the command line
                           overrides the file, the file the defaults
  --select RULES           run only these rules (comma-separated codes, names,
                           prefixes like GL1, or ALL); replaces the file's select
  --extend-select RULES    add rules to the selection
  --ignore RULES           remove rules from the selection
  --report-unused-ignores  report suppressions that suppress nothing (GL005):
                           graphlint.ignore node metadata, per-file-ignores and
                           per-node-ignores entries
  --baseline FILE          drop findings FILE accepts; only new ones count
                           toward the exit code; stale entries go to stderr
  --write-baseline FILE    write every finding to FILE as a baseline and exit 0

TRAINING SETUP (for the cost analyses; config key setup:)
  --train                  a training step (forward, backward, optimizer)
  --optimizer sgd|momentum|adam|adamw      (default adam)
  --precision fp32|tf32|fp16-mixed|bf16-mixed|bf16   (default fp32)
  --zero 0|1|2|3           ZeRO stage (default 0); --fsdp is --zero 3
  --world-size N           data-parallel ranks (default 1)
  --recompute none|layer|sqrt
                           activation checkpointing (default none): layer
                           (alias full) checkpoints each repeated layer, as
                           torch.utils.checkpoint around every block; sqrt
                           cuts the graph into ~sqrt(n) segments
  --gpus-per-node G        ranks per node (default 8)
  --intra NAME, --inter NAME
                           interconnect inside / between nodes (docs/hardware.md)

INSPECT OPTIONS
  --format text|json       text summary (default) or the JSON contract
  --print-ir               print every node with its inferred types
  -D, --dim NAME=SIZE      bind a symbolic dimension before shape completion
  --backend, --fusion, --emit-dot FILE
                           as for lint: the fusion plan (text: appended to the
                           summary; json: a `fusion` field) and its DOT drawing

VERIFY OPTIONS (docs/verify.md)
  --device cuda|cpu        where to run (default cuda: cuBLAS/cuDNN/own kernels
                           under CUPTI; exit 2 with one line when no CUDA device
                           is available); cpu is the plain C++ reference backend
  --random-weights         random parameters instead of the file's (needed for
                           weightless exports such as models/*.onnx)
  -D, --dim NAME=SIZE      bind symbolic dims: inputs need static shapes
  --target GPU             the hardware profile the predictions assume
  --format text|json       side-by-side table (default) or a JSON `verify` section
  -o, --output FILE        write the comparison to FILE
  exit 0 when every node ran, 1 when the run stopped before an unsupported op
  (what was measured so far is still shown), 2 on bad input or no device

EXIT CODES
  0  no finding at or above --fail-on
  1  at least one finding at or above --fail-on
  2  usage error, an invalid config or baseline file, or a file could not
     be read or is not a model

Docs: docs/ (one page per rule in docs/rules/, output formats in docs/output-formats.md,
configuration, suppressions and baselines in docs/configuration.md,
the FX graph format and graphlint-export in docs/fx-format.md).
)";

int usage(const std::string &msg) {
  llvm::errs() << "graphlint: " << msg << "\n" << "Try 'graphlint --help'.\n";
  return 2;
}

struct Args {
  std::string command = "lint";
  std::vector<std::string> files;
  std::string format = "text";
  std::string color = "auto";
  bool exitZero = false;
  bool printIr = false;
  bool dump = false;
  unsigned jobs = 0;
  bool fusion = false;
  bool cost = false;
  std::string emitDot;
  std::string output;
  bool statistics = false;
  bool quiet = false;
  bool noGroup = false;
  std::string configFile;      // --config: overrides discovery
  std::string baseline;        // --baseline
  std::string writeBaseline;   // --write-baseline
  /// graphlint verify: --device cuda|cpu and --random-weights.
  struct { std::string device = "cuda"; bool randomWeights = false; } verify;
  /// Everything the command line says that a config file can say too; it is
  /// the last layer, so it wins.
  ConfigLayer cli;
  bool memory = false;
  std::string memoryPlot;
  std::vector<std::string> flagsSeen;  // canonical names, for the per-command check
};

std::optional<std::string> parseDim(const std::string &spec, Args &a) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return "--dim expects NAME=SIZE, got '" + spec + "'";
  std::string name = spec.substr(0, eq), val = spec.substr(eq + 1);
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(val.c_str(), &end, 10);
  if (val.empty() || *end || errno || v < 0)
    return "--dim " + name + ": '" + val + "' is not a non-negative integer";
  a.cli.dims[name] = v;
  return std::nullopt;
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

std::optional<std::string> parseUnsigned(const std::string &flag, const std::string &v, unsigned lo, unsigned hi,
                                         std::optional<unsigned> &out) {
  char *end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || n < lo || n > hi)
    return fmt::format("{} expects an integer from {} to {}, got '{}'", flag, lo, hi, v);
  out = static_cast<unsigned>(n);
  return std::nullopt;
}

template <typename E, typename FromName>
std::optional<std::string> parseChoice(const std::string &flag, const std::string &v, FromName fromName,
                                       const char *allowed, std::optional<E> &out) {
  out = fromName(v);
  if (!out)
    return flag + " must be one of " + allowed + ", got '" + v + "'";
  return std::nullopt;
}

// Every subcommand takes only the flags it reads: `graphlint rules
// --memory-plot x.svg` is an error, not a silent no-op.
std::string canonicalFlag(const std::string &arg) {
  if (arg == "-D") return "--dim";
  if (arg == "-o") return "--output";
  if (arg == "-q") return "--quiet";
  if (arg == "-j") return "--jobs";
  if (arg == "--no-color") return "--color";
  if (arg == "--fsdp") return "--zero";
  return arg;
}

const std::set<std::string> &setupFlags() {
  static const std::set<std::string> f{"--train", "--optimizer", "--precision", "--zero", "--world-size",
                                       "--recompute", "--gpus-per-node", "--intra", "--inter", "--target",
                                       "--backend", "--dim", "--config"};
  return f;
}

const std::set<std::string> &selectionFlags() {
  static const std::set<std::string> f{"--select", "--extend-select", "--ignore", "--report-unused-ignores",
                                       "--fail-on", "--baseline"};
  return f;
}

bool commandAccepts(const std::string &command, const std::string &flag) {
  if (command == "lint")
    return flag != "--print-ir" && flag != "--dump" && flag != "--device" && flag != "--random-weights";
  if (command == "inspect")  // it resolves the same configuration and setup as lint
    return flag == "--format" || flag == "--print-ir" || flag == "--fusion" || flag == "--emit-dot" ||
           setupFlags().count(flag);
  if (command == "rules")
    return flag == "--format";
  if (command == "config")
    return flag == "--dump" || setupFlags().count(flag) || selectionFlags().count(flag);
  if (command == "verify")
    return flag == "--device" || flag == "--random-weights" || flag == "--format" || flag == "--output" ||
           setupFlags().count(flag);
  return false;  // rule CODE takes none
}

std::string commandFlagsHelp(const std::string &command) {
  if (command == "inspect")
    return "it takes --format, --print-ir, --fusion, --emit-dot and the training-setup options";
  if (command == "rules")
    return "it takes --format text|json";
  if (command == "config")
    return "it takes --dump and the configuration and training-setup options";
  if (command == "verify")
    return "it takes --device, --random-weights, --format, -o and the training-setup options";
  if (command == "rule")
    return "it takes one CODE or NAME and no options";
  return "see 'graphlint --help'";
}

std::optional<std::string> parseArgs(int argc, char **argv, Args &a) {
  a.cli.origin = "command line";
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  if (!args.empty() && (args[0] == "lint" || args[0] == "inspect" || args[0] == "rules" || args[0] == "rule" ||
                        args[0] == "config" || args[0] == "verify")) {
    a.command = args[0];
    ++i;
  }
  auto value = [&](const std::string &flag, std::string &out) -> std::optional<std::string> {
    if (i + 1 >= args.size())
      return flag + " needs a value";
    out = args[++i];
    return std::nullopt;
  };
  bool endOfOptions = false;
  for (; i < args.size(); ++i) {
    std::string arg = args[i];
    if (endOfOptions || arg.empty() || arg[0] != '-' || arg == "-") {
      a.files.push_back(arg);
      continue;
    }
    std::string inlineVal;
    bool hasInline = false;
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        inlineVal = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        hasInline = true;
      }
    } else if (arg.size() > 2 && (arg.rfind("-D", 0) == 0 || arg.rfind("-j", 0) == 0)) {
      inlineVal = arg.substr(2);
      arg = arg.substr(0, 2);
      hasInline = true;
    }
    auto take = [&](std::string &out) -> std::optional<std::string> {
      if (hasInline) {
        out = inlineVal;
        return std::nullopt;
      }
      return value(arg, out);
    };
    auto takeFile = [&](std::string &out) -> std::optional<std::string> {
      auto err = take(out);
      if (!err && out.empty())
        err = arg + " needs a file name";
      return err;
    };
    std::optional<std::string> err;
    std::string v;
    ConfigLayer &cli = a.cli;
    if (arg == "--") {
      endOfOptions = true;
    } else if (arg == "--format") {
      err = take(a.format);
    } else if (arg == "--fail-on") {
      if (!(err = take(v))) {
        if (v == "never")
          cli.failOn = std::optional<Severity>();
        else if (auto s = severityFromName(v))
          cli.failOn = s;
        else
          err = "--fail-on must be one of error, warning, note, never";
      }
    } else if (arg == "--color") {
      err = take(a.color);
    } else if (arg == "--no-color") {
      a.color = "never";
    } else if (arg == "--exit-zero") {
      a.exitZero = true;
    } else if (arg == "--print-ir") {
      a.printIr = true;
    } else if (arg == "--dump") {
      a.dump = true;
    } else if (arg == "--statistics") {
      a.statistics = true;
    } else if (arg == "-q" || arg == "--quiet") {
      a.quiet = true;
    } else if (arg == "--no-group") {
      a.noGroup = true;
    } else if (arg == "-o" || arg == "--output") {
      err = takeFile(a.output);
    } else if (arg == "--config") {
      err = takeFile(a.configFile);
    } else if (arg == "--baseline") {
      err = takeFile(a.baseline);
    } else if (arg == "--write-baseline") {
      err = takeFile(a.writeBaseline);
    } else if (arg == "--select") {
      std::vector<std::string> codes;
      if (!(err = take(v)) && !(err = parseRuleList(arg, v, codes)))
        cli.select = codes;
    } else if (arg == "--extend-select") {
      if (!(err = take(v)))
        err = parseRuleList(arg, v, cli.extendSelect);
    } else if (arg == "--ignore") {
      if (!(err = take(v)))
        err = parseRuleList(arg, v, cli.ignore);
    } else if (arg == "--report-unused-ignores") {
      cli.reportUnusedIgnores = true;
    } else if (arg == "--memory") {
      a.memory = true;
    } else if (arg == "--memory-plot") {
      err = takeFile(a.memoryPlot);
    } else if (arg == "--fusion") {
      a.fusion = true;
    } else if (arg == "--cost") {
      a.cost = true;
    } else if (arg == "--backend") {
      if (!(err = take(v)))
        err = parseChoice(arg, v, fusionBackendFromName, fusionBackendChoices(), cli.backend);
    } else if (arg == "--target") {
      if (!(err = take(v))) {
        auto profile = resolveHardwareTarget(v);
        if (!profile)
          err = "--target: " + llvm::toString(profile.takeError());
        else
          cli.target = profile->name;  // canonical: "a100-80g" reports as A100-80GB
      }
    } else if (arg == "--train") {
      cli.train = true;
    } else if (arg == "--optimizer") {
      if (!(err = take(v)))
        err = parseChoice(arg, v, optimizerFromName, "sgd, momentum, adam, adamw", cli.optimizer);
    } else if (arg == "--precision") {
      if (!(err = take(v)))
        err = parseChoice(arg, v, precisionFromName, "fp32, tf32, fp16-mixed, bf16-mixed, bf16", cli.precision);
    } else if (arg == "--zero") {
      if (!(err = take(v)))
        err = parseUnsigned(arg, v, 0, 3, cli.zero);
    } else if (arg == "--fsdp") {
      cli.zero = 3;
    } else if (arg == "--world-size") {
      if (!(err = take(v)))
        err = parseUnsigned(arg, v, 1, 1u << 20, cli.worldSize);
    } else if (arg == "--gpus-per-node") {
      if (!(err = take(v)))
        err = parseUnsigned(arg, v, 1, 1024, cli.gpusPerNode);
    } else if (arg == "--recompute") {
      if (!(err = take(v)))
        err = parseChoice(arg, v, recomputeFromName, recomputeChoices(), cli.recompute);
    } else if (arg == "--intra" || arg == "--inter") {
      if (!(err = take(v))) {
        if (auto link = resolveInterconnect(v); !link)
          err = arg + ": " + llvm::toString(link.takeError());
        else
          (arg == "--intra" ? cli.intra : cli.inter) = v;
      }
    } else if (arg == "--device" || arg == "--random-weights") {
      if (arg == "--random-weights")
        a.verify.randomWeights = true;
      else if (!(err = take(a.verify.device)) && a.verify.device != "cuda" && a.verify.device != "cpu")
        err = "--device must be cuda or cpu, got '" + a.verify.device + "'";
    } else if (arg == "--emit-dot") {
      err = takeFile(a.emitDot);
    } else if (arg == "-D" || arg == "--dim") {
      if (!(err = take(v)))
        err = parseDim(v, a);
    } else if (arg == "-j" || arg == "--jobs") {
      std::optional<unsigned> jobs;
      if (!(err = take(v)) && !(err = parseUnsigned("--jobs", v, 1, 1024, jobs)))
        a.jobs = *jobs;
    } else {
      err = "unknown option '" + arg + "'";
    }
    if (err)
      return err;
    if (arg != "--")
      a.flagsSeen.push_back(canonicalFlag(arg));
  }
  for (const std::string &flag : a.flagsSeen)
    if (!commandAccepts(a.command, flag))
      return fmt::format("{} is not an option of 'graphlint {}' ({})", flag, a.command, commandFlagsHelp(a.command));
  return std::nullopt;
}

/// Loads config files once each and resolves every model file's Config:
/// --config FILE for all files, else the nearest .graphlint.yaml above each.
class ConfigResolver {
public:
  explicit ConfigResolver(const Args &a) : a_(a) {}

  /// Fails (one line naming the config file and the problem) on a config
  /// file that cannot be read or parsed.
  llvm::Expected<Config> forFile(const std::string &model) {
    std::string path = a_.configFile.empty() ? findConfigFile(model) : a_.configFile;
    std::vector<const ConfigLayer *> layers;
    if (!path.empty()) {
      auto it = loaded_.find(path);
      if (it == loaded_.end()) {
        auto layer = loadConfigFile(path);
        if (!layer)
          return layer.takeError();
        it = loaded_.emplace(path, std::make_unique<ConfigLayer>(std::move(*layer))).first;
        order_.push_back(it->second.get());
      }
      layers.push_back(it->second.get());
    }
    layers.push_back(&a_.cli);
    return resolveConfig(layers, model);
  }

  /// The config files loaded so far, in first-use order.
  const std::vector<const ConfigLayer *> &loaded() const { return order_; }

private:
  const Args &a_;
  std::map<std::string, std::unique_ptr<ConfigLayer>> loaded_;
  std::vector<const ConfigLayer *> order_;
};

int runRules(const Args &a) {
  if (a.format == "json") {
    llvm::json::Array arr;
    for (const Rule *r : allRules()) {
      const RuleInfo &i = r->info();
      arr.push_back(llvm::json::Object{{"code", std::string(i.code)},
                                       {"name", std::string(i.name)},
                                       {"severity", std::string(severityName(i.severity))},
                                       {"summary", std::string(i.summary)}});
    }
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(arr))) << "\n";
    return 0;
  }
  if (a.format != "text")
    return usage("rules: --format must be text or json");
  for (const Rule *r : allRules()) {
    const RuleInfo &i = r->info();
    llvm::outs() << fmt::format("{}  {:<26} {:<8} {}\n", i.code, i.name, severityName(i.severity), i.summary);
  }
  return 0;
}

int runRule(const Args &a) {
  if (a.files.size() != 1)
    return usage("rule expects one CODE or NAME, e.g. 'graphlint rule GL001'");
  const Rule *r = findRule(a.files[0]);
  if (!r)
    return usage("no rule named '" + a.files[0] + "' (see 'graphlint rules')");
  std::string_view doc = ruleDoc(r->info().code);
  if (doc.empty())
    llvm::outs() << r->info().code << " " << r->info().name << ": " << r->info().summary << "\n";
  else
    llvm::outs() << doc;
  return 0;
}

// --emit-dot FILE with several models: FILE's stem + "." + model stem +
// FILE's extension, next to FILE; a repeated model stem gets "-2", "-3", ...
std::vector<std::string> dotPaths(const std::string &base, const std::vector<std::string> &models) {
  if (models.size() == 1)
    return {base};
  llvm::SmallString<256> dir(base);
  llvm::sys::path::remove_filename(dir);
  std::string stem = llvm::sys::path::stem(base).str(), ext = llvm::sys::path::extension(base).str();
  std::map<std::string, unsigned> seen;
  std::vector<std::string> out;
  for (const std::string &m : models) {
    std::string ms = llvm::sys::path::stem(m).str();
    unsigned n = ++seen[ms];
    std::string name = stem + "." + ms + (n > 1 ? "-" + std::to_string(n) : "") + ext;
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    out.push_back(std::string(p));
  }
  return out;
}

bool writeOutputFile(const std::string &path, llvm::function_ref<void(llvm::raw_ostream &)> render) {
  if (llvm::Error e = writeOutputAtomically(path, render)) {
    llvm::errs() << "graphlint: " << llvm::toString(std::move(e)) << "\n";
    return false;
  }
  return true;
}

// The files this run reads, for refusing outputs that would overwrite them.
OutputGuard inputsOf(const Args &a, const std::vector<std::string> &configFiles) {
  OutputGuard g;
  for (const std::string &f : a.files)
    g.addInput(f, "model");
  for (const std::string &c : configFiles)
    g.addInput(c, "config file");
  g.addInput(a.configFile, "config file");
  g.addInput(a.baseline, "baseline");
  g.addInput(HardwareCatalog::instance().dataFile(), "hardware file");
  return g;
}

// Every output path checked before any is opened; prints the refusal.
bool outputsAllowed(const OutputGuard &g, const std::vector<std::pair<std::string, const char *>> &outputs) {
  for (const auto &[path, flag] : outputs) {
    // Rewriting the baseline being applied is an update, not a loss: it was
    // read whole before, and the new one replaces it atomically.
    if (llvm::Error e = g.check(path, flag, std::string(flag) == "--write-baseline" ? "baseline" : "")) {
      llvm::errs() << "graphlint: " << llvm::toString(std::move(e)) << "\n";
      return false;
    }
  }
  return true;
}

bool writeDot(const std::string &path, const FusionSummary &s, const std::string &title) {
  return writeOutputFile(path, [&](llvm::raw_ostream &os) { renderDot(s, title, os); });
}

bool writeMemoryPlot(const std::string &path, const MemorySummary &s, const std::string &title) {
  return writeOutputFile(path, [&](llvm::raw_ostream &os) { renderMemorySvg(s, title, os); });
}

// FILE's configuration, and FILE imported with its dim bindings; on failure
// prints the one-line error and returns nullptr.
std::unique_ptr<Model> importConfigured(const Args &a, std::optional<Config> &config) {
  auto c = ConfigResolver(a).forFile(a.files[0]);
  if (!c) {
    llvm::errs() << "graphlint: " << llvm::toString(c.takeError()) << "\n";
    return nullptr;
  }
  config = std::move(*c);
  ImportOptions io;
  io.dims = config->setup.dims;
  auto model = importModelFile(a.files[0], io);
  if (!model) {
    llvm::errs() << a.files[0] << ": error: " << llvm::toString(model.takeError()) << "\n";
    return nullptr;
  }
  for (const std::string &w : (*model)->setupWarnings)
    llvm::errs() << a.files[0] << ": warning: " << w << "\n";
  return std::move(*model);
}

int runInspect(const Args &a) {
  if (a.files.size() != 1)
    return usage("inspect expects exactly one FILE");
  if (a.format != "text" && a.format != "json")
    return usage("inspect: --format must be text or json");
  std::optional<Config> config;
  std::unique_ptr<Model> model = importConfigured(a, config);
  if (!model)
    return 2;
  if (!a.emitDot.empty() && !outputsAllowed(inputsOf(a, {config->file}), {{a.emitDot, "--emit-dot"}}))
    return 2;
  FusionSummary fusion;
  if (a.fusion || !a.emitDot.empty())
    fusion = summariseFusion(*model, FusionPlan(*model, config->setup.backend), !a.emitDot.empty());
  if (a.format == "json") {
    llvm::json::Value v = inspectJson(*model);
    if (a.fusion)
      v.getAsObject()->insert({"fusion", fusionToJson(fusion)});
    llvm::outs() << llvm::formatv("{0:2}", v) << "\n";
  } else if (a.printIr) {
    printModel(*model, llvm::outs());
  } else {
    renderInspectText(*model, llvm::outs());
  }
  if (a.fusion && a.format != "json")
    renderFusionText(fusion, a.files[0], llvm::outs());
  llvm::outs().flush();
  if (!a.emitDot.empty() && !writeDot(a.emitDot, fusion, a.files[0]))
    return 2;
  return 0;
}

// graphlint verify: the device is checked first, so that a machine without
// one answers in one line before any work.
int runVerify(const Args &a) {
  if (a.files.size() != 1)
    return usage("verify expects exactly one FILE");
  if (a.format != "text" && a.format != "json")
    return usage("verify: --format must be text or json");
  auto backend = a.verify.device == "cpu" ? llvm::Expected<std::unique_ptr<verify::Backend>>(verify::makeCpuBackend())
                                          : verify::makeCudaBackend();
  if (!backend) {
    llvm::errs() << "graphlint: verify: " << llvm::toString(backend.takeError()) << "\n";
    return 2;
  }
  std::optional<Config> config;
  std::unique_ptr<Model> model = importConfigured(a, config);
  if (!model)
    return 2;
  // External data the importer refused to follow (absolute, '..', a symlink
  // out of the folder, a FIFO or device) is never read: not even with
  // --random-weights, since Constant attributes are still loaded.
  for (const ImportProblem &p : model->problems)
    if (p.refusedPath) {
      llvm::errs() << a.files[0] << ": error: verify: refusing to run on a model with unsafe external data: "
                   << p.message << "\n";
      return 2;
    }
  if (!outputsAllowed(inputsOf(a, {config->file}), {{a.output, "--output"}}))
    return 2;
  auto file = AtomicOutput::create(a.output.empty() ? "-" : a.output);
  if (!file) {
    llvm::errs() << "graphlint: " << llvm::toString(file.takeError()) << "\n";
    return 2;
  }
  verify::VerifyOptions vo;
  vo.feed.randomWeights = a.verify.randomWeights;
  auto report = verify::verifyModel(*model, config->setup, **backend, vo);
  if (!report) {
    llvm::errs() << a.files[0] << ": error: " << llvm::toString(report.takeError()) << "\n";
    return 2;
  }
  if (a.format == "json")
    (*file)->os() << llvm::formatv("{0:2}", verify::verifyToJson(*report)) << "\n";
  else
    verify::renderVerifyText(*report, (*file)->os());
  if (llvm::Error e = (*file)->commit()) {
    llvm::errs() << "graphlint: " << llvm::toString(std::move(e)) << "\n";
    return 2;
  }
  return report->stopReason.empty() ? 0 : 1;
}

// NO_COLOR (no-color.org): set and non-empty disables colour.
bool noColorRequested() {
  const char *v = std::getenv("NO_COLOR");
  return v && *v;
}

int runConfig(const Args &a) {
  if (!a.dump || a.files.size() != 1)
    return usage("config expects --dump FILE, e.g. 'graphlint config --dump models/resnet18.onnx'");
  ConfigResolver configs(a);
  auto config = configs.forFile(a.files[0]);
  if (!config) {
    llvm::errs() << "graphlint: " << llvm::toString(config.takeError()) << "\n";
    return 2;
  }
  dumpConfig(*config, a.files[0], llvm::outs());
  return 0;
}

/// "[3/120] models/x.onnx" on one stderr line, rewritten in place, while
/// linting several files with stderr on a terminal; erased at the end.
class ProgressLine {
public:
  ProgressLine(size_t files, bool quiet) : on_(files > 1 && !quiet && llvm::errs().is_displayed()) {}
  ~ProgressLine() {
    if (on_ && shown_)
      llvm::errs() << "\r\x1b[K";
    llvm::errs().flush();
  }
  ProgressFn callback() {
    if (!on_)
      return {};
    return [this](size_t done, size_t total, const std::string &path) {
      std::string line = fmt::format("[{}/{}] {}", done, total, path);
      unsigned width = llvm::sys::Process::StandardErrColumns();
      if (width > 10 && line.size() >= width)
        line = line.substr(0, width - 4) + "...";
      llvm::errs() << "\r\x1b[K" << line;
      llvm::errs().flush();
      shown_ = true;
    };
  }

private:
  bool on_;
  bool shown_ = false;
};

int runLint(const Args &a) {
  auto format = outputFormatFromName(a.format);
  if (!format)
    return usage("--format must be one of text, gcc, json, sarif, github");
  if (a.color != "auto" && a.color != "always" && a.color != "never")
    return usage("--color must be auto, always or never");
  if (a.files.empty())
    return usage("no input files");
  // Every file's configuration first: a bad config file stops the run.
  ConfigResolver configs(a);
  std::vector<Config> fileConfigs;
  std::vector<LintOptions> fileOpts;
  for (const std::string &f : a.files) {
    auto config = configs.forFile(f);
    if (!config) {
      llvm::errs() << "graphlint: " << llvm::toString(config.takeError()) << "\n";
      return 2;
    }
    LintOptions opts;
    opts.setup = config->setup;
    opts.policy = config->policy;
    opts.skipModelTeardown = true;
    opts.group = !a.noGroup;
    opts.shortenMessages = true;
    opts.sourceLines = *format == OutputFormat::Text && !a.quiet;
    opts.fusionSummary = *format == OutputFormat::Json || (*format == OutputFormat::Text && a.fusion) || !a.emitDot.empty();
    opts.fusionEdges = !a.emitDot.empty();
    opts.costSummary = *format == OutputFormat::Json || (*format == OutputFormat::Text && a.cost);
    opts.memorySummary = *format == OutputFormat::Json || a.memory || !a.memoryPlot.empty();
    fileConfigs.push_back(std::move(*config));
    fileOpts.push_back(std::move(opts));
  }
  std::optional<Baseline> baseline;
  if (!a.baseline.empty()) {
    auto b = Baseline::load(a.baseline);
    if (!b) {
      llvm::errs() << "graphlint: " << llvm::toString(b.takeError()) << "\n";
      return 2;
    }
    baseline = std::move(*b);
  }
  // No output may be an input; checked before anything is opened.
  {
    std::vector<std::pair<std::string, const char *>> outputs{{a.output, "--output"},
                                                               {a.writeBaseline, "--write-baseline"}};
    if (!a.emitDot.empty())
      for (const std::string &p : dotPaths(a.emitDot, a.files))
        outputs.push_back({p, "--emit-dot"});
    if (!a.memoryPlot.empty())
      for (const std::string &p : dotPaths(a.memoryPlot, a.files))
        outputs.push_back({p, "--memory-plot"});
    std::vector<std::string> configFiles;
    for (const ConfigLayer *c : configs.loaded())
      configFiles.push_back(c->origin);
    if (!outputsAllowed(inputsOf(a, configFiles), outputs))
      return 2;
  }
  // Create --output's temporary file before linting so an unwritable path
  // fails fast; it replaces the target only once the report is complete.
  std::unique_ptr<AtomicOutput> file;
  if (!a.output.empty()) {
    auto f = AtomicOutput::create(a.output);
    if (!f) {
      llvm::errs() << "graphlint: " << llvm::toString(f.takeError()) << "\n";
      return 2;
    }
    file = std::move(*f);
  }
  llvm::raw_ostream &out = file ? file->os() : llvm::outs();
  unsigned jobs = a.jobs ? a.jobs : llvm::hardware_concurrency().compute_thread_count();
  std::vector<FileReport> reports;
  {
    ProgressLine progress(a.files.size(), a.quiet);
    reports = lintFiles(a.files, fileOpts, jobs, progress.callback());
  }
  // Setup problems the lint went on after (-D binding nothing): stderr, so
  // that machine-readable reports on stdout stay clean.
  for (const FileReport &r : reports)
    for (const std::string &w : r.setupWarnings)
      llvm::errs() << r.path << ": warning: " << w << "\n";

  // Config ignore entries that suppressed nothing in any file (GL005), listed
  // with the first file linted under that config.
  std::set<std::string> used;
  for (const FileReport &r : reports)
    used.insert(r.usedIgnores.begin(), r.usedIgnores.end());
  for (const ConfigLayer *layer : configs.loaded()) {
    for (size_t i = 0; i < reports.size(); ++i) {
      const RulePolicy &p = fileConfigs[i].policy;
      if (fileConfigs[i].file != layer->origin)
        continue;
      if (p.reportUnusedIgnores && p.isEnabled("GL005")) {
        std::vector<Diagnostic> unused = unusedConfigIgnores({layer}, used, p);
        reports[i].diagnostics.insert(reports[i].diagnostics.end(), unused.begin(), unused.end());
      }
      break;
    }
  }
  if (!a.writeBaseline.empty()) {
    if (llvm::Error e = Baseline::write(a.writeBaseline, reports)) {
      llvm::errs() << "graphlint: " << llvm::toString(std::move(e)) << "\n";
      return 2;
    }
    size_t n = 0;
    for (const FileReport &r : reports)
      n += r.diagnostics.size();
    llvm::errs() << fmt::format("graphlint: wrote {} finding(s) to baseline '{}'\n", n, a.writeBaseline);
  }
  if (baseline) {
    auto checked = [&](size_t i, const std::string &code) { return fileConfigs[i].policy.isEnabled(code); };
    for (const BaselineEntry &e : baseline->apply(reports, checked))
      llvm::errs() << fmt::format("graphlint: baseline '{}': stale entry {} {} at {} {}{} ({}): no longer "
                                  "reported; rewrite it with --write-baseline\n",
                                  baseline->path(), e.code, e.name, e.file,
                                  e.source.empty() ? e.graph : e.source,
                                  !e.module.empty() ? " in " + e.module
                                  : e.node.empty() ? std::string() : " node '" + e.node + "'",
                                  e.op);
  }

  bool color = a.color == "always" ||
               (a.color == "auto" && !file && !noColorRequested() && llvm::outs().is_displayed());
  switch (*format) {
  case OutputFormat::Text:
    renderText(reports, out, color, a.fusion, a.quiet, a.cost);
    if (a.statistics)
      renderStatistics(reports, out);
    if (a.memory)
      for (const FileReport &r : reports)
        renderMemoryText(r.memory, r.path, out);
    break;
  case OutputFormat::Gcc: renderGcc(reports, out); break;
  case OutputFormat::Json: renderJson(reports, out); break;
  case OutputFormat::Sarif: renderSarif(reports, out); break;
  case OutputFormat::Github: renderGithub(reports, out); break;
  }
  out.flush();
  if (file) {
    if (llvm::Error e = file->commit()) {
      llvm::errs() << "graphlint: " << llvm::toString(std::move(e)) << "\n";
      return 2;
    }
  }
  bool fatal = false, failing = false;
  if (!a.emitDot.empty()) {
    std::vector<std::string> paths = dotPaths(a.emitDot, a.files);
    for (size_t i = 0; i < reports.size(); ++i)
      if (!reports[i].fatal && !writeDot(paths[i], reports[i].fusion, reports[i].path))
        fatal = true;
  }
  if (!a.memoryPlot.empty()) {
    std::vector<std::string> paths = dotPaths(a.memoryPlot, a.files);
    for (size_t i = 0; i < reports.size(); ++i)
      if (!reports[i].fatal && !writeMemoryPlot(paths[i], reports[i].memory, reports[i].path))
        fatal = true;
  }
  for (size_t i = 0; i < reports.size(); ++i) {
    const FileReport &r = reports[i];
    fatal |= r.fatal;
    if (*format != OutputFormat::Text && r.fatal)
      llvm::errs() << r.path << ": error: " << r.fatalMessage << "\n";
    const std::optional<Severity> &failOn = fileConfigs[i].failOn;
    for (const Diagnostic &d : r.diagnostics)
      failing |= failOn && d.severity >= *failOn;
  }
  if (fatal)
    return 2;
  // Writing a baseline accepts every finding: the run passes.
  return failing && !a.exitZero && a.writeBaseline.empty() ? 1 : 0;
}

}  // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--") break;
    if (s == "-h" || s == "--help") {
      llvm::outs() << kHelp;
      return 0;
    }
    if (s == "--version") {
      llvm::outs() << "graphlint " << GRAPHLINT_VERSION << "\n"
                   << "graphlint-fx " << kFxFormatOldest << "-" << kFxFormatNewest << "\n";
      return 0;
    }
  }
  // An explicit GRAPHLINT_HARDWARE_FILE that cannot be read stops the run
  // before any flag is read (--target names a profile it may define)
  // (a discovered data file that is broken is ignored: docs/hardware.md).
  if (const char *hw = std::getenv("GRAPHLINT_HARDWARE_FILE"); hw && *hw) {
    const std::string &why = HardwareCatalog::instance().loadError();
    if (!why.empty()) {
      llvm::errs() << "graphlint: GRAPHLINT_HARDWARE_FILE: " << why << "\n";
      return 2;
    }
  }
  Args a;
  if (auto err = parseArgs(argc, argv, a))
    return usage(*err);
  if (a.command == "rules")
    return runRules(a);
  if (a.command == "rule")
    return runRule(a);
  if (a.command == "inspect")
    return runInspect(a);
  if (a.command == "config")
    return runConfig(a);
  if (a.command == "verify")
    return runVerify(a);
  return runLint(a);
}
