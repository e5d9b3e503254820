// graphlint verify FILE: run the model once and compare the predictions with
// measurements (docs/verify.md). The device is checked first, so that a
// machine without one answers in one line before any work.
#include "Command.h"
#include "SetupFlags.h"
#include "Shared.h"

#include "graphlint/engine/OutputFiles.h"
#include "graphlint/verify/Comparison.h"

#include <llvm/Support/FormatVariadic.h>

namespace graphlint::cli {

namespace {

class Verify : public Command {
public:
  Verify()
      : Command("verify", "[OPTIONS] FILE", "run the model once: predicted vs measured",
                "VERIFY OPTIONS (docs/verify.md)") {}

  int run() override {
    SessionOptions so;
    if (auto err = readOneFileSetup(*this, setup_, so, files_.size(), format_))
      return usage(*err);
    if (device_ != "cuda" && device_ != "cpu")
      return usage("--device must be cuda or cpu, got '" + device_.getValue() + "'");
    auto backend = device_ == "cpu" ? llvm::Expected<std::unique_ptr<verify::Backend>>(verify::makeCpuBackend())
                                    : verify::makeCudaBackend();
    if (!backend)
      return fail("verify: " + llvm::toString(backend.takeError()));
    LintSession session(std::move(so));
    const std::string &file = files_[0];
    std::optional<Config> config;
    std::unique_ptr<Model> model = importConfigured(session, file, config);
    if (!model)
      return 2;
    // External data the importer refused to follow (absolute, '..', a symlink
    // out of the folder, a FIFO or device) is never read: not even with
    // --random-weights, since Constant attributes are still loaded.
    for (const ImportProblem &p : model->problems)
      if (p.refusedPath) {
        llvm::errs() << file << ": error: verify: refusing to run on a model with unsafe external data: "
                     << p.message << "\n";
        return 2;
      }
    const std::string &output = output_;
    if (!outputsAllowed(session.inputs({file}), {{output, "--output"}}))
      return 2;
    auto out = AtomicOutput::create(output.empty() ? "-" : output);
    if (!out)
      return fail(llvm::toString(out.takeError()));
    verify::VerifyOptions vo;
    vo.feed.randomWeights = randomWeights_;
    auto report = verify::verifyModel(*model, config->setup, **backend, vo);
    if (!report) {
      llvm::errs() << file << ": error: " << llvm::toString(report.takeError()) << "\n";
      return 2;
    }
    if (format_ == "json")
      (*out)->os() << llvm::formatv("{0:2}", verify::verifyToJson(*report)) << "\n";
    else
      verify::renderVerifyText(*report, (*out)->os());
    if (llvm::Error e = (*out)->commit())
      return fail(llvm::toString(std::move(e)));
    return report->stopReason.empty() ? 0 : 1;
  }

private:
  cl::opt<std::string> &device_ = add<cl::opt<std::string>>(
      {nullptr, nullptr, "", "cuda|cpu",
       "where to run (default cuda: cuBLAS/cuDNN/own kernels\n"
       "under CUPTI; exit 2 with one line when no CUDA device\n"
       "is available); cpu is the plain C++ reference backend"},
      "device", cl::init("cuda"));
  cl::opt<bool> &randomWeights_ = add<cl::opt<bool>>(
      {nullptr, nullptr, "", "",
       "random parameters instead of the file's (needed for\n"
       "weightless exports such as models/*.onnx)"},
      "random-weights");
  cl::opt<std::string> &format_ = add<cl::opt<std::string>>(
      {nullptr, nullptr, "", "text|json", "side-by-side table (default) or a JSON `verify` section"}, "format",
      cl::init("text"));
  cl::opt<std::string> &output_ =
      add<cl::opt<std::string>>({nullptr, nullptr, "", "FILE",
                                 "write the comparison to FILE; exit 0 when every node\n"
                                 "ran, 1 when the run stopped before an unsupported op\n"
                                 "(what was measured so far is still shown), 2 on bad\n"
                                 "input or no device",
                                 true},
                                "output");
  cl::list<std::string> &files_ = positional("FILE");
  SetupFlags setup_{*this};
  int outputAlias_ = (alias(output_, "o", false), 0);
};

}  // namespace

Command &verifyCommand() {
  static Verify c;
  return c;
}

}  // namespace graphlint::cli
