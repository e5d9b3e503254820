// What the enums and conventions of torch.export's serialized ExportedProgram
// (torch/_export/serde/schema.py) mean to graphlint: scalar types, the runtime
// guards it inserts, the names of unbacked size symbols.
#pragma once

#include "graphlint/ir/Graph.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llvm::json { class Object; class Value; }

namespace graphlint::pt2 {

/// ScalarType code -> dtype; nullopt for codes graphlint has no dtype for.
std::optional<DType> dtypeFromScalarType(int64_t code);
/// Torch's spelling ("float16"), as the FX importer's dtype attributes carry it.
const char *torchDtypeName(DType t);
/// Runtime guards (shape asserts, range checks): no data flows through them.
bool isRuntimeGuard(llvm::StringRef atenOp);
/// "u0", "u12": torch's unbacked (data-dependent) size symbols.
bool isUnbackedName(llvm::StringRef n);
/// The tensor names an argument or output refers to ({"as_tensor": ...},
/// {"as_tensors": [...]}).
std::vector<std::string> tensorNames(const llvm::json::Value &arg);
std::vector<std::string> tensorNames(const llvm::json::Object *arg);
/// {"type": "cuda", "index": 0}
Device deviceOf(const llvm::json::Object &dev);
/// torch symbol -> the user's name for it (a torch.export.Dim name).
using SymbolNames = std::map<std::string, std::string>;
/// A SymInt's expr_str (sympy srepr or str), its symbols renamed by `names`;
/// unknown when the grammar cannot hold it (true division, floats): never fatal.
Dim dimFromExprStr(llvm::StringRef text, const SymbolNames &names = {});
/// The archive's extra/graphlint_symbols.json ({"s77": "batch"}, written by
/// graphlint.save_pt2, since torch.export.save drops the Dim names). The
/// error is one line naming the offending entry.
llvm::Expected<SymbolNames> parseSymbolNames(llvm::StringRef text);
/// The name `names` gives a torch symbol, else the symbol's own.
std::string renamedSymbol(const std::string &sym, const SymbolNames &names);

}  // namespace graphlint::pt2
