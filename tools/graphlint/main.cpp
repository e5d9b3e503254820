// The graphlint command line: lint (default), inspect, rules, rule.
// Exit codes: 0 clean, 1 a finding at or above --fail-on, 2 usage error or a
// file that could not be linted.
#include "graphlint/ir/Importer.h"
#include "graphlint/ir/Printer.h"
#include "graphlint/lint/Driver.h"
#include "graphlint/lint/HardwareProfile.h"
#include "graphlint/lint/FusionPlan.h"
#include "graphlint/lint/Reporters.h"
#include "graphlint/lint/Rule.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/Threading.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace graphlint;

namespace {

constexpr const char *kHelp = R"(graphlint - static pre-launch linter for deep-learning graphs

USAGE
  graphlint [lint] [OPTIONS] FILE...     lint models: ONNX, or PyTorch FX graphs (*.fx.json)
                                         written by tools/graphlint-export
  graphlint inspect [OPTIONS] FILE       print a model's structure, types and parameters
  graphlint rules [--format text|json]   list every rule
  graphlint rule CODE|NAME               print a rule's documentation
  graphlint --help | --version

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
  --fail-on error|warning|note|never
                           lowest severity that makes the exit code 1 (default error)
  --exit-zero              exit 0 even when findings exist (unreadable files still exit 2)
  -D, --dim NAME=SIZE      bind a symbolic dimension (repeatable), e.g. -D batch=8
  -j, --jobs N             lint N files in parallel (default: number of cores)
  --color auto|always|never
                           colour text output (default auto: on a TTY unless NO_COLOR is set)
  --no-color               same as --color never
  --backend inductor|tensorrt|ort
                           fusion legality the planner applies (default inductor);
                           docs/fusion.md describes each backend
  --target GPU             hardware profile for GL141/GL142 (default H100-SXM):
                           V100, A100-40GB, A100-80GB, H100-SXM, H200, L4,
                           RTX-4090, or one from hardware.yaml (docs/hardware.md)
  --fusion                 text format: after each file's findings, its fusion
                           groups and a summary line (json always has a `fusion`
                           section; gcc ignores the flag)
  --emit-dot FILE          write the fusion plan as Graphviz DOT to FILE; with
                           several models, one file each: FILE's stem + '.' +
                           the model's stem, e.g. out.dot -> out.resnet18.dot

INSPECT OPTIONS
  --format text|json       text summary (default) or the JSON contract
  --print-ir               print every node with its inferred types
  -D, --dim NAME=SIZE      bind a symbolic dimension before shape completion
  --backend, --fusion, --emit-dot FILE
                           as for lint: the fusion plan (text: appended to the
                           summary; json: a `fusion` field) and its DOT drawing

EXIT CODES
  0  no finding at or above --fail-on
  1  at least one finding at or above --fail-on
  2  usage error, or a file could not be read or is not a model

Docs: docs/ (one page per rule in docs/rules/, output formats in docs/output-formats.md,
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
  std::string failOn = "error";
  std::string color = "auto";
  bool exitZero = false;
  bool printIr = false;
  unsigned jobs = 0;
  std::map<std::string, int64_t> dims;
  FusionBackend backend = FusionBackend::Inductor;
  std::string target = "H100-SXM";
  bool fusion = false;
  std::string emitDot;
  std::string output;
  bool statistics = false;
  bool quiet = false;
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
  a.dims[name] = v;
  return std::nullopt;
}

std::optional<std::string> parseArgs(int argc, char **argv, Args &a) {
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  if (!args.empty() && (args[0] == "lint" || args[0] == "inspect" || args[0] == "rules" || args[0] == "rule")) {
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
    std::optional<std::string> err;
    std::string v;
    if (arg == "--") {
      endOfOptions = true;
    } else if (arg == "--format") {
      err = take(a.format);
    } else if (arg == "--fail-on") {
      err = take(a.failOn);
    } else if (arg == "--color") {
      err = take(a.color);
    } else if (arg == "--no-color") {
      a.color = "never";
    } else if (arg == "--exit-zero") {
      a.exitZero = true;
    } else if (arg == "--print-ir") {
      a.printIr = true;
    } else if (arg == "--statistics") {
      a.statistics = true;
    } else if (arg == "-q" || arg == "--quiet") {
      a.quiet = true;
    } else if (arg == "-o" || arg == "--output") {
      if (!(err = take(a.output)) && a.output.empty())
        err = "--output needs a file name";
    } else if (arg == "--fusion") {
      a.fusion = true;
    } else if (arg == "--backend") {
      if (!(err = take(v))) {
        auto b = fusionBackendFromName(v);
        if (!b)
          err = "--backend must be one of inductor, tensorrt, ort, got '" + v + "'";
        else
          a.backend = *b;
      }
    } else if (arg == "--target") {
      if (!(err = take(a.target))) {
        auto profile = resolveHardwareTarget(a.target);
        if (!profile)
          err = "--target: " + llvm::toString(profile.takeError());
      }
    } else if (arg == "--emit-dot") {
      if (!(err = take(a.emitDot)) && a.emitDot.empty())
        err = "--emit-dot needs a file name";
    } else if (arg == "-D" || arg == "--dim") {
      if (!(err = take(v)))
        err = parseDim(v, a);
    } else if (arg == "-j" || arg == "--jobs") {
      if (!(err = take(v))) {
        char *end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end || n < 1 || n > 1024)
          err = "--jobs expects a positive integer, got '" + v + "'";
        else
          a.jobs = static_cast<unsigned>(n);
      }
    } else {
      err = "unknown option '" + arg + "'";
    }
    if (err)
      return err;
  }
  return std::nullopt;
}

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

bool writeDot(const std::string &path, const FusionSummary &s, const std::string &title) {
  std::error_code ec;
  llvm::raw_fd_ostream f(path, ec, llvm::sys::fs::OF_Text);
  if (!ec) {
    renderDot(s, title, f);
    f.close();
    ec = f.error();
    f.clear_error();
  }
  if (ec) {
    llvm::errs() << "graphlint: cannot write '" << path << "': " << ec.message() << "\n";
    return false;
  }
  return true;
}

int runInspect(const Args &a) {
  if (a.files.size() != 1)
    return usage("inspect expects exactly one FILE");
  if (a.format != "text" && a.format != "json")
    return usage("inspect: --format must be text or json");
  ImportOptions io;
  io.dims = a.dims;
  auto model = importModelFile(a.files[0], io);
  if (!model) {
    llvm::errs() << a.files[0] << ": error: " << llvm::toString(model.takeError()) << "\n";
    return 2;
  }
  FusionSummary fusion;
  if (a.fusion || !a.emitDot.empty())
    fusion = summariseFusion(**model, FusionPlan(**model, a.backend), !a.emitDot.empty());
  if (a.format == "json") {
    llvm::json::Value v = inspectJson(**model);
    if (a.fusion)
      v.getAsObject()->insert({"fusion", fusionToJson(fusion)});
    llvm::outs() << llvm::formatv("{0:2}", v) << "\n";
  } else if (a.printIr) {
    printModel(**model, llvm::outs());
  } else {
    renderInspectText(**model, llvm::outs());
  }
  if (a.fusion && a.format != "json")
    renderFusionText(fusion, a.files[0], llvm::outs());
  llvm::outs().flush();
  if (!a.emitDot.empty() && !writeDot(a.emitDot, fusion, a.files[0]))
    return 2;
  return 0;
}

// NO_COLOR (no-color.org): set and non-empty disables colour.
bool noColorRequested() {
  const char *v = std::getenv("NO_COLOR");
  return v && *v;
}

int runLint(const Args &a) {
  auto format = outputFormatFromName(a.format);
  if (!format)
    return usage("--format must be one of text, gcc, json, sarif, github");
  std::optional<Severity> failOn;
  if (a.failOn != "never") {
    failOn = severityFromName(a.failOn);
    if (!failOn)
      return usage("--fail-on must be one of error, warning, note, never");
  }
  if (a.color != "auto" && a.color != "always" && a.color != "never")
    return usage("--color must be auto, always or never");
  if (a.files.empty())
    return usage("no input files");
  LintOptions opts;
  opts.setup.dims = a.dims;
  opts.skipModelTeardown = true;
  opts.setup.backend = a.backend;
  opts.setup.target = a.target;
  opts.fusionSummary = *format == OutputFormat::Json || (*format == OutputFormat::Text && a.fusion) || !a.emitDot.empty();
  opts.fusionEdges = !a.emitDot.empty();
  // Open --output before linting so an unwritable path fails fast.
  std::unique_ptr<llvm::raw_fd_ostream> file;
  if (!a.output.empty()) {
    std::error_code ec;
    file = std::make_unique<llvm::raw_fd_ostream>(a.output, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      llvm::errs() << "graphlint: cannot write '" << a.output << "': " << ec.message() << "\n";
      return 2;
    }
  }
  llvm::raw_ostream &out = file ? static_cast<llvm::raw_ostream &>(*file) : llvm::outs();
  unsigned jobs = a.jobs ? a.jobs : llvm::hardware_concurrency().compute_thread_count();
  std::vector<FileReport> reports = lintFiles(a.files, opts, jobs);

  bool color = a.color == "always" ||
               (a.color == "auto" && !file && !noColorRequested() && llvm::outs().is_displayed());
  switch (*format) {
  case OutputFormat::Text:
    renderText(reports, out, color, a.fusion, a.quiet);
    if (a.statistics)
      renderStatistics(reports, out);
    break;
  case OutputFormat::Gcc: renderGcc(reports, out); break;
  case OutputFormat::Json: renderJson(reports, out); break;
  case OutputFormat::Sarif: renderSarif(reports, out); break;
  case OutputFormat::Github: renderGithub(reports, out); break;
  }
  out.flush();
  if (file) {
    file->close();
    if (std::error_code ec = file->error()) {
      file->clear_error();
      llvm::errs() << "graphlint: cannot write '" << a.output << "': " << ec.message() << "\n";
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
  for (const FileReport &r : reports) {
    fatal |= r.fatal;
    if (*format != OutputFormat::Text && r.fatal)
      llvm::errs() << r.path << ": error: " << r.fatalMessage << "\n";
    for (const Diagnostic &d : r.diagnostics)
      failing |= failOn && d.severity >= *failOn;
  }
  if (fatal)
    return 2;
  return failing && !a.exitZero ? 1 : 0;
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
      llvm::outs() << "graphlint " << GRAPHLINT_VERSION << "\n";
      return 0;
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
  return runLint(a);
}
