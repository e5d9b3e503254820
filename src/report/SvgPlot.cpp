// `--memory-plot FILE.svg` (docs/memory.md): the memory plan's live bytes over
// the step as a self-contained SVG chart, stacked by category (parameters,
// gradients, optimizer state, inputs, activations, temporaries: the
// categories of torch's memory profiler and of --emit-memory-snapshot), the
// forward, backward and optimizer phases shaded, the peak, its largest tensors
// and the device capacity marked; under a mesh, the pipeline ranks' peaks and
// each mesh dimension's collectives (which link, how much, how much hidden)
// listed below the chart.
#include "graphlint/report/Reporters.h"

#include "Svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace graphlint {

// XML 1.0 cannot hold C0 controls at all (an SVG with one is not
// well-formed): they are dropped, with the C1 and bidi controls.
std::string xmlEscape(const std::string &raw) {
  std::string out;
  for (char c : withoutControls(raw)) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  }
  return out;
}

void svgBegin(llvm::raw_ostream &os, double width, double height, const std::string &title) {
  os << fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
                    "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n",
                    width, height, width, height);
  os << fmt::format("<title>{}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", xmlEscape(title));
}

void svgTextLines(llvm::raw_ostream &os, const std::vector<std::string> &lines, double x, double y, double lineHeight) {
  for (size_t i = 0; i < lines.size(); ++i)
    os << fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" font-family=\"monospace\" font-size=\"11\" "
                      "xml:space=\"preserve\">{}</text>\n",
                      x, y + lineHeight * static_cast<double>(i), xmlEscape(lines[i]));
}

namespace {

std::string ms(double seconds) { return fmt::format("{:.1f} ms", seconds * 1e3); }

// One colour per MemorySummary::kCategoryNames entry.
constexpr const char *kCategoryFill[MemorySummary::kCategories] = {"#bdc1c6", "#fbbc04", "#c58af9",
                                                                    "#78d9ec", "#8ab4f8", "#f28b82"};

/// The lines listed below the chart: one per pipeline rank, then one per
/// data-parallel and mesh collective of the step.
std::vector<std::string> legendLines(const MemorySummary &s, const CostSummary::Communication *c) {
  std::vector<std::string> lines;
  if (!s.stages.empty()) {
    lines.push_back(fmt::format("pipeline: {} ranks, {}, {} micro-batches, {} virtual stages; the chart is rank {} "
                                "(the largest peak)",
                                s.stages.size(), s.ppSchedule, s.microbatches, s.virtualStages,
                                s.stages[s.worstStage].rank));
    for (const MemorySummary::Stage &st : s.stages)
      lines.push_back(fmt::format("  rank {}: {} reserved at its peak, {} activations ({:.1f} micro-batches in "
                                  "flight), {} .. {}",
                                  st.rank, formatBytes(static_cast<double>(st.peakReservedBytes)),
                                  formatBytes(static_cast<double>(st.activationsBytes)), st.inFlightMicrobatches,
                                  st.firstModule, st.lastModule));
  }
  if (!c || !c->present || (c->strategy == "single" && c->mesh.collectives.empty()))
    return lines;
  lines.push_back(fmt::format("communication per step: {} busy, {} exposed (overlap {:.2f})", ms(c->commSeconds),
                              ms(c->exposedSeconds), c->overlapRatio));
  if (c->strategy != "single") {
    lines.push_back(fmt::format("  dp  {} on {} ranks ({} per node, {} inside a node, {} between nodes)",
                                c->strategy, c->worldSize, c->gpusPerNode, c->intra, c->inter));
    for (const CostSummary::Collective &x : c->collectives)
      lines.push_back(fmt::format("  dp  {} {} x{} ({}): {} in {}", x.phase, x.kind, x.count, x.algorithm,
                                  formatBytes(x.bytes), ms(x.seconds)));
  }
  for (const MeshCollective &x : c->mesh.collectives)
    lines.push_back(fmt::format("  {:<3} {} {} x{} on {} ({} ranks): {} per rank in {}, {} hidden", x.dim, x.phase,
                                x.collective, x.calls, x.link, x.ranks, formatBytes(x.bytesPerRank), ms(x.seconds),
                                ms(x.hiddenSeconds)));
  return lines;
}

}  // namespace

void renderMemorySvg(const MemorySummary &s, const std::string &title, llvm::raw_ostream &os) {
  renderMemorySvg(s, nullptr, title, os);
}

void renderMemorySvg(const MemorySummary &s, const CostSummary::Communication *comm, const std::string &title,
                     llvm::raw_ostream &os) {
  const std::vector<std::string> legend = legendLines(s, comm);
  const double lineHeight = 16;
  const double W = 900, chartH = 440, left = 90, right = 20, top = 60, bottom = 50;  // top: title, then the stack's legend
  const double H = chartH + (legend.empty() ? 0 : lineHeight * static_cast<double>(legend.size()) + 10);
  const double pw = W - left - right, ph = chartH - top - bottom;
  size_t n = s.timeline.size();
  double ymax = static_cast<double>(s.peakAllocatedBytes);
  if (s.capacityBytes > 0 && s.capacityBytes < 2 * ymax)
    ymax = std::max(ymax, s.capacityBytes);
  ymax = std::max(ymax * 1.08, 1.0);
  auto x = [&](double i) { return left + (n > 1 ? pw * i / static_cast<double>(n - 1) : pw / 2); };
  auto y = [&](double b) { return top + ph - ph * b / ymax; };

  svgBegin(os, W, H, title);
  os << fmt::format("<text x=\"{:.0f}\" y=\"20\" font-size=\"14\">{} - {} memory per GPU ({})</text>\n", left,
                    xmlEscape(title), xmlEscape(s.mode), xmlEscape(s.target));
  // Phase bands.
  const char *fill[] = {"#e8f0fe", "#fdecea", "#e6f4ea"};
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && s.timeline[j].phase == s.timeline[i].phase)
      ++j;
    int k = s.timeline[i].phase == "forward" ? 0 : s.timeline[i].phase == "backward" ? 1 : 2;
    double x0 = x(static_cast<double>(i) - 0.5), x1 = x(static_cast<double>(j) - 0.5);
    x0 = std::max(x0, left);
    x1 = std::min(x1, left + pw);
    os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\"/>\n", x0, top,
                      std::max(x1 - x0, 1.0), ph, fill[k]);
    os << fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" fill=\"#555\">{}</text>\n", x0 + 4, top + 14,
                      xmlEscape(s.timeline[i].phase));
    i = j;
  }
  // Axes and grid.
  os << fmt::format("<line x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{0:.0f}\" y2=\"{2:.0f}\" stroke=\"black\"/>\n", left, top,
                    top + ph);
  os << fmt::format("<line x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\" stroke=\"black\"/>\n", left,
                    top + ph, left + pw);
  for (int t = 0; t <= 4; ++t) {
    double b = ymax * t / 4;
    os << fmt::format("<line x1=\"{0:.0f}\" y1=\"{1:.1f}\" x2=\"{2:.0f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n", left,
                      y(b), left + pw);
    os << fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6, y(b) + 4,
                      formatBytes(b));
  }
  os << fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">execution step ({} steps)</text>\n",
                    left + pw / 2, chartH - 15, n);
  // The stack: each category's band between the sum of those below it and
  // its own top; the categories a step never holds are left out.
  std::array<bool, MemorySummary::kCategories> used{};
  for (const MemorySummary::Point &p : s.timeline)
    for (size_t k = 0; k < MemorySummary::kCategories; ++k)
      used[k] = used[k] || p.categoryBytes[k] > 0;
  std::vector<uint64_t> below(n, 0);
  for (size_t k = 0; k < MemorySummary::kCategories && n; ++k) {
    if (!used[k])
      continue;
    os << fmt::format("<polygon fill=\"{}\" fill-opacity=\"0.85\" stroke=\"none\" points=\"", kCategoryFill[k]);
    for (size_t i = 0; i < n; ++i)
      os << fmt::format("{}{:.1f},{:.1f}", i ? " " : "", x(static_cast<double>(i)),
                        y(static_cast<double>(below[i] + s.timeline[i].categoryBytes[k])));
    for (size_t i = n; i-- > 0;)
      os << fmt::format(" {:.1f},{:.1f}", x(static_cast<double>(i)), y(static_cast<double>(below[i])));
    os << fmt::format("\"><title>{}</title></polygon>\n", MemorySummary::kCategoryNames[k]);
    for (size_t i = 0; i < n; ++i)
      below[i] += s.timeline[i].categoryBytes[k];
  }
  // The legend of the stack, top right.
  {
    double lx = left + pw - 10;
    for (size_t k = MemorySummary::kCategories; k-- > 0;) {
      if (!used[k])
        continue;
      std::string name = MemorySummary::kCategoryNames[k];
      lx -= 16 + 7.0 * static_cast<double>(name.size());
      os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"10\" height=\"10\" fill=\"{}\"/>\n", lx,
                        top - 22, kCategoryFill[k]);
      os << fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" font-size=\"11\">{}</text>\n", lx + 13, top - 13, name);
    }
  }
  // The curve.
  if (n) {
    os << "<polyline fill=\"none\" stroke=\"#174ea6\" stroke-width=\"1.5\" points=\"";
    for (size_t i = 0; i < n; ++i)
      os << fmt::format("{}{:.1f},{:.1f}", i ? " " : "", x(static_cast<double>(i)),
                        y(static_cast<double>(s.timeline[i].liveBytes)));
    os << "\"/>\n";
  }
  // Peak and capacity.
  auto peakIt = std::max_element(s.timeline.begin(), s.timeline.end(),
                                 [](const auto &a, const auto &b) { return a.liveBytes < b.liveBytes; });
  if (peakIt != s.timeline.end()) {
    double px = x(static_cast<double>(peakIt - s.timeline.begin())), py = y(static_cast<double>(peakIt->liveBytes));
    os << fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#d93025\"/>\n", px, py);
    os << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#d93025\" text-anchor=\"{}\">peak {} at {}</text>\n",
                      px, std::max(py - 8, top + 28), px > left + pw / 2 ? "end" : "start",
                      formatBytes(static_cast<double>(peakIt->liveBytes)), xmlEscape(peakIt->node));
  }
  // The largest tensors at the peak, labelled beside it.
  if (peakIt != s.timeline.end() && !s.topAtPeak.empty()) {
    double px = x(static_cast<double>(peakIt - s.timeline.begin()));
    bool leftSide = px > left + pw / 2;
    double tx = leftSide ? px - 12 : px + 12, ty = top + 44;
    os << fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" font-size=\"11\" fill=\"#3c4043\" text-anchor=\"{}\">"
                      "largest at the peak:</text>\n",
                      tx, ty, leftSide ? "end" : "start");
    for (size_t i = 0; i < s.topAtPeak.size() && i < 5; ++i) {
      const MemorySummary::Contributor &c = s.topAtPeak[i];
      std::string what = c.tensor.empty() ? "(" + c.kind + ")" : c.tensor;
      if (!c.node.empty() && c.node != c.tensor)
        what += " from " + c.node;
      if (what.size() > 48)
        what = what.substr(0, 45) + "...";
      double ly = ty + 14 * static_cast<double>(i + 1);
      os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"9\" height=\"9\" fill=\"{}\"/>\n",
                        leftSide ? tx - 9 : tx, ly - 9, kCategoryFill[c.category % MemorySummary::kCategories]);
      os << fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" font-size=\"11\" text-anchor=\"{}\">{} {}</text>\n",
                        leftSide ? tx - 13 : tx + 13, ly, leftSide ? "end" : "start",
                        formatBytes(static_cast<double>(c.bytes)), xmlEscape(what));
    }
  }
  if (s.capacityBytes > 0 && s.capacityBytes <= ymax) {
    os << fmt::format("<line x1=\"{0:.0f}\" y1=\"{1:.1f}\" x2=\"{2:.0f}\" y2=\"{1:.1f}\" stroke=\"#d93025\" "
                      "stroke-dasharray=\"6,4\"/>\n",
                      left, y(s.capacityBytes), left + pw);
    os << fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" fill=\"#d93025\" text-anchor=\"end\">{} capacity {}</text>\n",
                      left + pw, y(s.capacityBytes) - 4, xmlEscape(s.target), formatBytes(s.capacityBytes));
  } else if (s.capacityBytes > 0) {
    os << fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" fill=\"#555\" text-anchor=\"end\">{} capacity {} (off "
                      "scale)</text>\n",
                      left + pw, top - 4, xmlEscape(s.target), formatBytes(s.capacityBytes));
  }
  svgTextLines(os, legend, 20, chartH + lineHeight, lineHeight);
  os << "</svg>\n";
}

}  // namespace graphlint
