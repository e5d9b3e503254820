// The shared guards every reader and writer goes through (issue 12): the
// nesting pre-scan before llvm::json / llvm::yaml, the linear glob matcher,
// the one-line message escaping, and the output guard + atomic writes.
#include "TestSupport.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/JsonInput.h"
#include "graphlint/ir/ModuleContainers.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/engine/Config.h"
#include "graphlint/engine/Glob.h"
#include "graphlint/engine/OutputFiles.h"

#include <gtest/gtest.h>

#include <llvm/Support/FileSystem.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace graphlint;
using namespace graphlint::test;

namespace {

std::string nestingError(const std::string &text, TextSyntax syntax, unsigned limit = kMaxNestingDepth) {
  llvm::Error e = checkNestingDepth(text, syntax, "f", limit);
  return e ? llvm::toString(std::move(e)) : "";
}

std::string repeat(const std::string &s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

// ---- nesting ---------------------------------------------------------------

TEST(NestingDepth, JsonAtTheLimitPassesOnePastIsRefusedWithItsLine) {
  std::string ok = repeat("[", 64) + repeat("]", 64);
  EXPECT_EQ(nestingError(ok, TextSyntax::Json), "");
  std::string deep = "{\n\"a\":\n" + repeat("[", 65) + repeat("]", 65) + "}";
  EXPECT_EQ(nestingError(deep, TextSyntax::Json),
            "f:3: JSON nested deeper than 64 levels; refused (the parser would exhaust its stack)");
}

TEST(NestingDepth, YamlPrefixesDoNotHideCompactNesting) {
  // Round 2, gap 13: a document marker, an anchor or a tag before "- - -"
  // hid 40,000 levels from the pre-scan, and llvm::yaml overflowed its stack.
  for (const char *prefix : {"--- ", "&a ", "!!seq ", "--- &a !!seq "}) {
    std::string text = std::string(prefix) + repeat("- ", 80) + "x\n";
    EXPECT_NE(nestingError(text, TextSyntax::Yaml).find("YAML nested deeper than 64 levels"), std::string::npos)
        << prefix;
  }
  // Anchors, tags and markers themselves open nothing.
  EXPECT_EQ(nestingError("--- &a !!map\nk: &b !!str v\nl:\n  - x\n", TextSyntax::Yaml), "");
}

TEST(NestingDepth, JsonStringsDoNotCount) {
  std::string s = "{\"k\": \"" + repeat("[{", 500) + "\\\"" + repeat("[", 100) + "\"}";
  EXPECT_EQ(nestingError(s, TextSyntax::Json), "");
}

TEST(NestingDepth, YamlFlowAndBlockNestingBothCount) {
  EXPECT_EQ(nestingError("rules: {GL001: " + repeat("[", 70) + repeat("]", 70) + "}\n", TextSyntax::Yaml),
            "f:1: YAML nested deeper than 64 levels; refused (the parser would exhaust its stack)");
  // Compact block sequences: every "- " is one level.
  EXPECT_NE(nestingError("a:\n  " + repeat("- ", 80) + "x\n", TextSyntax::Yaml), "");
  // Indentation: 70 nested mappings.
  std::string block;
  for (int i = 0; i < 70; ++i)
    block += std::string(static_cast<size_t>(i), ' ') + "k" + std::to_string(i) + ":\n";
  EXPECT_NE(nestingError(block, TextSyntax::Yaml), "");
  EXPECT_EQ(nestingError(block, TextSyntax::Yaml, 80), "");
}

TEST(NestingDepth, YamlQuotesCommentsAndBlockScalarsDoNotCount) {
  std::string text = "a: '" + repeat("[", 100) + " it''s'\n"
                     "b: \"" + repeat("{", 100) + " \\\" \"\n"
                     "# " + repeat("[", 100) + "\n"
                     "c: |\n  " + repeat("[", 100) + "\n  'unbalanced\n"
                     "d: plain [ text, it's ok\n";
  EXPECT_EQ(nestingError(text, TextSyntax::Yaml), "");
  // ...but a quote inside a plain scalar does not hide what follows.
  std::string hidden = "a: it 'x\nb: " + repeat("[", 70) + "\n";
  EXPECT_NE(nestingError(hidden, TextSyntax::Yaml), "");
  std::string afterBlock = "c: |\n  'open\nd: " + repeat("[", 70) + "\n";
  EXPECT_NE(nestingError(afterBlock, TextSyntax::Yaml), "");
}

TEST(NestingDepth, ShippedFilesPass) {
  EXPECT_EQ(nestingError(readFile(sourcePath("data/hardware.yaml")), TextSyntax::Yaml), "");
  EXPECT_EQ(nestingError(readFile(sourcePath("tests/fixtures/robustness/fx_newline.fx.json")), TextSyntax::Json), "");
}

TEST(NestingDepth, ConfigParserRefusesDeepYamlInOneLine) {
  auto layer = parseConfigYaml("rules:\n  GL001: " + repeat("[", 100000) + "\n", "deep.yaml");
  ASSERT_FALSE(layer);
  std::string msg = llvm::toString(layer.takeError());
  EXPECT_EQ(msg.rfind("deep.yaml:2: YAML nested deeper than 64 levels", 0), 0u) << msg;
}

// ---- input files ------------------------------------------------------------

TEST(InputFile, FifosDevicesAndDirectoriesAreRefusedWithoutBlocking) {
  std::string dir = tempDir(), fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // A reader that blocked on the FIFO would hang the test past its CTest timeout.
  auto r = readInputFile(fifo, InputKind::Config);
  ASSERT_FALSE(r);
  EXPECT_EQ(llvm::toString(r.takeError()),
            fifo + ": is a FIFO (named pipe), not a regular file (config files must be regular files)");
  auto z = readInputFile("/dev/zero", InputKind::Baseline);
  ASSERT_FALSE(z);
  EXPECT_EQ(llvm::toString(z.takeError()),
            "/dev/zero: is a character device, not a regular file (baselines must be regular files)");
  auto d = readInputFile(dir, InputKind::HardwareFile);
  ASSERT_FALSE(d);
  EXPECT_NE(llvm::toString(d.takeError()).find("is a directory, not a regular file"), std::string::npos);
}

TEST(InputFile, LargerThanItsKindIsRefusedBeforeReading) {
  std::string path = tempDir() + "/big.yaml";
  writeFile(path, "");
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(maxInputBytes(InputKind::Config) + 1)), 0);
  auto r = readInputFile(path, InputKind::Config);
  ASSERT_FALSE(r);
  EXPECT_EQ(llvm::toString(r.takeError()), path + ": is 1.00 MiB, larger than the 1.00 MiB limit for config files");
  writeFile(path, "select: [ALL]\n");
  auto ok = readInputFile(path, InputKind::Config);
  ASSERT_TRUE(bool(ok));
  EXPECT_EQ(*ok, "select: [ALL]\n");
}

// ---- glob ---------------------------------------------------------------------

bool globMatch(const std::string &pattern, const std::string &text) {
  auto g = Glob::compile(pattern);
  EXPECT_TRUE(bool(g)) << pattern;
  return g && g->matches(text);
}

TEST(Glob, DocumentedSemantics) {
  EXPECT_TRUE(globMatch("encoder.*", "encoder.layers.3.attn"));
  EXPECT_TRUE(globMatch("*.onnx", "models/sub/x.onnx"));  // '*' crosses '/'
  EXPECT_FALSE(globMatch("*.onnx", "x.onnx.bak"));
  EXPECT_TRUE(globMatch("layer?", "layer7"));
  EXPECT_FALSE(globMatch("layer?", "layer"));
  EXPECT_TRUE(globMatch("l[0-9]x", "l5x"));
  EXPECT_FALSE(globMatch("l[!0-9]x", "l5x"));
  EXPECT_TRUE(globMatch("l[^0-9]x", "lax"));
  EXPECT_TRUE(globMatch("[]]", "]"));
  EXPECT_TRUE(globMatch("a\\*b", "a*b"));
  EXPECT_FALSE(globMatch("a\\*b", "axb"));
  EXPECT_TRUE(globMatch("*", ""));
  EXPECT_TRUE(globMatch("a**b", "ab"));
  EXPECT_TRUE(globMatch("*a*b*c", "xxaxxbxxbxc"));
  EXPECT_FALSE(globMatch("*a*b*c", "xxaxxbxxbx"));
}

TEST(Glob, BadPatternsAreErrors) {
  for (const char *p : {"[abc", "x\\", "[z-a]"}) {
    auto g = Glob::compile(p);
    EXPECT_FALSE(bool(g)) << p;
    if (!g)
      llvm::consumeError(g.takeError());
  }
}

TEST(Glob, ManyStarsFinishInstantly) {
  // Case 15: llvm::GlobPattern backtracked exponentially on this pair
  // (timed in bench/InputScalingBench.cpp).
  std::string pattern = repeat("*a", 64) + "*b", text = repeat("a", 200);
  EXPECT_FALSE(globMatch(pattern, text));
  EXPECT_TRUE(globMatch(pattern, repeat("a", 64) + "b"));
}

TEST(Glob, OneStarBeforeALongSegmentIsLinear) {
  // Round 2, gap 15: "*" + 50,000 'a' + "b" against a 400,000-byte name took
  // 27 s (the two-pointer walk retried the whole segment at every byte;
  // timed in bench/InputScalingBench.cpp).
  std::string pattern = "*" + repeat("a", 50000) + "b", text = repeat("a", 400000);
  EXPECT_FALSE(globMatch(pattern, text));
  EXPECT_TRUE(globMatch(pattern, text + "b"));
  // A long segment between two stars: KMP, and bit-parallel with a class.
  EXPECT_FALSE(globMatch("*" + repeat("a", 50000) + "b*", text));
  EXPECT_TRUE(globMatch("*" + repeat("a", 50000) + "b*", text + "bc"));
  EXPECT_FALSE(globMatch("*" + repeat("[a]", 5000) + "b*", text));
  EXPECT_TRUE(globMatch("*" + repeat("?", 5000) + "b*", text + "b"));
}

TEST(Glob, SegmentsMatchAtTheirLeftmostPlaceAndTheEndsAreAnchored) {
  EXPECT_TRUE(globMatch("a*b?d*e", "abxdzzbcde"));
  EXPECT_FALSE(globMatch("a*b?d*e", "abxdzzbcd"));
  EXPECT_TRUE(globMatch("*aab*", "xaaab"));  // KMP must fall back after "aa"
  EXPECT_TRUE(globMatch("*[ab]?c*", "zzbxc"));
  EXPECT_FALSE(globMatch("ab*ba", "aba"));  // prefix and suffix may not overlap
  EXPECT_TRUE(globMatch("ab*ba", "abba"));
}

// ---- JSON values and memory (round 2, N1) ------------------------------------

std::string jsonError(const std::string &text, JsonLimits limits = {}, JsonRefusal *why = nullptr) {
  auto doc = parseJsonInput(text, "f.json", limits, why);
  return doc ? "" : llvm::toString(doc.takeError());
}

TEST(JsonInput, ReadsWhatLlvmJsonReads) {
  const char *text = R"({"a": [1, -2, 18446744073709551615, 2.5, true, null, "x\u00e9\ud83d\ude00\n"],
                         "b": {"c": {}}, "d": []})";
  auto ours = parseJsonInput(text, "f.json");
  auto theirs = llvm::json::parse(text);
  ASSERT_TRUE(bool(ours)) << llvm::toString(ours.takeError());
  ASSERT_TRUE(bool(theirs));
  EXPECT_EQ(*ours, *theirs);
  EXPECT_EQ(ours->getAsObject()->getArray("a")->size(), 7u);
  // llvm::json 14 clamps integers that overflow int64, and so does this reader.
  EXPECT_EQ((*ours->getAsObject()->getArray("a"))[2].getAsInteger().getValueOr(0), INT64_MAX);
}

TEST(JsonInput, SyntaxErrorsReadAsLlvmJsonsAndSayWhy) {
  JsonRefusal why;
  EXPECT_EQ(jsonError("[1 2]", {}, &why), "[1:4, byte=4]: Expected , or ] after array element");
  EXPECT_EQ(why, JsonRefusal::Syntax);
  EXPECT_EQ(jsonError("{\"a\" 1}"), "[1:6, byte=6]: Expected : after object key");
  EXPECT_EQ(jsonError("{1}"), "[1:2, byte=2]: Expected object key");
  EXPECT_EQ(jsonError("[1] x"), "[1:4, byte=4]: Text after end of document");
  EXPECT_EQ(jsonError("\"a\\q\""), "[1:4, byte=4]: Invalid escape sequence");
  EXPECT_EQ(jsonError("["), "[1:1, byte=1]: Unexpected EOF");
  // A repeated key keeps its last value, as llvm::json::parse does.
  auto dup = parseJsonInput("{\"a\": 1, \"a\": 2}", "f.json");
  ASSERT_TRUE(bool(dup));
  EXPECT_EQ(dup->getAsObject()->getInteger("a").getValueOr(0), 2);
  EXPECT_NE(jsonError("\"\xff\"").find("Invalid UTF-8"), std::string::npos);
  EXPECT_NE(jsonError("{\"a\": NaN}").find("Invalid JSON value"), std::string::npos);
}

TEST(JsonInput, TooManyValuesAreRefusedBeforeParsingWithTheFileName) {
  std::string many = "[" + repeat("{\"a\":0},", 999) + "{\"a\":0}]";
  JsonRefusal why;
  EXPECT_EQ(jsonError(many, {kMaxNestingDepth, 1000}, &why),
            "f.json: holds more than 1000 JSON values; refused (each costs memory: a real graph of 1M nodes holds "
            "about 60M)");
  EXPECT_EQ(why, JsonRefusal::Limit);
  EXPECT_EQ(jsonError(many, {kMaxNestingDepth, 2100}), "");
  // Commas and brackets inside strings are not values.
  EXPECT_EQ(jsonError("[\"" + repeat(",[{", 5000) + "\"]", {kMaxNestingDepth, 10}), "");
  JsonRefusal deep;
  EXPECT_NE(jsonError(repeat("[", 65) + repeat("]", 65), {}, &deep).find("f.json:1: JSON nested deeper"),
            std::string::npos);
  EXPECT_EQ(deep, JsonRefusal::Limit);
}

TEST(JsonInput, SmallObjectsCostAFewBucketsNotSixtyFour) {
  // llvm::json gives every object 64 buckets (~4 KiB): 300,000 {"a":0} took
  // 2.2 GB. Objects built here hold tables sized to their members; iterate
  // one to check the table is a working DenseMap of that size.
  auto doc = parseJsonInput("[" + repeat("{\"a\":0,\"b\":1},", 9) + "{\"a\":0,\"b\":1}]", "f.json");
  ASSERT_TRUE(bool(doc));
  for (const llvm::json::Value &v : *doc->getAsArray()) {
    const llvm::json::Object *o = v.getAsObject();
    ASSERT_TRUE(o);
    EXPECT_EQ(o->getInteger("b").getValueOr(0), 1);
    EXPECT_EQ(o->size(), 2u);
    using Storage = llvm::DenseMap<llvm::json::ObjectKey, llvm::json::Value, llvm::DenseMapInfo<llvm::StringRef>>;
    EXPECT_LE(reinterpret_cast<const Storage *>(o)->getMemorySize(), 4 * sizeof(Storage::value_type));
  }
}

// ---- module paths (round 2, gap 16) ----------------------------------------

TEST(ModulePathTrie, DeepPathsCostTheirLengthNotItsSquare) {
  std::string path = "m";
  for (int i = 0; i < 50000; ++i)
    path += ".m" + std::to_string(i % 7);
  // The time, over doubling depths, is bench/InputScalingBench.cpp's.
  ModulePathTrie trie;
  trie.insert(path);
  EXPECT_EQ(trie.size(), 50002u);  // the root and one node per component
  EXPECT_TRUE(trie.find(llvm::StringRef(path).take_front(path.find(".m3"))));
  EXPECT_FALSE(trie.find("m.m1"));
  EXPECT_EQ(trie.path(*trie.find("m.m0.m1")), "m.m0.m1");
}

// ---- messages ------------------------------------------------------------------

TEST(MessageText, ControlCharactersAreEscapedAndLongStringsCut) {
  EXPECT_EQ(escapedForMessage("sele\nignore\t\x1b[31m"), "sele\\nignore\\t\\x1b[31m");
  std::string cut = escapedForMessage(std::string(500, 'x'), 10);
  EXPECT_EQ(cut, "xxxxxxxxxx...(500 bytes)");
  // A UTF-8 sequence is not split.
  EXPECT_EQ(escapedForMessage("ab\xc3\xa9", 3), "ab...(4 bytes)");
  EXPECT_EQ(oneLine("a\nb"), "a\\nb");
  // Unicode line and paragraph separators and NEL break lines too.
  EXPECT_EQ(oneLine("a\xe2\x80\xa8" "b\xe2\x80\xa9" "c\xc2\x85"), "a\\u2028b\\u2029c\\u0085");
}

// ---- outputs ----------------------------------------------------------------------

TEST(OutputGuard, RefusesEveryPathThatResolvesToAnInput) {
  std::string dir = tempDir(), model = dir + "/m.onnx";
  writeFile(model, "bytes");
  llvm::sys::fs::create_directory(dir + "/sub");
  ASSERT_FALSE(llvm::sys::fs::create_link(model, dir + "/link.onnx"));
  ASSERT_FALSE(llvm::sys::fs::create_hard_link(model, dir + "/hard.onnx"));
  OutputGuard g;
  g.addInput(model, "model");
  for (const std::string &out : {model, dir + "/sub/../m.onnx", dir + "/link.onnx", dir + "/hard.onnx"}) {
    llvm::Error e = g.addOutput(out, "--output");
    ASSERT_TRUE(bool(e)) << out;
    EXPECT_EQ(llvm::toString(std::move(e)), "refusing to write --output '" + out + "': it is the model '" + model +
                                                 "' this run reads (the output would overwrite it)");
  }
  EXPECT_FALSE(bool(g.addOutput(dir + "/new.txt", "--output")));
  EXPECT_FALSE(bool(g.addOutput("-", "--output")));
  EXPECT_FALSE(bool(g.addOutput(model, "--write-baseline", "model")));
  EXPECT_EQ(readFile(model), "bytes");
}

// Two outputs of one run naming one file (issue 40, N9): the second is
// refused whether the file exists (same inode) or not (same absolute path,
// however it is spelled); stdout and devices are never compared.
TEST(OutputGuard, RefusesTwoOutputsOfOneRunNamingOneFile) {
  std::string dir = tempDir();
  llvm::sys::fs::create_directory(dir + "/sub");
  OutputGuard g;
  ASSERT_FALSE(bool(g.addOutput(dir + "/out.txt", "--output")));
  llvm::Error e = g.addOutput(dir + "/sub/../out.txt", "--emit-dot");
  ASSERT_TRUE(bool(e));
  EXPECT_EQ(llvm::toString(std::move(e)), "refusing to write --emit-dot '" + dir + "/sub/../out.txt': --output writes "
                                          "the same file '" + dir + "/out.txt' (one output would replace the other)");
  writeFile(dir + "/existing.svg", "old");
  ASSERT_FALSE(llvm::sys::fs::create_link(dir + "/existing.svg", dir + "/alias.svg"));
  ASSERT_FALSE(bool(g.addOutput(dir + "/existing.svg", "--memory-plot")));
  llvm::Error link = g.addOutput(dir + "/alias.svg", "--write-baseline");
  EXPECT_NE(llvm::toString(std::move(link)).find("--memory-plot writes the same file"), std::string::npos);
  EXPECT_FALSE(bool(g.addOutput("-", "--output")));
  EXPECT_FALSE(bool(g.addOutput("/dev/null", "--emit-dot")));
  EXPECT_FALSE(bool(g.addOutput("/dev/null", "--memory-plot")));
  EXPECT_EQ(readFile(dir + "/existing.svg"), "old");
}

TEST(AtomicOutput, TargetIsReplacedOnlyOnCommit) {
  std::string dir = tempDir(), path = dir + "/report.txt";
  writeFile(path, "old report");
  chmod(path.c_str(), 0640);
  {
    auto out = AtomicOutput::create(path);
    ASSERT_TRUE(bool(out));
    (*out)->os() << "half a rep";
    // Destroyed without commit: a failed run.
  }
  EXPECT_EQ(readFile(path), "old report");
  std::error_code ec;
  unsigned entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 1u) << "the temporary file was left behind";
  ASSERT_FALSE(bool(writeOutputAtomically(path, [](llvm::raw_ostream &os) { os << "new report"; })));
  EXPECT_EQ(readFile(path), "new report");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(AtomicOutput, ASymlinkKeepsPointingAtTheReplacedFile) {
  std::string dir = tempDir(), target = dir + "/real.txt", link = dir + "/link.txt";
  writeFile(target, "old");
  ASSERT_FALSE(llvm::sys::fs::create_link(target, link));
  ASSERT_FALSE(bool(writeOutputAtomically(link, [](llvm::raw_ostream &os) { os << "new"; })));
  EXPECT_TRUE(llvm::sys::fs::is_symlink_file(link));
  EXPECT_EQ(readFile(target), "new");
}

TEST(AtomicOutput, DevicesAreWrittenInPlace) {
  EXPECT_FALSE(bool(writeOutputAtomically("/dev/null", [](llvm::raw_ostream &os) { os << "x"; })));
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status("/dev/null", st));
  EXPECT_EQ(st.type(), llvm::sys::fs::file_type::character_file);
}

TEST(AtomicOutput, UnwritableDirectoryFailsBeforeAnyWork) {
  auto out = AtomicOutput::create("/nonexistent-dir/report.txt");
  ASSERT_FALSE(bool(out));
  EXPECT_EQ(llvm::toString(out.takeError()).rfind("cannot write '/nonexistent-dir/report.txt': ", 0), 0u);
}

}  // namespace
