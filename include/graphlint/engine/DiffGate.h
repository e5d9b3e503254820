// The limits `graphlint diff --fail-on` checks (docs/diff.md "Gate"): diff's
// own values of lint's --fail-on. `new-errors` / `new-warnings` /
// `new-findings` fail on a new finding of at least that severity; a metric
// limit `NAME+N%` fails when the metric grows by more than N percent,
// `NAME-N%` when it falls by more (mfu-5%), `NAME+N` / `NAME+NGiB` on an
// absolute change. NAME is a metric of ReportMetrics.h or its short form
// (peak, reserved, step, comm, activations, exposed).
#pragma once

#include "graphlint/engine/ModelDiff.h"

#include <llvm/Support/Error.h>

#include <string>
#include <string_view>
#include <vector>

namespace graphlint {

struct DiffLimit {
  enum class Kind : uint8_t { NewFindings, Metric };
  Kind kind = Kind::Metric;
  Severity severity = Severity::Error;  // NewFindings: the lowest that counts
  std::string metric;                   // full name
  double amount = 0;                    // > 0: the allowed change
  bool percent = true;
  bool rise = true;                     // `+`: fails on growth; `-`: on a fall
  std::string spec;                     // as written, for the message
};

/// Parses "new-errors,peak+5%,step+5%,comm+10%". An error in the words of a
/// one-line usage message names the bad item and what is accepted.
llvm::Expected<std::vector<DiffLimit>> parseDiffLimits(std::string_view spec);

/// One line per broken limit ("peak+5%: peak_allocated_bytes grew 7.3%
/// (1.00 GiB -> 1.07 GiB)"); empty when none is broken. A metric neither
/// side predicts breaks nothing.
std::vector<std::string> brokenLimits(const ModelDiff &d, const std::vector<DiffLimit> &limits);

}  // namespace graphlint
