// Which source lines are library code: the exporter records the innermost
// frame outside torch, which for a model built from transformers, timm or
// diffusers is a line of that package (an absolute path into site-packages),
// not of the user's repository (a path relative to it). Findings there are
// folded by default (the engine's grouping pass), and a rule may treat a
// pattern a library writes on purpose (fp32 upcasts around a norm or a
// softmax) differently from the same pattern in the user's own code.
#pragma once

#include "graphlint/ir/Graph.h"

#include <string>
#include <string_view>

namespace graphlint {

/// The package a source file belongs to when it is installed library code:
/// "transformers" for .../site-packages/transformers/models/..., "torch",
/// "timm", "six" for .../dist-packages/six.py; empty for the user's files.
/// Recognised: a path with a `site-packages` or `dist-packages` component,
/// or the Python standard library (`lib/pythonX.Y/...`, named "python").
std::string libraryOf(std::string_view file);
inline std::string libraryOf(const SourceLoc &loc) { return loc.valid() ? libraryOf(loc.file) : std::string(); }

}  // namespace graphlint
