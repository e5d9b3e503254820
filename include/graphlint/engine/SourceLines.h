// The user's source lines a report points at, read after the lint for the
// text reporter's snippet (rustc/ruff style), so reporters stay pure
// functions of data. Only files inside the model's repository (the git
// top-level above the model file, else its folder) or the current directory
// are read, by a relative path without '..', through the checked input
// reader: an export cannot make graphlint print lines of arbitrary files.
#pragma once

#include "graphlint/engine/Driver.h"

#include <string>

namespace graphlint {

/// The git top-level directory holding `modelPath` (a folder with `.git`),
/// else the model's own folder; absolute.
std::string repositoryRootOf(const std::string &modelPath);

/// Fills r.sourceLines with the text of every primary source line of
/// r.diagnostics that can be read (tabs expanded, control characters
/// dropped); unreadable files are skipped silently (no snippet).
void attachSourceLines(FileReport &r);

/// Hints for rules that could not run on this model and what would let
/// them (a forward-only export for GL132, every tensor on the CPU for GL111),
/// for the rules `policy` enables: one line each, without the path.
std::vector<std::string> coverageHints(const Model &m, const RulePolicy &policy);

}  // namespace graphlint
