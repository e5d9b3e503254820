// Size expressions as PyTorch writes them (FX format version 2, sympy strings
// in .pt2 archives): parsed, printed back in the same grammar, evaluated with
// Python's floor semantics and int64 overflow checks, and substituted into
// dims so that `-D batch=8` rescales a flattened `batch*seq` dim.
#include "graphlint/ir/SymExpr.h"
#include "graphlint/ir/SymbolBinder.h"
#include "graphlint/ir/Type.h"

#include <gtest/gtest.h>

#include <map>

using namespace graphlint;

namespace {

SymExprRef parsed(const std::string &text) {
  llvm::Expected<SymExprRef> e = SymExpr::parse(text);
  if (!e) {
    ADD_FAILURE() << text << ": " << llvm::toString(e.takeError());
    return SymExpr::constant(0);
  }
  return *e;
}

std::string parseError(const std::string &text) {
  llvm::Expected<SymExprRef> e = SymExpr::parse(text);
  if (e)
    return "parsed as " + (*e)->str();
  return llvm::toString(e.takeError());
}

std::optional<int64_t> eval(const std::string &text, std::map<std::string, int64_t> env) {
  return parsed(text)->evaluate([&](llvm::StringRef n) -> std::optional<int64_t> {
    auto it = env.find(n.str());
    if (it == env.end())
      return std::nullopt;
    return it->second;
  });
}

TEST(SymExpr, PrintsTheContractExamplesBackUnchanged) {
  for (const char *text : {"batch", "batch*seq", "12*batch", "seq + 1", "(seq - 1)//2 + 1", "Max(1, seq)",
                           "a - (b - c)", "a*(b//c)", "-s0 + 4", "s0**2", "CeilDiv(s0, 8)", "Min(s0, s1, 4)",
                           "s0 % 3", "u0"}) {
    SCOPED_TRACE(text);
    std::string printed = parsed(text)->str();
    EXPECT_EQ(printed, llvm::StringRef(text).str() == "s0 % 3" ? "s0%3" : text);
    // What is printed parses to the same tree.
    EXPECT_TRUE(parsed(printed)->equals(*parsed(text)));
  }
}

TEST(SymExpr, ParsesSympySpellings) {
  EXPECT_EQ(parsed("FloorDiv(s0, 2)")->str(), "s0//2");
  EXPECT_EQ(parsed("PythonMod(s0, 4)")->str(), "s0%4");
  EXPECT_EQ(parsed("CeilToInt(s0*s1)")->str(), "s0*s1");
  EXPECT_EQ(parsed("max(s0,s1)")->str(), "Max(s0, s1)");
  EXPECT_EQ(parsed("  2 * s0 +1 ")->str(), "2*s0 + 1");
  EXPECT_EQ(parsed("s0**2*s1")->str(), "s0**2*s1");
}

TEST(SymExpr, EvaluatesWithPythonFloorSemantics) {
  std::map<std::string, int64_t> env{{"batch", 8}, {"seq", 2048}, {"n", -7}};
  EXPECT_EQ(eval("batch*seq", env), 16384);
  EXPECT_EQ(eval("(seq - 1)//2 + 1", env), 1024);
  EXPECT_EQ(eval("n//2", env), -4);     // Python: -7 // 2 == -4
  EXPECT_EQ(eval("n % 3", env), 2);     // Python: -7 % 3 == 2
  EXPECT_EQ(eval("7 % -3", env), -2);   // the divisor's sign
  EXPECT_EQ(eval("CeilDiv(seq + 1, 8)", env), 257);
  EXPECT_EQ(eval("Max(1, n)", env), 1);
  EXPECT_EQ(eval("Min(batch, seq, 3)", env), 3);
  EXPECT_EQ(eval("batch**3", env), 512);
  EXPECT_EQ(eval("-batch + 10", env), 2);
}

TEST(SymExpr, UnknownOnUnboundSymbolDivisionByZeroOrOverflow) {
  std::map<std::string, int64_t> env{{"big", INT64_MAX / 2 + 1}, {"zero", 0}};
  EXPECT_EQ(eval("u0*4", env), std::nullopt);
  EXPECT_EQ(eval("big*2", env), std::nullopt);
  EXPECT_EQ(eval("big + big", env), std::nullopt);
  EXPECT_EQ(eval("7//zero", env), std::nullopt);
  EXPECT_EQ(eval("7 % zero", env), std::nullopt);
  EXPECT_EQ(eval("2**63", env), std::nullopt);
  EXPECT_EQ(eval("2**62", env), int64_t{1} << 62);
  EXPECT_EQ(eval("1**1000000000000", env), 1);  // no loop to the exponent
}

TEST(SymExpr, FoldsConstantsWhenBuilt) {
  EXPECT_EQ(parsed("2*3 + 1")->str(), "7");
  EXPECT_TRUE(parsed("2*3 + 1")->isConstant());
  EXPECT_EQ(parsed("1*s0 + 0")->str(), "s0");
  EXPECT_EQ(parsed("s0*0 + s1")->str(), "s1");
  EXPECT_EQ(parsed("--s0")->str(), "s0");
  // A constant that overflows stays an expression rather than wrapping.
  EXPECT_FALSE(parsed("9223372036854775807 + 1")->isConstant());
}

TEST(SymExpr, SubstituteBindsSomeSymbolsAndKeepsTheRest) {
  SymExprRef e = parsed("batch*heads*u0");
  auto bindBatch = [](llvm::StringRef n) -> std::optional<int64_t> {
    if (n == "batch")
      return 8;
    if (n == "heads")
      return 12;
    return std::nullopt;
  };
  EXPECT_EQ(e->substitute(e, bindBatch)->str(), "96*u0");
  std::set<std::string> syms;
  e->collectSymbols(syms);
  EXPECT_EQ(syms, (std::set<std::string>{"batch", "heads", "u0"}));
  // Nothing bound: the very same tree comes back.
  auto none = [](llvm::StringRef) -> std::optional<int64_t> { return std::nullopt; };
  EXPECT_EQ(e->substitute(e, none), e);
}

TEST(SymExpr, RejectsMalformedTextWithOneLine) {
  EXPECT_EQ(parseError("batch*"), "invalid size expression 'batch*': unexpected end");
  EXPECT_EQ(parseError("(seq"), "invalid size expression '(seq': missing ')'");
  EXPECT_EQ(parseError("seq / 2"), "invalid size expression 'seq / 2': unexpected '/'");
  EXPECT_EQ(parseError("Foo(seq)"), "invalid size expression 'Foo(seq)': unknown function 'Foo'");
  EXPECT_EQ(parseError("FloorDiv(seq)"), "invalid size expression 'FloorDiv(seq)': FloorDiv takes 2 argument(s), got 1");
  EXPECT_EQ(parseError(""), "empty size expression");
  EXPECT_EQ(parseError("99999999999999999999"),
            "invalid size expression '99999999999999999999': integer '99999999999999999999' does not fit in 64 bits");
  std::string deep(5000, '(');
  EXPECT_NE(parseError(deep + "1").find("nested deeper than 128 levels"), std::string::npos);
  EXPECT_NE(parseError(std::string(70000, '1')).find("longer than the limit"), std::string::npos);
}

TEST(SymExpr, DimsBindThroughExpressions) {
  Dim d = Dim::of(parsed("batch*seq"));
  ASSERT_TRUE(d.isSymbolic());
  EXPECT_FALSE(d.isSymbol());
  EXPECT_EQ(d.str(), "batch*seq");
  EXPECT_TRUE(Dim::named("batch").isSymbol());
  EXPECT_EQ(Dim::named("batch").symbolName(), "batch");
  EXPECT_TRUE(Dim::of(parsed("4*2")).isStatic());
  EXPECT_EQ(Dim::of(parsed("4*2")).value, 8);
  EXPECT_EQ(Dim::of(parsed("batch*seq")), Dim::of(parsed("batch * seq")));
  EXPECT_NE(Dim::of(parsed("batch*seq")), Dim::of(parsed("seq*batch")));  // structural, not algebraic
  // 32 bytes: the static, unknown and single-symbol paths stay as small as before.
  EXPECT_LE(sizeof(Dim), 32u);
}

TEST(SymbolBinder, CliBeatsHintAndUnboundStaysSymbolic) {
  std::map<std::string, int64_t> cli{{"batch", 8}, {"sequence", 4}};
  SymbolBinder b(cli);
  SymbolInfo seq;
  seq.name = "seq";
  seq.hint = 128;
  b.declare(seq);
  SymbolInfo batch;
  batch.name = "batch";
  batch.hint = 2;
  b.declare(batch);
  SymbolInfo u0;
  u0.name = "u0";
  u0.kind = SymbolInfo::Kind::Unbacked;
  u0.max = 512;
  b.declare(u0);
  b.noteInput("ids", Type::tensor(DType::Int64, Shape{true, {Dim::named("batch"), Dim::named("seq")}}));
  Dim flat = b.bind(Dim::of(parsed("batch*seq")));
  ASSERT_TRUE(flat.isStatic());
  EXPECT_EQ(flat.value, 8 * 128);
  EXPECT_EQ(b.bind(Dim::of(parsed("u0 + batch"))).str(), "u0 + 8");
  Model m;
  b.finish(m);
  ASSERT_EQ(m.symbols.size(), 3u);
  EXPECT_EQ(m.symbols[0].name, "batch");
  EXPECT_EQ(m.symbols[0].origin, SymbolInfo::Origin::Cli);
  EXPECT_EQ(m.symbols[1].name, "seq");
  EXPECT_EQ(m.symbols[1].origin, SymbolInfo::Origin::Hint);
  EXPECT_EQ(m.symbols[1].value, 128);
  EXPECT_EQ(m.symbols[2].origin, SymbolInfo::Origin::Unbound);
  ASSERT_EQ(m.setupWarnings.size(), 1u);
  EXPECT_EQ(m.setupWarnings[0],
            "-D sequence=4 binds nothing: the file's size symbols are batch, seq, u0 (inputs: ids i64[batch,seq])");
}

TEST(SymbolBinder, StaticFileNamesItsInputs) {
  std::map<std::string, int64_t> cli{{"batch", 8}};
  SymbolBinder b(cli);
  b.noteInput("x", Type::tensor(DType::Float, Shape::of({1, 3, 224, 224})));
  Model m;
  b.finish(m);
  ASSERT_EQ(m.setupWarnings.size(), 1u);
  EXPECT_EQ(m.setupWarnings[0], "-D batch=8 binds nothing: the file has no symbolic dims, its inputs are static "
                                "(x f32[1,3,224,224]); re-export with dynamic sizes to rescale it");
  EXPECT_TRUE(m.symbols.empty());
}

}  // namespace
