// Target 7: bytes as a command line (arguments separated by NUL bytes) ->
// the graphlint CLI itself: command dispatch, llvm::cl option parsing, @FILE
// response files, -D / setup flags, config and baseline options, every
// subcommand's run. The CLI's sources are compiled into this target with
// their main() renamed (fuzz/CMakeLists.txt), so what runs is exactly what the
// binary runs.
//
// Each input runs in a scratch directory holding a model, an FX graph, a
// config and response files, restored before every input (and the previous
// directory restored after it); an argument containing '/' is not run, so
// nothing outside the scratch directory is read or written. A crash inside an
// input is written where -artifact_prefix says: give it as an absolute path
// (scripts/fuzz.sh does).
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

int graphlint_cli_main(int argc, char **argv);

namespace {

std::string scratch;
int home = -1;  // the directory libFuzzer runs in: its corpus and artifact paths are relative to it
std::vector<std::pair<std::string, std::string>> seedFiles;  // name -> content

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void restoreScratch() {
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(scratch, ec))
    std::filesystem::remove_all(entry.path(), ec);
  for (const auto &[name, content] : seedFiles) {
    std::ofstream out(scratch + "/" + name, std::ios::binary);
    out << content;
  }
}

// reset() restores an option's cl::init value; one declared without cl::init
// would keep the previous input's value, so it gets its type's empty value.
template <typename T> bool resetPlain(llvm::cl::Option *o) {
  auto *v = dynamic_cast<llvm::cl::opt<T> *>(o);
  if (v && !v->getDefault().hasValue())
    v->setValue(T());
  return v != nullptr;
}

void resetOptions() {
  llvm::cl::ResetAllOptionOccurrences();  // leaves positional lists alone
  auto reset = [](llvm::cl::Option *o) {
    o->reset();
    resetPlain<std::string>(o) || resetPlain<bool>(o) || resetPlain<int>(o) || resetPlain<unsigned>(o) ||
        resetPlain<int64_t>(o) || resetPlain<uint64_t>(o) || resetPlain<double>(o);
  };
  for (llvm::cl::SubCommand *sc : llvm::cl::getRegisteredSubcommands()) {
    for (auto &kv : sc->OptionsMap)
      reset(kv.second);
    for (llvm::cl::Option *o : sc->PositionalOpts)
      reset(o);
    for (llvm::cl::Option *o : sc->SinkOpts)
      reset(o);
    if (sc->ConsumeAfterOpt)
      reset(sc->ConsumeAfterOpt);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("graphlint-fuzz-argv", dir))
    std::abort();
  scratch = std::string(dir);
  const std::string src = GRAPHLINT_SOURCE_DIR;
  seedFiles = {
      {"m.onnx", slurp(src + "/tests/fixtures/robustness/control_flow.onnx")},
      {"m.fx.json", slurp(src + "/tests/fixtures/fx/symbolic_v2.fx.json")},
      {"c.yaml", "select: [GL0, GL1]\nper-node-ignores:\n  \"*mm*\": [GL141]\nfail-on: warning\n"},
      {"a.rsp", "m.fx.json --train --memory -D batch=8\n"},
      {"b.rsp", "@a.rsp --format json\n"},
  };
  home = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (home < 0)
    std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string> args{"graphlint"};
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    char c = static_cast<char>(data[i]);
    if (c == '/')
      return 0;  // paths stay inside the scratch directory
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty())
    args.push_back(cur);
  if (args.size() > 64)
    return 0;
  if (::chdir(scratch.c_str()) != 0)
    std::abort();
  restoreScratch();
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // Options keep their values between parses: start every input from the defaults.
  resetOptions();
  graphlint_cli_main(static_cast<int>(args.size()), argv.data());
  llvm::outs().flush();
  llvm::outs().clear_error();
  llvm::errs().clear_error();
  if (::fchdir(home) != 0)
    std::abort();
  return 0;
}
