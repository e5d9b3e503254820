// Symbolic size expressions: the dims and strides PyTorch records as SymInts
// (`batch*seq`, `(seq - 1)//2 + 1`, `Max(1, s0)`, torch's unbacked `u0`) kept as
// small immutable trees, so that `-D batch=8` rescales every flattened dim. One
// grammar serves the FX format version 2 (docs/fx-format.md) and the sympy
// strings of `.pt2` archives; evaluation is integer arithmetic with Python's
// floor semantics, checked for int64 overflow (an overflow is "unknown", never
// a wrapped number).
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace graphlint {

class SymExpr;
using SymExprRef = std::shared_ptr<const SymExpr>;

/// Looks a symbol up: its value, or nullopt when it is not bound.
using SymLookup = llvm::function_ref<std::optional<int64_t>(llvm::StringRef)>;

class SymExpr {
public:
  enum class Op : uint8_t { Const, Sym, Neg, Add, Sub, Mul, FloorDiv, CeilDiv, Mod, Pow, Max, Min };

  static SymExprRef constant(int64_t v);
  static SymExprRef symbol(std::string name);
  /// Builds `op(args)` and folds what is constant (`2*3` -> 6, `x*1` -> x).
  static SymExprRef make(Op op, llvm::ArrayRef<SymExprRef> args);

  /// Parses the FX version 2 grammar (docs/fx-format.md) plus sympy's `**`
  /// and function spellings (PythonMod, TruncToInt, ...). The error is one
  /// line naming the offending text, without the caller's field path.
  static llvm::Expected<SymExprRef> parse(llvm::StringRef text);

  Op op() const { return op_; }
  int64_t value() const { return value_; }        // Const
  const std::string &name() const { return name_; }  // Sym
  llvm::ArrayRef<SymExprRef> args() const { return args_; }
  bool isConstant() const { return op_ == Op::Const; }
  bool isSymbol() const { return op_ == Op::Sym; }

  /// The value under `lookup`; nullopt when a symbol is unbound, on division
  /// by zero, a negative power or int64 overflow.
  std::optional<int64_t> evaluate(SymLookup lookup) const;
  /// Replaces the bound symbols by their values and folds constants; returns
  /// this expression itself when nothing changed.
  SymExprRef substitute(const SymExprRef &self, SymLookup lookup) const;
  /// Adds the names of the symbols it mentions.
  void collectSymbols(std::set<std::string> &out) const;
  bool equals(const SymExpr &o) const;
  /// "batch*seq", "(seq - 1)//2 + 1", "Max(1, seq)": parseable by `parse`.
  std::string str() const;

  SymExpr(Op op, int64_t value, std::string name, llvm::SmallVector<SymExprRef, 2> args)
      : op_(op), value_(value), name_(std::move(name)), args_(std::move(args)) {}

private:
  void print(std::string &out) const;
  Op op_;
  int64_t value_ = 0;
  std::string name_;
  llvm::SmallVector<SymExprRef, 2> args_;
};

}  // namespace graphlint
