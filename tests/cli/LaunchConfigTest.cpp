// --launch-config (LaunchConfig.h): a DeepSpeed ds_config.json, an accelerate
// config and a torchtitan job config TOML read as a config layer between
// .graphlint.yaml and the command line; --nnodes/--nproc-per-node; unknown
// and unmodelled keys are one warning line each; a malformed file is one
// error line naming it, exit 2.
#include "TestSupport.h"

#include "graphlint/engine/LaunchConfig.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string model() {
  std::string m = tempDir() + "/m.onnx";
  writeFile(m, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[batch, seq] x) => (float[batch, seq] y) { y = Relu(x) })"));
  return m;
}

std::string fixture(const std::string &name) { return sourcePath("tests/fixtures/launch/" + name); }

bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

size_t lines(const std::string &s) { return std::count(s.begin(), s.end(), '\n'); }

TEST(LaunchConfig, DeepSpeedConfigSetsTheSetupAndSaysWhereFrom) {
  std::string ds = fixture("ds_config.json");
  CliResult r = runCli({"config", "--dump", "--no-config", "--launch-config", ds, model()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string from = "  # from " + ds;
  EXPECT_TRUE(has(r.out, "\n  zero: 2" + from + "\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  precision: bf16-mixed" + from + "\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  optimizer: adamw" + from + "\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  recompute: layer" + from + "\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  train: true" + from + "\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  dims:" + from + "\n    \"batch\": 4\n")) << r.out;
  // Not set by the file: no origin.
  EXPECT_TRUE(has(r.out, "\n  tp: 1\n")) << r.out;
  // Noted, unmodelled and unknown keys: one warning line each, naming the key.
  EXPECT_TRUE(has(r.err, "warning: " + ds + ": 'frobnicate_gradients' is not a key graphlint knows; ignored\n"))
      << r.err;
  EXPECT_TRUE(has(r.err, "'zero_optimization.offload_optimizer.device' cpu: offloading is not modelled")) << r.err;
  EXPECT_TRUE(has(r.err, "'gradient_accumulation_steps' 2: noted")) << r.err;
  EXPECT_EQ(lines(r.err), 3u) << r.err;
}

TEST(LaunchConfig, TheCommandLineWinsOverTheLaunchConfigAndItOverTheConfigFile) {
  std::string dir = tempDir();
  std::string m = model();
  writeFile(dir + "/.graphlint.yaml", "setup:\n  zero: 1\n  target: a100-80g\n  optimizer: sgd\n");
  CliResult r = runCli({"config", "--dump", "--config", dir + "/.graphlint.yaml", "--launch-config",
                        fixture("ds_config.json"), "--optimizer", "adam", m});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\n  zero: 2  # from ")) << r.out;    // the launch config beats the file
  EXPECT_TRUE(has(r.out, "\n  target: A100-80GB\n")) << r.out;  // the file's, not overridden
  EXPECT_TRUE(has(r.out, "\n  optimizer: adam\n")) << r.out;    // the command line beats both
  EXPECT_TRUE(has(r.out, "# config file: " + dir + "/.graphlint.yaml")) << r.out;
}

TEST(LaunchConfig, AccelerateHybridShardBuildsTheMesh) {
  std::string a = fixture("accelerate_fsdp.yaml");
  CliResult r = runCli({"config", "--dump", "--no-config", "--launch-config", a, model()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\n  world-size: 16  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  dp-replicate: 2  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  dp-shard: 8  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  zero: 3  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  gpus-per-node: 8  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  precision: bf16-mixed  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  recompute: layer  # from")) << r.out;
  EXPECT_TRUE(has(r.err, ": 'gpu_warp_speed' is not a key graphlint knows; ignored\n")) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;

  CliResult d = runCli({"config", "--dump", "--no-config", "--launch-config", fixture("accelerate_deepspeed.yaml"),
                        model()});
  ASSERT_EQ(d.exitCode, 0) << d.err;
  EXPECT_TRUE(has(d.out, "\n  zero: 3  # from")) << d.out;
  EXPECT_TRUE(has(d.out, "\n  world-size: 8  # from")) << d.out;
  EXPECT_TRUE(has(d.out, "\n  dp-shard: 8\n")) << d.out;  // ZeRO-3 over the 8 ranks
  EXPECT_TRUE(has(d.out, "\n  precision: fp16-mixed  # from")) << d.out;
  EXPECT_EQ(d.err, "") << d.err;
}

TEST(LaunchConfig, TorchtitanTomlWithTorchrunFlags) {
  std::string t = fixture("torchtitan_llama3_8b.toml");
  CliResult r =
      runCli({"config", "--dump", "--no-config", "--launch-config", t, "--nnodes", "2", "--nproc-per-node", "8", model()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // data_parallel_shard_degree -1: the 16 ranks left by tp 2 x pp 2.
  EXPECT_TRUE(has(r.out, "\n  world-size: 16\n  dp-replicate: 1  # from " + t + "\n  dp-shard: 4  # from ")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  tp: 2  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  pp: 2  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  pp-schedule: interleaved-1f1b  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  microbatches: 4  # from")) << r.out;  // local batch 8 / micro-batch 2
  EXPECT_TRUE(has(r.out, "\n  pp-split-points: \"layers.8,layers.16,layers.24\"  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n    \"batch\": 8\n    \"seq\": 8192\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  precision: bf16-mixed  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  recompute: layer  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  backend: inductor  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  optimizer: adamw  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  gpus-per-node: 8\n")) << r.out;  // the command line's
  EXPECT_TRUE(has(r.err, ": 'warp_drive.enabled' is not a key graphlint knows; ignored\n")) << r.err;
  // model.converters ["float8"] with [float8] recipe_name and the FSDP2 option.
  EXPECT_TRUE(has(r.out, "\n  float8: tensorwise  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  float8-all-gather: false  # from")) << r.out;
  EXPECT_FALSE(has(r.err, "float8 training is not modelled")) << r.err;
  EXPECT_FALSE(has(r.err, "recipe_name")) << r.err;

  // Without the world size, -1 cannot be resolved: exit 2, one line.
  CliResult no = runCli({"config", "--dump", "--no-config", "--launch-config", t, model()});
  EXPECT_EQ(no.exitCode, 2);
  EXPECT_TRUE(has(no.err, "dp-shard -1 (the rest of the ranks) needs the world size")) << no.err;
}

TEST(LaunchConfig, TorchrunFlags) {
  CliResult r = runCli({"config", "--dump", "--no-config", "--nnodes", "4", "--nproc-per-node", "4", "--zero", "3",
                        model()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\n  world-size: 16\n  dp-replicate: 1\n  dp-shard: 16\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  gpus-per-node: 4\n")) << r.out;
  CliResult alone = runCli({"config", "--dump", "--no-config", "--nnodes", "4", model()});
  EXPECT_EQ(alone.exitCode, 2);
  EXPECT_TRUE(has(alone.err, "graphlint: --nnodes needs --nproc-per-node (the world size is their product)\n"))
      << alone.err;
  CliResult bad = runCli({"config", "--dump", "--no-config", "--nproc-per-node", "0", model()});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_TRUE(has(bad.err, "--nproc-per-node expects an integer from 1 to 1024, got '0'")) << bad.err;
}

TEST(LaunchConfig, MalformedFilesAreOneLineNamingTheFile) {
  std::string dir = tempDir();
  std::string m = model();
  struct Case {
    const char *name, *text, *expect;
  } cases[] = {
      {"bad.json", "{\"zero_optimization\": {\"stage\": 2,}", "bad.json: invalid JSON"},
      {"stage.json", "{\"zero_optimization\": {\"stage\": 7}}",
       "stage.json: 'zero_optimization.stage' 7: 'zero' expects an integer from 0 to 3, got '7'"},
      {"type.json", "{\"train_micro_batch_size_per_gpu\": \"four\"}",
       "type.json: 'train_micro_batch_size_per_gpu' expects an integer, got 'four'"},
      {"bad.toml", "[training]\nlocal_batch_size = 8\nseq_len = \"8192\n", "bad.toml:3: invalid TOML: unterminated string"},
      {"dup.toml", "[training]\nseq_len = 1\nseq_len = 2\n", "dup.toml:3: invalid TOML: key 'training.seq_len' is defined twice"},
      {"deep.toml", "[a]\nx = [[[[[[[[[[1]]]]]]]]]]\n", "deep.toml:2: invalid TOML: arrays nested deeper than 8 levels"},
      {"inline.toml", "[a]\nx = {y = 1}\n", "inline.toml:2: invalid TOML: inline tables are not supported"},
      {"tp.toml", "[parallelism]\ntensor_parallel_degree = 0\n",
       "tp.toml:2: 'parallelism.tensor_parallel_degree' 0: 'tp' expects an integer from 1 to 1048576, got '0'"},
      {"bad.yaml", "distributed_type: FSDP\nnum_processes: [\n", "bad.yaml:"},
      {"procs.yaml", "distributed_type: MULTI_GPU\nnum_processes: 6\nnum_machines: 4\n",
       "procs.yaml:3: 'num_machines' 4 does not divide num_processes 6"},
      {"neither.yaml", "learning_rate: 3\n", "neither.yaml: not an accelerate config"},
      {"conf.ini", "[x]\n", "conf.ini: not a launch config graphlint reads"},
  };
  for (const Case &c : cases) {
    std::string path = dir + "/" + c.name;
    writeFile(path, c.text);
    CliResult r = runCli({"--no-config", "--launch-config", path, m});
    EXPECT_EQ(r.exitCode, 2) << c.name << ": " << r.err;
    EXPECT_TRUE(has(r.err, std::string(c.expect))) << c.name << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << c.name << ": " << r.err;
  }
  CliResult missing = runCli({"--no-config", "--launch-config", dir + "/absent.json", m});
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_TRUE(has(missing.err, "absent.json")) << missing.err;
}

TEST(LaunchConfig, TomlReaderReadsTheSubsetJobConfigsUse) {
  auto t = parseToml("# c\n[a.b]\ns = 'lit\\eral' # c\nd = \"q\\\"\"\nn = -1_000\nf = 2.5e-4\nt = true\n"
                     "arr = [1, 2,\n  3,]\nnested = [[\"x\"], []]\n\"quoted key\" = 1\n",
                     "t.toml");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  ASSERT_EQ(t->size(), 8u);
  EXPECT_EQ((*t)[0].key, "a.b.s");
  EXPECT_EQ((*t)[0].value, "lit\\eral");
  EXPECT_EQ((*t)[1].value, "q\"");
  EXPECT_EQ((*t)[2].value, "-1000");
  EXPECT_EQ((*t)[2].kind, TomlEntry::Integer);
  EXPECT_EQ((*t)[3].kind, TomlEntry::Float);
  EXPECT_EQ((*t)[4].kind, TomlEntry::Boolean);
  EXPECT_EQ((*t)[5].value, "[1, 2, 3]");
  EXPECT_EQ((*t)[5].line, 8u);
  EXPECT_EQ((*t)[6].value, "[[\"x\"], []]");
  EXPECT_EQ((*t)[7].key, "a.b.quoted key");
  auto bad = parseToml("x = 1 2\n", "t.toml");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()), "t.toml:1: invalid TOML: expected the end of the line");
}

TEST(LaunchConfig, JsonMemorySetupReflectsTheLaunchConfig) {
  CliResult r = runCli({"--no-config", "--format", "json", "--launch-config", fixture("accelerate_deepspeed.yaml"),
                        "-D", "batch=2", "-D", "seq=16", model()});
  ASSERT_LE(r.exitCode, 1) << r.err;
  EXPECT_TRUE(has(r.out, "\"zero\":3") || has(r.out, "\"zero\": 3")) << r.out.substr(0, 2000);
}

}  // namespace

TEST(LaunchConfig, TorchtitanFloat8AllGatherAndPrecomputedScales) {
  std::string t = tempDir() + "/float8.toml";
  writeFile(t, "[model]\nconverters = [\"float8\"]\n[float8]\n"
                                          "enable_fsdp_float8_all_gather = true\n"
                                          "precompute_float8_dynamic_scale_for_fsdp = true\n");
  CliResult r = runCli({"config", "--dump", "--no-config", "--launch-config", t, model()});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // No recipe_name: torchao's default, tensorwise.
  EXPECT_TRUE(has(r.out, "\n  float8: tensorwise  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  float8-all-gather: true  # from")) << r.out;
  EXPECT_TRUE(has(r.out, "\n  float8-precompute-scale: true  # from")) << r.out;

  std::string bad = tempDir() + "/mx.toml";
  writeFile(bad, "[model]\nconverters = [\"float8\"]\n[float8]\nrecipe_name = \"mxfp8\"\n");
  CliResult b = runCli({"config", "--dump", "--no-config", "--launch-config", bad, model()});
  ASSERT_EQ(b.exitCode, 0) << b.err;
  EXPECT_TRUE(has(b.err, "float8 (mxfp8): not a float8 recipe graphlint models (tensorwise, rowwise); ignored")) << b.err;
  EXPECT_TRUE(has(b.out, "\n  float8: none\n")) << b.out;
}
