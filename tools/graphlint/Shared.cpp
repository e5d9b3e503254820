#include "Shared.h"

#include "graphlint/import/Importer.h"
#include "graphlint/engine/OutputFiles.h"
#include "graphlint/ir/MessageText.h"

#include <llvm/Support/Path.h>

#include <map>

namespace graphlint::cli {

namespace {

// Each model's stem, a repeated one with "-2", "-3", ...
std::vector<std::string> uniqueStems(const std::vector<std::string> &models) {
  std::map<std::string, unsigned> seen;
  std::vector<std::string> out;
  for (const std::string &m : models) {
    std::string ms = llvm::sys::path::stem(m).str();
    unsigned n = ++seen[ms];
    out.push_back(ms + (n > 1 ? "-" + std::to_string(n) : ""));
  }
  return out;
}

}  // namespace

std::vector<std::string> perModelPaths(const std::string &base, const std::vector<std::string> &models) {
  if (models.size() == 1)
    return {base};
  llvm::SmallString<256> dir(base);
  llvm::sys::path::remove_filename(dir);
  std::string stem = llvm::sys::path::stem(base).str(), ext = llvm::sys::path::extension(base).str();
  std::vector<std::string> out;
  for (const std::string &ms : uniqueStems(models)) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, stem + "." + ms + ext);
    out.push_back(std::string(p));
  }
  return out;
}

std::vector<std::string> perModelDirs(const std::string &dir, const std::vector<std::string> &models) {
  if (models.size() == 1)
    return {dir};
  std::vector<std::string> out;
  for (const std::string &ms : uniqueStems(models)) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, ms);
    out.push_back(std::string(p));
  }
  return out;
}

bool outputsAllowed(const std::vector<std::pair<std::string, std::string>> &inputs,
                    const std::vector<std::pair<std::string, const char *>> &outputs) {
  OutputGuard g;
  for (const auto &[path, role] : inputs)
    g.addInput(path, role);
  for (const auto &[path, flag] : outputs) {
    // Rewriting the baseline being applied is an update, not a loss: it was
    // read whole before, and the new one replaces it atomically.
    if (llvm::Error e = g.addOutput(path, flag, std::string(flag) == "--write-baseline" ? "baseline" : "")) {
      llvm::errs() << "graphlint: " << llvm::toString(std::move(e)) << "\n";
      return false;
    }
  }
  return true;
}

llvm::Expected<std::unique_ptr<AtomicOutput>> openReportFile(const std::string &output) {
  if (output.empty())
    return nullptr;
  return AtomicOutput::create(output);
}

bool writeOutputFile(const std::string &path, llvm::function_ref<void(llvm::raw_ostream &)> render) {
  if (llvm::Error e = writeOutputAtomically(path, render)) {
    llvm::errs() << "graphlint: " << llvm::toString(std::move(e)) << "\n";
    return false;
  }
  return true;
}

std::optional<std::string> readSetup(const Command &c, const SetupFlags &setup, SessionOptions &so) {
  if (auto err = emptyFileName(c))
    return err;
  if (auto err = setup.toLayer(so.commandLine))
    return err;
  so.configFile = setup.configFile();
  so.launchConfig = setup.launchConfig();
  if (setup.noConfig() && !so.configFile.empty())
    return std::string("--config cannot be combined with ") + (setup.isolated() ? "--isolated" : "--no-config");
  so.discoverConfigs = !setup.noConfig();
  so.onWarning = [](const std::string &w) { llvm::errs() << "graphlint: warning: " << w << "\n"; };
  return std::nullopt;
}

std::optional<std::string> readOneFileSetup(const Command &c, const SetupFlags &setup, SessionOptions &so,
                                            size_t files, llvm::StringRef format) {
  if (auto err = readSetup(c, setup, so))
    return err;
  if (files != 1)
    return std::string(c.name()) + " expects exactly one FILE";
  if (format != "text" && format != "json")
    return std::string(c.name()) + ": --format must be text or json";
  return std::nullopt;
}

std::unique_ptr<Model> importConfigured(LintSession &session, const std::string &file, std::optional<Config> &config) {
  auto c = session.configFor(file);
  if (!c) {
    llvm::errs() << "graphlint: " << llvm::toString(c.takeError()) << "\n";
    return nullptr;
  }
  config = std::move(*c);
  ImportOptions io;
  io.dims = config->setup.dims;
  auto model = importModelFile(file, io);
  if (!model) {
    llvm::errs() << oneLine(file) << ": error: " << oneLine(llvm::toString(model.takeError())) << "\n";
    return nullptr;
  }
  for (const std::string &w : (*model)->setupWarnings)
    llvm::errs() << oneLine(file) << ": warning: " << oneLine(w) << "\n";
  return std::move(*model);
}

}  // namespace graphlint::cli
