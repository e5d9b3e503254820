// What the SVG writers of the report layer share (SvgPlot.cpp's memory chart,
// PlanReport.cpp's Pareto front).
#pragma once

#include "graphlint/ir/MessageText.h"

#include <string>

namespace graphlint {

/// Text for an SVG element or attribute: markup characters escaped, control
/// characters (which XML 1.0 cannot hold) dropped.
std::string xmlEscape(const std::string &raw);

}  // namespace graphlint
