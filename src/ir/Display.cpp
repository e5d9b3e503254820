// The one node labeller and byte and duration formatter (include/graphlint/ir/Display.h).
#include "graphlint/ir/Display.h"

#include "graphlint/ir/Graph.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace graphlint {

std::string nodeNumber(unsigned index) { return fmt::format("#{}", index + 1); }

std::string nodeLabel(const Node &n) { return n.name.empty() ? nodeNumber(n.index) : n.name; }

std::string nodeWithOp(const Node &n) { return fmt::format("{} '{}'", n.qualifiedOp(), nodeLabel(n)); }

NodeNaming namingOf(const Node &n) { return {nodeLabel(n), n.name, n.qualifiedOp(), n.index}; }

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

std::string formatSeconds(double s) {
  if (std::abs(s) >= 1)
    return fmt::format("{:.3f} s", s);
  if (std::abs(s) >= 1e-3)
    return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

}  // namespace graphlint
