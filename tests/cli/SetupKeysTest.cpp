// The setup-key table (src/base/SetupKeys.cpp) drives the config file, the
// command line, the merge and --dump: every key must round-trip through all
// of them, and a new key without a working example fails here.
#include "TestSupport.h"

#include "graphlint/engine/Config.h"
#include "graphlint/base/HardwareProfile.h"
#include "graphlint/base/SetupKeys.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string dumpOf(const Config &c) {
  std::string s;
  llvm::raw_string_ostream os(s);
  dumpConfig(c, "m.onnx", os);
  return os.str();
}

// The `  key:VALUE` text of the setup: section of a --dump (dims: its lines).
std::string setupLine(const std::string &dump, const SetupKey &k) {
  size_t setup = dump.find("\nsetup:\n");
  EXPECT_NE(setup, std::string::npos) << dump;
  std::string head = std::string("\n  ") + k.key + ":";
  size_t at = dump.find(head, setup);
  if (at == std::string::npos)
    return "<missing>";
  // Up to the next line that is not indented deeper (the next key, or the end).
  size_t from = at + head.size(), end = from;
  while ((end = dump.find('\n', end)) != std::string::npos && dump.compare(end, 5, "\n    ") == 0)
    ++end;
  std::string v = dump.substr(from, end == std::string::npos ? std::string::npos : end - from);
  return v;
}

// A key whose example is only valid beside another: ep shards experts over
// ranks of dp-shard x cp, so `ep: 2` alone is refused (MeshResolves below).
std::optional<std::pair<std::string, std::string>> companionOf(const SetupKey &k) {
  if (llvm::StringRef(k.key) == "ep")
    return std::pair<std::string, std::string>{"dp-shard", "2"};
  return std::nullopt;
}

// What a file line `key: example` (dims: a mapping) looks like.
std::string yamlFor(const SetupKey &k) {
  if (k.isMapping()) {  // dims, tp-plan: NAME=VALUE as `"NAME": VALUE`
    auto [name, size] = llvm::StringRef(k.example).rsplit('=');
    return std::string("setup:\n  ") + k.key + ":\n    \"" + name.str() + "\": " + size.str() + "\n";
  }
  std::string with = companionOf(k) ? "  " + companionOf(k)->first + ": " + companionOf(k)->second + "\n" : "";
  return std::string("setup:\n") + with + "  " + k.key + ": " + k.example + "\n";
}

std::vector<std::string> flagsFor(const SetupKey &k) {
  std::string flag = std::string("--") + k.flagName();
  if (k.isSwitch())
    return {flag};
  if (auto c = companionOf(k))
    return {"--" + c->first, c->second, flag, k.example};
  return {flag, k.example};
}

TEST(SetupKeys, EveryKeyRoundTripsThroughYamlCommandLineAndDump) {
  const std::string defaults = dumpOf(Config{});
  std::string model = tempDir() + "/m.onnx";
  writeFile(model, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) })"));
  for (const SetupKey &k : setupKeys()) {
    SCOPED_TRACE(k.key);
    // The example is not the default, so each path below must carry it.
    ASSERT_NE(setupLine(defaults, k), k.exampleDump) << "the example must differ from the default";
    // Config file -> layer -> resolveConfig -> --dump.
    auto layer = parseConfigYaml(yamlFor(k), "cfg/.graphlint.yaml");
    ASSERT_TRUE(bool(layer)) << llvm::toString(layer.takeError());
    ASSERT_EQ(layer->setup.size(), companionOf(k) ? 2u : 1u);
    EXPECT_EQ(layer->setup.back().key, &k);
    auto resolved = resolveConfig({&*layer}, "m.onnx");
    ASSERT_TRUE(bool(resolved)) << llvm::toString(resolved.takeError());
    Config fromFile = std::move(*resolved);
    EXPECT_EQ(setupLine(dumpOf(fromFile), k), k.exampleDump);
    // Command line -> `graphlint config --dump` (the same table made the flag).
    std::vector<std::string> args{"config", "--dump"};
    for (const std::string &a : flagsFor(k))
      args.push_back(a);
    args.push_back(model);
    CliResult r = runCli(args);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(setupLine(r.out, k), k.exampleDump) << r.out;
  }
}

Config meshOf(std::initializer_list<std::pair<const char *, const char *>> given, std::string *error = nullptr) {
  ConfigLayer cli;
  cli.origin = "command line";
  for (auto [key, value] : given) {
    const SetupKey *k = findSetupKey(key);
    EXPECT_TRUE(k) << key;
    cli.setup.push_back({k, *k->check(value, SetupSyntax::CommandLine).value});
  }
  auto c = resolveConfig({&cli}, "m.onnx");
  if (!c) {
    std::string e = llvm::toString(c.takeError());
    if (error)
      *error = e;
    else
      ADD_FAILURE() << e;
    return Config{};
  }
  return std::move(*c);
}

// The device mesh is resolved once, as torchtitan's ParallelDims: world =
// dp_replicate x dp_shard x cp x tp x pp; ep is carved from dp_shard x cp.
TEST(SetupKeys, MeshResolvesOnceAndTheWorldSizeIsItsProduct) {
  // Llama 3.1 405B in torchtitan's 512-GPU run: FSDP 8 x TP 8 x PP 8.
  Mesh m = meshOf({{"dp-shard", "8"}, {"tp", "8"}, {"pp", "8"}}).setup.mesh;
  EXPECT_EQ(m.worldSize(), 512u);
  EXPECT_EQ(m.dataParallel, DataParallel::FSDP2);
  EXPECT_EQ(m.zeroStage(), 3u);
  EXPECT_EQ(m.shardsAt(1), 8u);
  EXPECT_EQ(m.describe(), "dp_shard 8 x tp 8 x pp 8");
  // HSDP: replicate 4 x shard 8.
  m = meshOf({{"dp-replicate", "4"}, {"dp-shard", "8"}}).setup.mesh;
  EXPECT_EQ(m.worldSize(), 32u);
  EXPECT_EQ(m.dataParallelRanks(), 32u);
  EXPECT_EQ(m.shardsAt(3), 8u);
  // The spellings before the mesh: --world-size N is data parallel, sharded
  // under --zero K (DeepSpeed, --fsdp), replicated (DDP) under --zero 0.
  m = meshOf({{"world-size", "64"}, {"zero", "2"}}).setup.mesh;
  EXPECT_EQ(m.dpShard, 64u);
  EXPECT_EQ(m.dpReplicate, 1u);
  EXPECT_EQ(m.dataParallel, DataParallel::ZeRO2);
  EXPECT_EQ(m.shardsAt(2), 64u);
  EXPECT_EQ(m.shardsAt(3), 1u) << "ZeRO-2 keeps whole parameters";
  m = meshOf({{"world-size", "8"}}).setup.mesh;
  EXPECT_EQ(m.dpReplicate, 8u);
  EXPECT_EQ(m.dataParallel, DataParallel::DDP);
  // A world size beside tp/pp: the rest is data parallel.
  m = meshOf({{"world-size", "64"}, {"tp", "8"}, {"zero", "3"}}).setup.mesh;
  EXPECT_EQ(m.dpShard, 8u);
  EXPECT_EQ(m.dataParallel, DataParallel::ZeRO3);
  // No world size: the product, with no data parallelism.
  m = meshOf({{"tp", "8"}, {"pp", "2"}}).setup.mesh;
  EXPECT_EQ(m.worldSize(), 16u);
  EXPECT_EQ(m.dataParallelRanks(), 1u);
  // Experts over dp_shard ranks do not multiply the world.
  m = meshOf({{"dp-shard", "8"}, {"ep", "4"}}).setup.mesh;
  EXPECT_EQ(m.worldSize(), 8u);
  EXPECT_EQ(m.ep, 4u);
  // Disagreements are one line each.
  std::string error;
  meshOf({{"dp-shard", "8"}, {"tp", "8"}, {"world-size", "32"}}, &error);
  EXPECT_EQ(error, "world-size 32 disagrees with the device mesh: dp_shard 8 x tp 8 = 64 ranks");
  meshOf({{"world-size", "12"}, {"tp", "8"}}, &error);
  EXPECT_EQ(error, "world-size 12 is not a multiple of tp x pp x cp = 8");
  meshOf({{"dp-shard", "6"}, {"ep", "4"}}, &error);
  EXPECT_EQ(error, "ep 4 must divide dp-shard x cp = 6 (the experts are sharded over those ranks)");
}

TEST(SetupKeys, AWorldSizeTheMeshDisagreesWithIsExitTwo) {
  std::string model = tempDir() + "/m.onnx";
  writeFile(model, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 4] x) => (float[N, 4] y) { y = Relu(x) })"));
  CliResult bad = runCli({"--train", "--dp-shard", "4", "--tp", "8", "--world-size", "64", model});
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("world-size 64 disagrees with the device mesh: dp_shard 4 x tp 8 = 32 ranks"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  CliResult dump = runCli({"config", "--dump", "--dp-shard", "4", "--tp", "8", model});
  ASSERT_EQ(dump.exitCode, 0) << dump.err;
  EXPECT_NE(dump.out.find("\n  world-size: 32\n  dp-replicate: 1\n  dp-shard: 4\n  tp: 8\n  pp: 1\n  cp: 1\n  ep: 1\n"),
            std::string::npos)
      << dump.out;
}

TEST(SetupKeys, RefusedValuesNameTheKeyTheWayItWasWritten) {
  const SetupKey *zero = findSetupKey("zero");
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->check("4", SetupSyntax::CommandLine).error, "--zero expects an integer from 0 to 3, got '4'");
  EXPECT_EQ(zero->check("4", SetupSyntax::ConfigFile).error, "'zero' expects an integer from 0 to 3, got '4'");
  const SetupKey *dims = findSetupKey("dim");
  ASSERT_TRUE(dims);
  EXPECT_EQ(dims->check("batch", SetupSyntax::CommandLine).error, "--dim expects NAME=SIZE, got 'batch'");
  auto layer = parseConfigYaml("setup:\n  frobs: 3\n", "x/.graphlint.yaml");
  ASSERT_FALSE(bool(layer));
  EXPECT_EQ(llvm::toString(layer.takeError()), "x/.graphlint.yaml:2: unknown key 'setup: frobs' (known: " +
                                                   setupKeyNames() + ")");
}

TEST(SetupKeys, TheTargetIsResolvedOnceWithItsLinks) {
  ConfigLayer cli;
  cli.origin = "command line";
  for (auto [key, value] : {std::pair{"target", "a100-80g"}, {"intra", "pcie5"}}) {
    const SetupKey *k = findSetupKey(key);
    cli.setup.push_back({k, *k->check(value, SetupSyntax::CommandLine).value});
  }
  Config c = llvm::cantFail(resolveConfig({&cli}, "m.onnx"));
  ASSERT_TRUE(c.setup.hardware);
  EXPECT_EQ(c.setup.hardware->name, "A100-80GB");
  EXPECT_EQ(c.setup.targetProfile(), c.setup.hardware);
  ASSERT_TRUE(c.setup.intraLink);
  EXPECT_EQ(c.setup.intraLink->name, "pcie5");
  ASSERT_TRUE(c.setup.interLink) << "no --inter: the target's default, resolved with it";
  EXPECT_EQ(c.setup.interLink->name, c.setup.hardware->interNode);
  EXPECT_EQ(c.setup.nodeLink(Setup::LinkLevel::InterNode), c.setup.interLink);
  // A Setup changed after resolution does not keep a stale profile or link.
  c.setup.target = "L4";
  ASSERT_TRUE(c.setup.targetProfile());
  EXPECT_EQ(c.setup.targetProfile()->name, "L4");
  ASSERT_TRUE(c.setup.nodeLink(Setup::LinkLevel::InterNode));
  EXPECT_EQ(c.setup.nodeLink(Setup::LinkLevel::InterNode)->name, c.setup.targetProfile()->interNode);
  EXPECT_EQ(c.setup.nodeLink(Setup::LinkLevel::IntraNode)->name, "pcie5") << "the named link stays";
  std::string unknown;
  c.setup.intra = "carrier-pigeon";
  EXPECT_EQ(c.setup.nodeLink(Setup::LinkLevel::IntraNode, &unknown)->name, c.setup.targetProfile()->intraNode);
  EXPECT_EQ(unknown, "carrier-pigeon");
}

// data/hardware.yaml is embedded: a binary copied where no hardware.yaml is
// (no share/graphlint beside it, no source tree) still knows every target.
TEST(HardwareData, AMovedBinaryKnowsItsTargets) {
  std::string dir = tempDir();
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir + "/bin"));
  std::string exe = dir + "/bin/graphlint";
  ASSERT_FALSE(llvm::sys::fs::copy_file(GRAPHLINT_CLI, exe));
  ASSERT_FALSE(llvm::sys::fs::setPermissions(exe, llvm::sys::fs::all_exe | llvm::sys::fs::owner_all));
  std::string model = dir + "/m.onnx";
  writeFile(model, onnxFromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[4] x) => (float[4] y) { y = Relu(x) })"));
  std::string out = dir + "/out", err = dir + "/err";
  llvm::Optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(out), llvm::StringRef(err)};
  std::vector<llvm::StringRef> argv{exe, "config", "--dump", "--target", "rtx4090", "--inter", "ib-ndr", model};
  int rc = llvm::sys::ExecuteAndWait(exe, argv, llvm::None, redirects, 60);
  EXPECT_EQ(rc, 0) << readFile(err);
  std::string dump = readFile(out);
  EXPECT_NE(dump.find("\n  target: RTX-4090\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\n  inter: \"ndr\"\n"), std::string::npos) << dump;  // an alias reports canonically
  // The embedded table is the shipped file, profile for profile.
  auto shipped = parseHardwareYaml(readFile(sourcePath("data/hardware.yaml")), "hardware.yaml");
  ASSERT_TRUE(bool(shipped)) << llvm::toString(shipped.takeError());
  HardwareCatalog builtin = HardwareCatalog::builtin();
  ASSERT_EQ(shipped->size(), builtin.profiles().size());
  for (size_t i = 0; i < shipped->size(); ++i)
    EXPECT_EQ((*shipped)[i].name, builtin.profiles()[i].name);
}

}  // namespace
