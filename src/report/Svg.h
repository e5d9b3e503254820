// What the SVG writers of the report layer share (SvgPlot.cpp's memory chart,
// PlanReport.cpp's Pareto front).
#pragma once

#include "graphlint/ir/MessageText.h"

#include <llvm/Support/raw_ostream.h>

#include <string>
#include <vector>

namespace graphlint {

/// Text for an SVG element or attribute: markup characters escaped, control
/// characters (which XML 1.0 cannot hold) dropped.
std::string xmlEscape(const std::string &raw);

/// A self-contained chart's opening: the <svg> element of `width` x
/// `height`, its <title> and a white background.
void svgBegin(llvm::raw_ostream &os, double width, double height, const std::string &title);
/// Lines of monospace text below a chart (a legend), the first at `y`, one
/// every `lineHeight`, their spaces kept.
void svgTextLines(llvm::raw_ostream &os, const std::vector<std::string> &lines, double x, double y, double lineHeight);

}  // namespace graphlint
