// What every importer takes from the command line, whatever the format
// (graphlint/import/Importer.h picks the frontend).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace graphlint {

struct ImportOptions {
  /// Binds size symbols by name (--dim batch=8), before shape completion;
  /// every importer applies them through SymbolBinder.
  std::map<std::string, int64_t> dims;
  /// Forget the declared types of graph outputs and intermediate values, so
  /// that shape completion alone determines them (used to validate inference).
  bool dropDeclaredTypes = false;
};

}  // namespace graphlint
