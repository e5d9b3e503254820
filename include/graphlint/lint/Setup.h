// What the user states about the run: symbolic dim bindings, the fusion backend
// and, for later cost analyses, the training setup. One struct, filled from the
// command line (and later the config file), read by importers and analyses.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace graphlint {

struct Setup {
  /// --dim NAME=SIZE: binds named symbolic dims before shape completion.
  std::map<std::string, int64_t> dims;
};

}  // namespace graphlint
