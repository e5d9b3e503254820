// The grouping pass, between the rules and the reporters: findings of one
// rule with one cause at one user source line (a line of a block that runs
// in 24 layers) become one diagnostic with the other places in
// Diagnostic::alsoAt, so a user reads one finding per thing to fix. Rules stay
// pure and per-node; reporters render the count and the module list with
// occurrencesLine(). docs/output-formats.md#grouping.
#pragma once

#include "graphlint/base/Diagnostic.h"

#include <string>
#include <vector>

namespace graphlint {

/// Folds `diags` (sorted by diagnosticLess) in place: the first finding of a
/// cause (in graph order) stays, carrying the rest in alsoAt; the result is
/// still sorted. A cause is the rule, severity, reason, op type and message
/// with quoted names and numbers taken out, at one user file:line:col -- or, without a
/// recorded line, at one module path with its layer indices folded
/// (`blocks.{N}.attn`). Findings with neither, and rules with
/// GroupScope::None, are left alone.
void groupDiagnostics(std::vector<Diagnostic> &diags);

/// Folds, in place, the findings of a backward node (Location::backward) into
/// the forward finding of the same rule at the same source line: the gradient
/// of a cast is the cast back, so the pair is one thing to fix.
/// groupDiagnostics() calls it last.
void foldBackwardCopies(std::vector<Diagnostic> &diags);

/// Folds, in place, the findings whose source line is library code
/// (libraryOf: site-packages, the standard library) into one diagnostic per
/// rule, library and graph: the first stays, saying how many there are,
/// carrying the others' places in alsoAt. Errors are never folded.
/// --show-library-findings turns it off.
void foldLibraryFindings(std::vector<Diagnostic> &diags);

/// Keeps each message's first line short: a message longer than `limit`
/// characters is cut at its last clause break ("; " or ": ") within the limit
/// (else at its first one), and the rest becomes the first note. Messages
/// without such a break stay whole.
void splitLongMessages(std::vector<Diagnostic> &diags, size_t limit = 120);

/// "in 24 layers: blocks.0.attn ... blocks.23.attn", "3 times in 2 modules:
/// encoder.norm, decoder.norm", "at 5 nodes" -- empty for a lone finding.
std::string occurrencesLine(const Diagnostic &d);

/// The module paths of a diagnostic and its other occurrences, each once, in
/// graph order; empty paths are skipped.
std::vector<std::string> modulesOf(const Diagnostic &d);

}  // namespace graphlint
