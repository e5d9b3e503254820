// The one node labeller and byte formatter (include/graphlint/ir/Display.h).
#include "graphlint/ir/Display.h"

#include "graphlint/ir/Graph.h"

#include <fmt/format.h>

#include <iterator>

namespace graphlint {

std::string nodeNumber(unsigned index) { return fmt::format("#{}", index + 1); }

std::string nodeLabel(const Node &n) { return n.name.empty() ? nodeNumber(n.index) : n.name; }

std::string nodeWithOp(const Node &n) { return fmt::format("{} '{}'", n.qualifiedOp(), nodeLabel(n)); }

std::string formatBytes(double b) {
  if (b < 0)
    return "-" + formatBytes(-b);
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned u = 0;
  while (b >= 1024 && u + 1 < std::size(units)) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.2f} {}", b, units[u]);
}

}  // namespace graphlint
