// The one reader for the JSON documents graphlint parses whole: FX graphs,
// every JSON entry of a .pt2 archive, baselines. llvm::json gives every
// object a hash table of at least 64 buckets (about 4 KiB), so a file of
// 300,000 `{"a":0}` (2.4 MB, or 20 KB deflated inside a .pt2) took 2.2 GB:
// a cap on bytes did not bound memory. This reader checks nesting and counts
// values in one linear pre-scan before anything is allocated, then builds the
// same llvm::json::Value tree with each object's table sized to its members
// (a one-member object costs 4 buckets, not 64). docs/robustness.md gives
// the limits and what real exports cost.
#pragma once

#include "graphlint/ir/InputFile.h"

#include <llvm/Support/JSON.h>

#include <cstdint>
#include <string>

namespace graphlint {

/// How many JSON values (objects, arrays, strings, numbers, literals) one
/// document may hold. A torch.export .pt2 spends 60-110 values per graph
/// node and an FX graph about 35, so 64 Mi admits graphs of about 1M nodes.
/// A lint costs about 230 bytes per value with the compact objects (the
/// 16,003-node regions_16000.pt2: 1.7M values, 392 MB), so the limit bounds
/// a document at about 15 GB, where llvm::json's own objects let 7 bytes of
/// text (`{"a":0}`) cost 4 KiB.
constexpr uint64_t kMaxJsonValues = 64ull << 20;

struct JsonLimits {
  unsigned depth = kMaxNestingDepth;  // llvm::json's tree is walked recursively
  uint64_t values = kMaxJsonValues;
};

/// Why parseJsonInput refused a document.
enum class JsonRefusal : uint8_t { None, Limit, Syntax };

/// Parses `text`. A document over a limit is refused before it is parsed:
/// "NAME:LINE: JSON nested deeper than 64 levels; refused (...)" or
/// "NAME: holds more than 67108864 JSON values; refused (...)" (NAME omitted
/// when empty). A syntax error reads as llvm::json's
/// ("[LINE:COLUMN, byte=N]: Expected , or } after object property"), for the
/// caller to frame; `why` tells the two apart.
llvm::Expected<llvm::json::Value> parseJsonInput(llvm::StringRef text, const std::string &name,
                                                 JsonLimits limits = {}, JsonRefusal *why = nullptr);

}  // namespace graphlint
