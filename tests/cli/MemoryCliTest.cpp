// The memory plan from the command line: the --memory table, the JSON
// `memory` section, --memory-plot's SVG files (one per model) and its usage
// error, and GL201 on a batch that cannot fit.
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <llvm/Support/JSON.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string model(const std::string &name) { return sourcePath("models/" + name); }

TEST(MemoryCli, TableAfterTheReport) {
  CliResult r = runCli({"--memory", "--exit-zero", "--dim", "batch=1", model("resnet18.onnx")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  for (const char *row : {"memory per GPU (inference, fp32; target H100-SXM)", "params", "peak allocated",
                          "peak reserved", "capacity", "headroom", "top at the peak:"})
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  // Without the flag the text report has no table.
  CliResult plain = runCli({"--exit-zero", "--dim", "batch=1", model("resnet18.onnx")});
  EXPECT_EQ(plain.out.find("peak allocated"), std::string::npos);
}

TEST(MemoryCli, JsonHasTheMemorySection) {
  CliResult r = runCli({"--format", "json", "--exit-zero", "--dim", "batch=2", model("resnet18.onnx")});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto v = llvm::json::parse(r.out);
  ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
  const llvm::json::Object *mem = (*v->getAsObject()->getArray("files"))[0].getAsObject()->getObject("memory");
  ASSERT_TRUE(mem);
  EXPECT_EQ(mem->getString("mode").getValueOr(""), "inference");
  int64_t params = mem->getInteger("params_bytes").getValueOr(0);
  int64_t peak = mem->getInteger("peak_allocated_bytes").getValueOr(0);
  int64_t reserved = mem->getInteger("peak_reserved_bytes").getValueOr(0);
  EXPECT_GT(params, 40 << 20);  // resnet18: 11.7 M fp32 parameters
  EXPECT_GT(peak, params);
  EXPECT_GE(reserved, peak);
  EXPECT_GT(mem->getArray("timeline")->size(), 40u);
}

TEST(MemoryCli, PlotWritesOneSvgPerModel) {
  std::string dir = tempDir();
  CliResult r = runCli({"--exit-zero", "--memory-plot", dir + "/mem.svg", "--dim", "batch=1", "--dim", "seq=16",
                        model("resnet18.onnx"), model("gpt_tiny.onnx")});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  for (const char *f : {"/mem.resnet18.svg", "/mem.gpt_tiny.svg"}) {
    std::string svg = readFile(dir + f);
    EXPECT_EQ(svg.rfind("<svg", 0), 0u) << f;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << f;
    EXPECT_NE(svg.find("peak"), std::string::npos) << f;
  }
  CliResult bad = runCli({"--memory-plot", "", model("resnet18.onnx")});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("--memory-plot needs a file name"), std::string::npos) << bad.err;
  CliResult unwritable = runCli({"--exit-zero", "--memory-plot", dir + "/no/such/dir/m.svg", model("resnet18.onnx")});
  EXPECT_EQ(unwritable.exitCode, 2);
}

TEST(MemoryCli, Gl201WhenTheBatchCannotFit) {
  CliResult r = runCli({"--dim", "batch=131072", "--dim", "seq=32", "--target", "L4", model("gpt_tiny.onnx")});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.out.find("error[GL201] predicted inference memory per GPU is"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of L4"), std::string::npos) << r.out;
}

}  // namespace
