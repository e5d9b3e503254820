#include "graphlint/ir/SymExpr.h"
#include "graphlint/ir/MessageText.h"

#include <fmt/format.h>

#include <cctype>

namespace graphlint {
namespace {

using Op = SymExpr::Op;

constexpr size_t kMaxExprText = 64 * 1024;  // longer than any real SymInt
constexpr unsigned kMaxExprDepth = 128;      // the parser recurses

// Python's // and %: the quotient rounds toward -inf, the remainder takes the
// divisor's sign.
std::optional<int64_t> floorDiv(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

std::optional<int64_t> pyMod(int64_t a, int64_t b) {
  if (b == 0)
    return std::nullopt;
  if (b == -1)
    return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

std::optional<int64_t> apply(Op op, llvm::ArrayRef<int64_t> v) {
  int64_t r = 0;
  switch (op) {
  case Op::Const:
  case Op::Sym: return std::nullopt;
  case Op::Neg:
    if (__builtin_sub_overflow(int64_t{0}, v[0], &r))
      return std::nullopt;
    return r;
  case Op::Add:
    if (__builtin_add_overflow(v[0], v[1], &r))
      return std::nullopt;
    return r;
  case Op::Sub:
    if (__builtin_sub_overflow(v[0], v[1], &r))
      return std::nullopt;
    return r;
  case Op::Mul:
    if (__builtin_mul_overflow(v[0], v[1], &r))
      return std::nullopt;
    return r;
  case Op::FloorDiv: return floorDiv(v[0], v[1]);
  case Op::CeilDiv: {
    // -(-a // b)
    if (v[0] == INT64_MIN)
      return std::nullopt;
    auto q = floorDiv(-v[0], v[1]);
    if (!q || *q == INT64_MIN)
      return std::nullopt;
    return -*q;
  }
  case Op::Mod: return pyMod(v[0], v[1]);
  case Op::Pow: {
    if (v[1] < 0)
      return std::nullopt;
    int64_t acc = 1;
    for (int64_t i = 0; i < v[1]; ++i) {
      if (__builtin_mul_overflow(acc, v[0], &acc))
        return std::nullopt;
      if (acc == 0 || acc == 1)
        break;  // 0**n, 1**n: no need to loop to a huge exponent
      if (acc == -1)
        return (v[1] % 2) ? -1 : 1;
    }
    return acc;
  }
  case Op::Max:
  case Op::Min: {
    r = v[0];
    for (int64_t x : v.drop_front())
      r = op == Op::Max ? std::max(r, x) : std::min(r, x);
    return r;
  }
  }
  return std::nullopt;
}

// --- parser: recursive descent over the FX version 2 grammar ---

struct FuncSpelling {
  const char *name;
  Op op;
  unsigned arity;  // 0: one or more
};
// CeilToInt/FloorToInt/TruncToInt/Identity on an integer are the integer.
constexpr Op kIdentity = Op::Const;
const FuncSpelling kFuncs[] = {
    {"Max", Op::Max, 0},        {"max", Op::Max, 0},         {"Min", Op::Min, 0},
    {"min", Op::Min, 0},        {"FloorDiv", Op::FloorDiv, 2}, {"CeilDiv", Op::CeilDiv, 2},
    {"Mod", Op::Mod, 2},        {"PythonMod", Op::Mod, 2},   {"CeilToInt", kIdentity, 1},
    {"FloorToInt", kIdentity, 1}, {"TruncToInt", kIdentity, 1}, {"Identity", kIdentity, 1},
    {"Pow", Op::Pow, 2},        {"PowByNatural", Op::Pow, 2},
    // sympy's srepr, which torch.export writes: Add(Integer(1), Symbol('s0', ...)).
    {"Add", Op::Add, 0},        {"Mul", Op::Mul, 0},         {"Integer", kIdentity, 1},
};

class Parser {
public:
  explicit Parser(llvm::StringRef t) : text_(t) {}

  llvm::Expected<SymExprRef> run() {
    SymExprRef e = expr(0);
    skipSpace();
    if (error_.empty() && pos_ < text_.size())
      setError(fmt::format("unexpected '{}'", text_[pos_]));
    if (!error_.empty())
      return stringError(fmt::format("invalid size expression '{}': {}", text_.str(), error_));
    return e;
  }

private:
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool eat(llvm::StringRef tok) {
    skipSpace();
    if (!text_.substr(pos_).startswith(tok))
      return false;
    pos_ += tok.size();
    return true;
  }
  void setError(std::string e) {
    if (error_.empty())
      error_ = std::move(e);
  }
  SymExprRef bad(std::string e) {
    setError(std::move(e));
    return SymExpr::constant(0);
  }

  SymExprRef expr(unsigned depth) {
    if (depth > kMaxExprDepth)
      return bad(fmt::format("nested deeper than {} levels", kMaxExprDepth));
    SymExprRef lhs = term(depth);
    while (error_.empty()) {
      if (eat("+"))
        lhs = SymExpr::make(Op::Add, {lhs, term(depth)});
      else if (eat("-"))
        lhs = SymExpr::make(Op::Sub, {lhs, term(depth)});
      else
        break;
    }
    return lhs;
  }

  SymExprRef term(unsigned depth) {
    SymExprRef lhs = unary(depth);
    while (error_.empty()) {
      skipSpace();
      if (text_.substr(pos_).startswith("**"))
        break;  // handled in power()
      if (eat("//"))
        lhs = SymExpr::make(Op::FloorDiv, {lhs, unary(depth)});
      else if (eat("*"))
        lhs = SymExpr::make(Op::Mul, {lhs, unary(depth)});
      else if (eat("%"))
        lhs = SymExpr::make(Op::Mod, {lhs, unary(depth)});
      else
        break;
    }
    return lhs;
  }

  SymExprRef unary(unsigned depth) {
    if (depth > kMaxExprDepth)
      return bad(fmt::format("nested deeper than {} levels", kMaxExprDepth));
    if (eat("-"))
      return SymExpr::make(Op::Neg, {unary(depth + 1)});
    if (eat("+"))
      return unary(depth + 1);
    return power(depth);
  }

  // sympy writes powers as `s0**2` (right-associative, binds tighter than '-').
  SymExprRef power(unsigned depth) {
    SymExprRef base = atom(depth);
    if (error_.empty() && eat("**"))
      return SymExpr::make(Op::Pow, {base, unary(depth + 1)});
    return base;
  }

  SymExprRef atom(unsigned depth) {
    skipSpace();
    if (pos_ >= text_.size())
      return bad("unexpected end");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      int64_t v = 0;
      if (text_.slice(start, pos_).getAsInteger(10, v))
        return bad(fmt::format("integer '{}' does not fit in 64 bits", text_.slice(start, pos_).str()));
      return SymExpr::constant(v);
    }
    if (c == '(') {
      ++pos_;
      SymExprRef e = expr(depth + 1);
      if (!eat(")"))
        return bad("missing ')'");
      return e;
    }
    if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_'))
      return bad(fmt::format("unexpected '{}'", c));
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    llvm::StringRef name = text_.slice(start, pos_);
    if (!eat("("))
      return SymExpr::symbol(name.str());
    if (name == "Symbol")
      return quotedSymbol();
    const FuncSpelling *fn = nullptr;
    for (const FuncSpelling &f : kFuncs)
      if (name == f.name)
        fn = &f;
    if (!fn)
      return bad(fmt::format("unknown function '{}'", name.str()));
    llvm::SmallVector<SymExprRef, 2> args{expr(depth + 1)};
    while (error_.empty() && eat(","))
      args.push_back(expr(depth + 1));
    if (!eat(")"))
      return bad(fmt::format("missing ')' after the arguments of {}", name.str()));
    if (fn->arity && args.size() != fn->arity)
      return bad(fmt::format("{} takes {} argument(s), got {}", name.str(), fn->arity, args.size()));
    if (fn->op == kIdentity)
      return args[0];
    if (fn->op == Op::Add || fn->op == Op::Mul) {  // n-ary in sympy: fold left
      SymExprRef acc = args[0];
      for (size_t i = 1; i < args.size(); ++i)
        acc = SymExpr::make(fn->op, {acc, args[i]});
      return acc;
    }
    return SymExpr::make(fn->op, args);
  }

  // Symbol('s0', positive=True, integer=True): the name, assumptions ignored.
  SymExprRef quotedSymbol() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return bad("expected a quoted name after Symbol(");
    char q = text_[pos_++];
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    llvm::StringRef name = text_.slice(start, pos_);
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || pos_ >= text_.size() || text_[pos_] != q)
      return bad("a symbol name must be an identifier");
    ++pos_;
    // Skip the keyword assumptions up to the closing parenthesis.
    while (pos_ < text_.size() && text_[pos_] != ')' && text_[pos_] != '(')
      ++pos_;
    if (!eat(")"))
      return bad("missing ')' after Symbol");
    return SymExpr::symbol(name.str());
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
  std::string error_;
};

int precedence(Op op) {
  switch (op) {
  case Op::Add:
  case Op::Sub: return 1;
  case Op::Mul:
  case Op::FloorDiv:
  case Op::Mod: return 2;
  case Op::Neg: return 3;
  case Op::Pow: return 4;
  default: return 5;  // atoms and function calls
  }
}

}  // namespace

SymExprRef SymExpr::constant(int64_t v) {
  return std::make_shared<const SymExpr>(Op::Const, v, std::string(), llvm::SmallVector<SymExprRef, 2>{});
}

SymExprRef SymExpr::symbol(std::string name) {
  return std::make_shared<const SymExpr>(Op::Sym, 0, std::move(name), llvm::SmallVector<SymExprRef, 2>{});
}

SymExprRef SymExpr::make(Op op, llvm::ArrayRef<SymExprRef> args) {
  bool allConst = !args.empty();
  llvm::SmallVector<int64_t, 4> vals;
  for (const SymExprRef &a : args) {
    allConst &= a->isConstant();
    vals.push_back(a->value_);
  }
  if (allConst)
    if (std::optional<int64_t> v = apply(op, vals))
      return constant(*v);
  auto isConst = [](const SymExprRef &e, int64_t v) { return e->isConstant() && e->value_ == v; };
  switch (op) {
  case Op::Add:
    if (isConst(args[0], 0))
      return args[1];
    if (isConst(args[1], 0))
      return args[0];
    // sympy writes s0 - 1 as Add(Integer(-1), s0): print it as written by hand.
    for (int i = 0; i < 2; ++i)
      if (args[i]->isConstant() && args[i]->value_ < 0 && args[i]->value_ != INT64_MIN)
        return make(Op::Sub, {args[1 - i], constant(-args[i]->value_)});
    break;
  case Op::Sub:
    if (isConst(args[1], 0))
      return args[0];
    break;
  case Op::Mul:
    if (isConst(args[0], 1))
      return args[1];
    if (isConst(args[1], 1))
      return args[0];
    if (isConst(args[0], 0) || isConst(args[1], 0))
      return constant(0);
    if (isConst(args[0], -1))
      return make(Op::Neg, {args[1]});
    break;
  case Op::FloorDiv:
  case Op::CeilDiv:
    if (isConst(args[1], 1))
      return args[0];
    break;
  case Op::Pow:
    if (isConst(args[1], 1))
      return args[0];
    if (isConst(args[1], 0))
      return constant(1);
    break;
  case Op::Neg:
    if (args[0]->op_ == Op::Neg)
      return args[0]->args_[0];
    break;
  case Op::Max:
  case Op::Min:
    if (args.size() == 1)
      return args[0];
    break;
  default: break;
  }
  return std::make_shared<const SymExpr>(op, 0, std::string(), llvm::SmallVector<SymExprRef, 2>(args.begin(), args.end()));
}

llvm::Expected<SymExprRef> SymExpr::parse(llvm::StringRef text) {
  if (text.size() > kMaxExprText)
    return stringError(
        fmt::format("size expression of {} characters is longer than the limit of {}", text.size(), kMaxExprText));
  if (text.trim().empty())
    return stringError("empty size expression");
  return Parser(text).run();
}

std::optional<int64_t> SymExpr::evaluate(SymLookup lookup) const {
  if (op_ == Op::Const)
    return value_;
  if (op_ == Op::Sym)
    return lookup(name_);
  llvm::SmallVector<int64_t, 4> vals;
  for (const SymExprRef &a : args_) {
    std::optional<int64_t> v = a->evaluate(lookup);
    if (!v)
      return std::nullopt;
    vals.push_back(*v);
  }
  return apply(op_, vals);
}

SymExprRef SymExpr::substitute(const SymExprRef &self, SymLookup lookup) const {
  if (op_ == Op::Const)
    return self;
  if (op_ == Op::Sym) {
    std::optional<int64_t> v = lookup(name_);
    return v ? constant(*v) : self;
  }
  llvm::SmallVector<SymExprRef, 2> args;
  bool changed = false;
  for (const SymExprRef &a : args_) {
    args.push_back(a->substitute(a, lookup));
    changed |= args.back() != a;
  }
  return changed ? make(op_, args) : self;
}

void SymExpr::collectSymbols(std::set<std::string> &out) const {
  if (op_ == Op::Sym)
    out.insert(name_);
  for (const SymExprRef &a : args_)
    a->collectSymbols(out);
}

bool SymExpr::equals(const SymExpr &o) const {
  if (this == &o)
    return true;
  if (op_ != o.op_ || value_ != o.value_ || name_ != o.name_ || args_.size() != o.args_.size())
    return false;
  for (size_t i = 0; i < args_.size(); ++i)
    if (!args_[i]->equals(*o.args_[i]))
      return false;
  return true;
}

std::string SymExpr::str() const {
  std::string s;
  print(s);
  return s;
}

void SymExpr::print(std::string &out) const {
  auto child = [&](const SymExprRef &c, bool paren) {
    if (paren)
      out += '(';
    c->print(out);
    if (paren)
      out += ')';
  };
  int prec = precedence(op_);
  switch (op_) {
  case Op::Const:
    out += value_ < 0 ? "(" + std::to_string(value_) + ")" : std::to_string(value_);
    return;
  case Op::Sym: out += name_; return;
  case Op::Neg:
    out += '-';
    child(args_[0], precedence(args_[0]->op_) < prec);
    return;
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::FloorDiv:
  case Op::Mod: {
    static const char *kSpell[] = {"", "", "", " + ", " - ", "*", "//", "", "%"};
    child(args_[0], precedence(args_[0]->op_) < prec);
    out += kSpell[static_cast<int>(op_)];
    // a - (b - c), a*(b//c): the right operand keeps its parentheses unless
    // the operator is associative and the operand uses the same one.
    int rp = precedence(args_[1]->op_);
    bool assoc = (op_ == Op::Add || op_ == Op::Mul) && args_[1]->op_ == op_;
    child(args_[1], rp < prec || (rp == prec && !assoc));
    return;
  }
  case Op::Pow:
    child(args_[0], precedence(args_[0]->op_) <= prec);
    out += "**";
    child(args_[1], precedence(args_[1]->op_) < prec);
    return;
  case Op::CeilDiv:
  case Op::Max:
  case Op::Min: {
    out += op_ == Op::CeilDiv ? "CeilDiv(" : op_ == Op::Max ? "Max(" : "Min(";
    for (size_t i = 0; i < args_.size(); ++i) {
      if (i)
        out += ", ";
      args_[i]->print(out);
    }
    out += ')';
    return;
  }
  }
}

}  // namespace graphlint
