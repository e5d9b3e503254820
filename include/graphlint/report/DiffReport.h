// The reporters of `graphlint diff` (docs/diff.md): text for a terminal,
// the JSON contract other tools read (`findings.new[]`, `findings.fixed[]`,
// `metrics`, `attribution[]`), markdown for a pull-request comment, SARIF
// (the new findings, for code scanning) and GitHub workflow commands (new
// findings, and a notice at each changed line). Pure: they render a
// ModelDiff and never analyse.
#pragma once

#include "graphlint/engine/ModelDiff.h"

#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

namespace graphlint {

/// How many entries of each list the text and markdown reports show.
inline constexpr size_t kDiffTopChanges = 10;

void renderDiffText(const ModelDiff &d, llvm::raw_ostream &os);
llvm::json::Value diffToJson(const ModelDiff &d);
void renderDiffJson(const ModelDiff &d, llvm::raw_ostream &os);
/// `linkBase`: when not empty, each file:line becomes a link to
/// `linkBase/file#Lline` (a blob URL of the head revision).
void renderDiffMarkdown(const ModelDiff &d, const std::string &linkBase, llvm::raw_ostream &os);
void renderDiffSarif(const ModelDiff &d, llvm::raw_ostream &os);
void renderDiffGithub(const ModelDiff &d, llvm::raw_ostream &os);

/// "file:line:col" of a finding's user source line ("" when unknown).
std::string findingSource(const Diagnostic &d);

}  // namespace graphlint
