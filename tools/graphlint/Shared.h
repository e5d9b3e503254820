// What several subcommands need besides their flags: outputs that never
// overwrite inputs, per-model output names, and one configured import.
#pragma once

#include "Command.h"
#include "SetupFlags.h"

#include "graphlint/engine/OutputFiles.h"
#include "graphlint/ir/Graph.h"
#include "graphlint/engine/Session.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace graphlint::cli {

/// --emit-dot FILE with several models: FILE's stem + "." + model stem +
/// FILE's extension, next to FILE; a repeated model stem gets "-2", "-3", ...
std::vector<std::string> perModelPaths(const std::string &base, const std::vector<std::string> &models);
/// --emit-model-explorer DIR with several models: DIR/<model stem>, a
/// repeated stem with "-2", "-3", ...; one model: DIR itself.
std::vector<std::string> perModelDirs(const std::string &dir, const std::vector<std::string> &models);

/// Every output path checked against the inputs before any is opened;
/// prints the refusal and returns false.
bool outputsAllowed(const std::vector<std::pair<std::string, std::string>> &inputs,
                    const std::vector<std::pair<std::string, const char *>> &outputs);

/// The report's file for -o/--output: null for stdout (an empty path); an
/// error when the temporary file beside it cannot be created.
llvm::Expected<std::unique_ptr<AtomicOutput>> openReportFile(const std::string &output);

/// Writes `path` atomically; prints the error and returns false.
bool writeOutputFile(const std::string &path, llvm::function_ref<void(llvm::raw_ostream &)> render);

/// What every command that resolves a setup reads first: the setup flags and
/// --config into `so`, and no empty file name; the first problem's message.
std::optional<std::string> readSetup(const Command &c, const SetupFlags &setup, SessionOptions &so);

/// readSetup, then the arguments of a command that reads one FILE and
/// prints text or json (inspect, verify): exactly one FILE, a known --format.
std::optional<std::string> readOneFileSetup(const Command &c, const SetupFlags &setup, SessionOptions &so,
                                            size_t files, llvm::StringRef format);

/// FILE's configuration (through the session) and FILE imported with its dim
/// bindings; on failure prints the one-line error and returns nullptr.
std::unique_ptr<Model> importConfigured(LintSession &session, const std::string &file, std::optional<Config> &config);

}  // namespace graphlint::cli
