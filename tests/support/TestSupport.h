// Helpers shared by the tests: paths to fixtures, building models from ONNX's
// textual syntax, running the CLI and linting in-memory models.
#pragma once

#include "graphlint/import/Importer.h"
#include "graphlint/engine/Driver.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace graphlint::test {

std::string sourcePath(const std::string &rel);   // under the repository root
std::string binaryPath(const std::string &rel);   // under the build tree
std::string sharedPath(const std::string &rel);   // under ../shared (may be absent)
bool sharedAvailable();
std::string tempDir();                            // fresh directory per call

/// Serialises a model written in ONNX's textual syntax (onnx/defs/parser.h).
std::string onnxFromText(const std::string &text);
void writeFile(const std::string &path, const std::string &bytes);
std::string readFile(const std::string &path);

/// Imports bytes (as if read from `path`); fails the test on a fatal error.
std::unique_ptr<Model> importText(const std::string &text, const ImportOptions &opts = {});
FileReport lintText(const std::string &text, const LintOptions &opts = {});
std::vector<const Diagnostic *> withCode(const FileReport &r, const std::string &code);
/// "CODE node: message" per line, for assertion messages.
std::string dumpDiagnostics(const FileReport &r);
/// A training plan's peak before the optimizer step: the highest point of
/// the forward and backward (Adam's temporaries can set the step's peak and
/// hide the activations).
uint64_t forwardBackwardPeak(const MemorySummary &m);

/// Compares `actual` with tests/golden/NAME, or rewrites the golden when
/// GRAPHLINT_UPDATE_GOLDENS is set (review the diff afterwards).
void expectGolden(const std::string &name, const std::string &actual);

using Finding = std::pair<std::string, unsigned>;  // code, user source line
/// The `# expect: CODE[, CODE]` markers of a model's Python source, as (code, line).
std::set<Finding> markerFindings(const std::string &pyPath);
/// The findings of `codes` by user source line; each must point into `file`.
std::set<Finding> findingsByLine(const FileReport &r, const std::string &file, const std::set<std::string> &codes);
std::string describeFindings(const std::set<Finding> &fs);  // "GL112@18 GL123@19"

struct CliResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};
/// Runs the graphlint binary with arguments (shell-quoted here).
CliResult runCli(const std::vector<std::string> &args);
/// The same, killed after `seconds` (a hang fails fast: exit -2), with
/// `env` ("NAME=value") added to the environment.
CliResult runCliTimed(const std::vector<std::string> &args, unsigned seconds,
                      const std::vector<std::string> &env = {});

}  // namespace graphlint::test
