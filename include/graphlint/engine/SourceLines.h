// The user's source lines a report points at, read after the lint for the
// text reporter's snippet (rustc/ruff style), so reporters stay pure
// functions of data. Only regular files inside the model's repository (the
// git top-level above the model file, else its folder) are read, by a
// relative path without '..' that resolves (symlinks included) inside it,
// through the checked input reader (readFileUnder, Paths.h), never relative
// to the current directory: an export cannot make graphlint print lines of
// arbitrary files.
#pragma once

#include "graphlint/engine/Driver.h"

#include <string>

namespace graphlint {

/// Fills r.sourceLines with the text of every primary source line of
/// r.diagnostics that can be read (tabs expanded, control characters
/// dropped); unreadable files are skipped silently (no snippet).
void attachSourceLines(FileReport &r);

/// Hints for rules that could not run on this model and what would let
/// them (a forward-only export for GL132, every tensor on the CPU for GL111),
/// for the rules `policy` enables: one line each, without the path.
std::vector<std::string> coverageHints(const Model &m, const RulePolicy &policy);

}  // namespace graphlint
