// Versioned JSON report (docs/output-formats.md): one object per file with
// every Diagnostic field, plus totals. Built with llvm::json.
#include "graphlint/report/Reporters.h"

namespace graphlint {
namespace json = llvm::json;

static json::Value locationToJson(const Location &l) {
  json::Object o{{"file", l.file}, {"graph", l.graphPath.empty() ? "main" : l.graphPath}};
  o["node"] = l.nodeIndex ? json::Value(l.nodeName) : json::Value(nullptr);
  o["op_type"] = l.nodeIndex ? json::Value(l.opType) : json::Value(nullptr);
  o["node_index"] = l.nodeIndex ? json::Value(static_cast<int64_t>(*l.nodeIndex)) : json::Value(nullptr);
  if (l.source.valid())
    o["source"] = json::Object{{"file", l.source.file},
                               {"line", static_cast<int64_t>(l.source.line)},
                               {"column", static_cast<int64_t>(l.source.col)},
                               {"function", l.source.function}};
  else
    o["source"] = nullptr;
  o["module"] = l.modulePath.empty() ? json::Value(nullptr) : json::Value(l.modulePath);
  return o;
}

json::Value diagnosticToJson(const Diagnostic &d) {
  json::Array notes;
  for (const Note &n : d.notes) {
    json::Object no{{"message", n.message}};
    no["location"] = n.location ? locationToJson(*n.location) : json::Value(nullptr);
    notes.push_back(std::move(no));
  }
  json::Object o{{"code", d.code},
                 {"name", d.name},
                 {"severity", std::string(severityName(d.severity))},
                 {"message", d.message},
                 {"location", locationToJson(d.location)},
                 {"notes", std::move(notes)}};
  o["fusion_id"] = d.fusionId ? json::Value(static_cast<int64_t>(*d.fusionId)) : json::Value(nullptr);
  o["reason"] = d.reason ? json::Value(*d.reason) : json::Value(nullptr);
  o["fingerprint"] = fingerprintOf(d);
  // A grouped finding: how many places share the cause, and the others.
  o["count"] = static_cast<int64_t>(d.count());
  json::Array also;
  for (const Location &l : d.alsoAt)
    also.push_back(locationToJson(l));
  o["also_at"] = std::move(also);
  return o;
}

json::Value fusionToJson(const FusionSummary &s) {
  if (!s.present)
    return nullptr;
  auto graphOf = [&](unsigned g) { return g < s.graphs.size() ? s.graphs[g].path : std::string("main"); };
  auto nodeName = [&](unsigned n) { return n < s.nodes.size() ? s.nodes[n].label : std::string(); };
  json::Array groups;
  for (const FusionSummary::Group &g : s.groups) {
    json::Array nodes;
    for (unsigned n : g.nodes)
      nodes.push_back(nodeName(n));
    json::Object o{{"id", static_cast<int64_t>(g.id)},
                   {"kind", g.kind},
                   {"graph", graphOf(g.graph)},
                   {"nodes", std::move(nodes)},
                   {"kernels", static_cast<int64_t>(g.kernels)},
                   {"launch", static_cast<int64_t>(g.launch)}};
    if (g.layoutCopies)
      o["layout_copies"] = static_cast<int64_t>(g.layoutCopies);
    groups.push_back(std::move(o));
  }
  json::Array bounds;
  json::Object byReason;
  for (const FusionSummary::Boundary &b : s.boundaries) {
    json::Object o{{"from_group", static_cast<int64_t>(b.fromGroup)},
                   {"to_group", static_cast<int64_t>(b.toGroup)},
                   {"node", nodeName(b.consumer)},
                   {"producer", nodeName(b.producer)},
                   {"value", b.value},
                   {"reason", b.reason},
                   {"breaker", b.breaker},
                   {"graph", graphOf(b.consumer < s.nodes.size() ? s.nodes[b.consumer].graph : 0)}};
    o["detail"] = b.detail.empty() ? json::Value(nullptr) : json::Value(b.detail);
    bounds.push_back(std::move(o));
  }
  for (const auto &[reason, n] : s.reasonCounts())
    byReason[reason] = static_cast<int64_t>(n);
  return json::Object{{"backend", s.backend},
                      {"nodes", static_cast<int64_t>(s.nodes.size())},
                      {"groups", std::move(groups)},
                      {"boundaries", std::move(bounds)},
                      {"boundaries_by_reason", std::move(byReason)},
                      {"kernels_predicted", static_cast<int64_t>(s.kernelsPredicted)}};
}

json::Value computeToJson(const CostSummary &s) {
  if (!s.present)
    return nullptr;
  json::Array groups;
  // A group of unknown cost has no numbers, rather than zeros that look measured.
  auto known = [](bool k, double v) { return k ? json::Value(v) : json::Value(nullptr); };
  for (const CostSummary::Group &g : s.groups) {
    json::Object o{{"id", static_cast<int64_t>(g.id)},
                   {"kind", g.kind},
                   {"node", g.node},
                   {"kernels", static_cast<int64_t>(g.kernels)},
                   {"known", g.known},
                   {"flops_forward", known(g.known, g.flopsForward)},
                   {"bytes_forward", known(g.known, g.bytesForward)},
                   {"time_forward_s", known(g.known, g.secondsForward)}};
    if (s.train) {
      o["flops_backward"] = known(g.known, g.flopsBackward);
      o["bytes_backward"] = known(g.known, g.bytesBackward);
      o["time_backward_s"] = known(g.known, g.secondsBackward);
    }
    groups.push_back(std::move(o));
  }
  json::Object o{{"target", s.target.empty() ? json::Value(nullptr) : json::Value(s.target)},
                 {"precision", s.precision},
                 {"matmul_math", s.matmulMath},
                 {"train", s.train},
                 {"params", s.params},
                 {"flops_forward", s.flopsForward},
                 {"flops_backward", s.flopsBackward},
                 {"matmul_flops_forward", s.matmulFlopsForward},
                 {"matmul_flops_backward", s.matmulFlopsBackward},
                 {"bytes_forward", s.bytesForward},
                 {"bytes_backward", s.bytesBackward},
                 {"time_forward_s", s.secondsForward},
                 {"time_backward_s", s.secondsBackward},
                 {"kernels_forward", static_cast<int64_t>(s.kernelsForward)},
                 {"kernels_backward", static_cast<int64_t>(s.kernelsBackward)},
                 {"unknown_groups", static_cast<int64_t>(s.unknownGroups)},
                 {"scheduled_groups", static_cast<int64_t>(s.scheduledGroups)},
                 {"lower_bound", s.lowerBound()},
                 {"groups", std::move(groups)}};
  if (s.float8.present) {
    const CostSummary::Float8 &f = s.float8;
    json::Array skipped;
    for (const auto &[name, why] : f.skipped)
      skipped.push_back(json::Object{{"name", name}, {"reason", why}});
    o["float8"] = json::Object{{"recipe", f.recipe},
                               {"converted_linears", static_cast<int64_t>(f.converted)},
                               {"skipped", std::move(skipped)},
                               {"fp8_matmul_flops_forward", f.fp8FlopsForward},
                               {"fp8_matmul_flops_backward", f.fp8FlopsBackward},
                               {"cast_bytes_forward", f.castBytesForward},
                               {"cast_bytes_backward", f.castBytesBackward},
                               {"cast_kernels_forward", static_cast<int64_t>(f.castKernelsForward)},
                               {"cast_kernels_backward", static_cast<int64_t>(f.castKernelsBackward)},
                               {"cast_time_forward_s", f.castSecondsForward},
                               {"cast_time_backward_s", f.castSecondsBackward},
                               {"fp8_all_gather", f.allGather},
                               {"fp8_weight_elements", f.weightElements}};
  }
  return o;
}

json::Value communicationToJson(const CostSummary &s) {
  const CostSummary::Communication &c = s.communication;
  if (!s.present || !c.present)
    return nullptr;
  json::Array collectives, buckets, units, notes;
  for (const CostSummary::Collective &x : c.collectives)
    collectives.push_back(json::Object{{"kind", x.kind},
                                       {"algorithm", x.algorithm},
                                       {"phase", x.phase},
                                       {"bytes", x.bytes},
                                       {"count", static_cast<int64_t>(x.count)},
                                       {"time_s", x.seconds}});
  for (const CostSummary::Bucket &b : c.buckets)
    buckets.push_back(json::Object{{"index", static_cast<int64_t>(b.index)},
                                   {"params", static_cast<int64_t>(b.params)},
                                   {"bytes", b.bytes},
                                   {"ready_s", b.ready},
                                   {"start_s", b.start},
                                   {"end_s", b.end}});
  for (const CostSummary::Communication::Unit &u : c.units)
    units.push_back(json::Object{{"index", static_cast<int64_t>(u.index)},
                                 {"name", u.name},
                                 {"params", static_cast<int64_t>(u.params)},
                                 {"bytes", u.bytes},
                                 {"ready_s", u.ready},
                                 {"start_s", u.start},
                                 {"end_s", u.end}});
  for (const std::string &n : c.notes)
    notes.push_back(n);
  json::Object o{{"strategy", c.strategy},
                      {"world_size", static_cast<int64_t>(c.worldSize)},
                      {"gpus_per_node", static_cast<int64_t>(c.gpusPerNode)},
                      {"intra", c.intra},
                      {"inter", c.inter},
                      {"element_bytes", c.elementBytes},
                      {"bytes_per_rank", c.bytesPerRank},
                      {"collectives", std::move(collectives)},
                      {"buckets", std::move(buckets)},
                      {"units", std::move(units)},
                      {"comm_s", c.commSeconds},
                      {"exposed_s", c.exposedSeconds},
                      {"overlap_ratio", c.overlapRatio},
                      {"forward_s", c.forwardSeconds},
                      {"backward_s", c.backwardSeconds},
                      {"optimizer_s", c.optimizerSeconds},
                      {"step_time_s", c.stepSeconds},
                      {"model_flops", c.modelFlops},
                      {"mfu", c.mfu},
                      {"tokens_per_second_per_gpu",
                       c.tokensPerSecondPerGpu ? json::Value(*c.tokensPerSecondPerGpu) : json::Value(nullptr)},
                      {"notes", std::move(notes)}};
  // Per mesh dimension (tp, cp, ep, pp): only when the mesh has one.
  if (!c.mesh.collectives.empty() || c.mesh.pipeline) {
    json::Array mesh;
    for (const MeshCollective &x : c.mesh.collectives)
      mesh.push_back(json::Object{{"dim", x.dim},
                                  {"kind", x.collective},
                                  {"phase", x.phase},
                                  {"link", x.link},
                                  {"inter_node", x.interNode},
                                  {"ranks", static_cast<int64_t>(x.ranks)},
                                  {"count", static_cast<int64_t>(x.calls)},
                                  {"bytes_per_call", x.bytesPerCall},
                                  {"bytes_per_rank", x.bytesPerRank},
                                  {"time_s", x.seconds},
                                  {"hidden_s", x.hiddenSeconds},
                                  {"exposed_s", x.seconds - x.hiddenSeconds},
                                  {"what", x.what}});
    o["mesh_collectives"] = std::move(mesh);
  }
  if (c.mesh.pipeline)
    o["pipeline"] = json::Object{{"schedule", c.mesh.schedule},
                                 {"microbatches", static_cast<int64_t>(c.mesh.microbatches)},
                                 {"virtual_stages", static_cast<int64_t>(c.mesh.virtualStages)},
                                 {"bubble_fraction", c.mesh.bubbleFraction},
                                 {"bubble_s", c.bubbleSeconds},
                                 {"slowest_stage", static_cast<int64_t>(c.mesh.slowestRank)},
                                 {"slowest_stage_compute_share", c.mesh.rankShare}};
  return o;
}

json::Value memoryToJson(const MemorySummary &s) {
  if (!s.present)
    return nullptr;
  auto bytes = [](uint64_t b) { return static_cast<int64_t>(b); };
  json::Array timeline;
  for (const MemorySummary::Point &p : s.timeline)
    timeline.push_back(json::Object{{"node", p.node}, {"phase", p.phase}, {"live_bytes", bytes(p.liveBytes)}});
  json::Array top;
  for (const MemorySummary::Contributor &c : s.topAtPeak) {
    json::Object o{{"kind", c.kind}, {"bytes", bytes(c.bytes)}};
    o["tensor"] = c.tensor.empty() ? json::Value(nullptr) : json::Value(c.tensor);
    o["node"] = c.node.empty() ? json::Value(nullptr) : json::Value(c.node);
    top.push_back(std::move(o));
  }
  json::Array assumed, caveats;
  for (const std::string &d : s.assumedDims)
    assumed.push_back(d);
  for (const std::string &c : s.caveats)
    caveats.push_back(c);
  json::Object o{{"mode", s.mode},
                 {"execution", s.execution},
                 {"execution_stated", s.executionStated},
                 {"setup", json::Object{{"optimizer", s.optimizer},
                                        {"precision", s.precision},
                                        {"zero", static_cast<int64_t>(s.zero)},
                                        {"world_size", static_cast<int64_t>(s.worldSize)},
                                        {"data_parallel", std::string(dataParallelName(s.mesh.dataParallel))},
                                        {"dp_replicate", static_cast<int64_t>(s.mesh.dpReplicate)},
                                        {"dp_shard", static_cast<int64_t>(s.mesh.dpShard)},
                                        {"tp", static_cast<int64_t>(s.mesh.tp)},
                                        {"pp", static_cast<int64_t>(s.mesh.pp)},
                                        {"cp", static_cast<int64_t>(s.mesh.cp)},
                                        {"ep", static_cast<int64_t>(s.mesh.ep)},
                                        {"recompute", s.recompute},
                                        {"float8", s.float8},
                                        {"float8_all_gather", s.float8AllGather},
                                        {"float8_precompute_scale", s.float8PrecomputeScale},
                                        {"target", s.target}}},
                 {"params_bytes", bytes(s.paramsBytes)},
                 {"buffers_bytes", bytes(s.buffersBytes)},
                 {"grads_bytes", bytes(s.gradsBytes)},
                 {"optimizer_bytes", bytes(s.optimizerBytes)},
                 {"inputs_bytes", bytes(s.inputsBytes)},
                 {"activations_bytes", bytes(s.activationsBytes)},
                 {"peak_allocated_bytes", bytes(s.peakAllocatedBytes)},
                 {"peak_reserved_bytes", bytes(s.peakReservedBytes)},
                 {"fragmentation", s.fragmentation()},
                 {"reserved_overhead_bytes", bytes(s.reservedOverheadBytes())},
                 {"reserved_overhead", s.reservedOverhead()},
                 {"fragmented_growth_bytes", bytes(s.fragmentedGrowthBytes)},
                 {"timeline", std::move(timeline)},
                 {"timeline_steps", bytes(s.timelineSteps)},
                 {"top_at_peak", std::move(top)},
                 {"assumed_dims", std::move(assumed)},
                 {"caveats", std::move(caveats)},
                 {"unsized_tensors", bytes(s.unsizedTensors)},
                 {"saturated_tensors", bytes(s.saturatedTensors)},
                 {"tensors", bytes(s.tensors)},
                 {"lower_bound", s.lowerBound()}};
  if (s.execution == "compiled")
    o["compiled"] = json::Object{{"fused_away_tensors", bytes(s.fusedAwayTensors)},
                                 {"fused_away_bytes", bytes(s.fusedAwayBytes)},
                                 {"recomputed_tensors", bytes(s.recomputedTensors)},
                                 {"recomputed_bytes", bytes(s.recomputedBytes)}};
  if (s.mesh.tp > 1) {
    o["tp_plan"] = s.tpPlan;
    o["sequence_parallel"] = s.sequenceParallel;
  }
  if (!s.stages.empty()) {
    json::Array stages;
    for (const MemorySummary::Stage &st : s.stages)
      stages.push_back(json::Object{{"stage", static_cast<int64_t>(st.rank)},
                                    {"first_module", st.firstModule},
                                    {"last_module", st.lastModule},
                                    {"params_bytes", bytes(st.paramsBytes)},
                                    {"buffers_bytes", bytes(st.buffersBytes)},
                                    {"grads_bytes", bytes(st.gradsBytes)},
                                    {"optimizer_bytes", bytes(st.optimizerBytes)},
                                    {"gathered_params_bytes", bytes(st.gatheredParamsBytes)},
                                    {"unsharded_grads_bytes", bytes(st.unshardedGradsBytes)},
                                    {"activations_per_microbatch_bytes", bytes(st.activationsPerMicrobatch)},
                                    {"in_flight_microbatches", st.inFlightMicrobatches},
                                    {"activations_bytes", bytes(st.activationsBytes)},
                                    {"peak_allocated_bytes", bytes(st.peakAllocatedBytes)},
                                    {"peak_reserved_bytes", bytes(st.peakReservedBytes)}});
    o["stages"] = std::move(stages);
    o["worst_stage"] = static_cast<int64_t>(s.worstStage);
    o["pipeline"] = json::Object{{"schedule", s.ppSchedule},
                                 {"microbatches", static_cast<int64_t>(s.microbatches)},
                                 {"virtual_stages", static_cast<int64_t>(s.virtualStages)}};
  }
  o["peak_node"] = s.peakNode.empty() ? json::Value(nullptr) : json::Value(s.peakNode);
  o["peak_phase"] = s.peakPhase.empty() ? json::Value(nullptr) : json::Value(s.peakPhase);
  o["device_capacity_bytes"] = s.capacityBytes > 0 ? json::Value(static_cast<int64_t>(s.capacityBytes))
                                                   : json::Value(nullptr);
  return o;
}

static json::Value optInt(const std::optional<int64_t> &v) { return v ? json::Value(*v) : json::Value(nullptr); }

// The value each size symbol took and where it came from.
static json::Array dimsToJson(const std::vector<SymbolInfo> &symbols) {
  json::Array out;
  for (const SymbolInfo &s : symbols) {
    const char *from = s.origin == SymbolInfo::Origin::Cli       ? "cli"
                       : s.origin == SymbolInfo::Origin::Default ? "default"
                       : s.origin == SymbolInfo::Origin::Hint    ? "hint"
                                                                 : "unbound";
    json::Object o{{"name", s.name},
                   {"kind", s.kind == SymbolInfo::Kind::Unbacked ? "unbacked" : "input"},
                   {"value", optInt(s.value)},
                   {"from", from},
                   {"hint", optInt(s.hint)},
                   {"min", optInt(s.min)},
                   {"max", optInt(s.max)}};
    o["source"] = s.source.empty() ? json::Value(nullptr) : json::Value(s.source);
    if (s.defaultExpr)
      o["default"] = s.defaultExpr->str();
    if (!s.assumption.empty())
      o["assumption"] = s.assumption;
    out.push_back(std::move(o));
  }
  return out;
}

void renderJson(const std::vector<FileReport> &reports, llvm::raw_ostream &os) {
  json::Array files;
  for (const FileReport &r : reports) {
    json::Array diags;
    for (const Diagnostic &d : r.diagnostics)
      diags.push_back(diagnosticToJson(d));
    json::Object f{{"path", r.path}, {"status", r.fatal ? "fatal" : "linted"}, {"diagnostics", std::move(diags)}};
    f["error"] = r.fatal ? json::Value(r.fatalMessage) : json::Value(nullptr);
    f["suppressed"] = r.suppressed;
    f["baselined"] = r.baselined;
    f["stats"] = json::Object{{"nodes", static_cast<int64_t>(r.stats.nodes)},
                              {"graphs", static_cast<int64_t>(r.stats.graphs)},
                              {"params", static_cast<int64_t>(r.stats.params)},
                              {"param_bytes", static_cast<int64_t>(r.stats.paramBytes)},
                              {"buffers", static_cast<int64_t>(r.stats.buffers)},
                              {"buffer_bytes", static_cast<int64_t>(r.stats.bufferBytes)}};
    f["dims"] = dimsToJson(r.symbols);
    json::Array warnings;
    for (const std::string &w : r.setupWarnings)
      warnings.push_back(w);
    f["warnings"] = std::move(warnings);
    json::Array hints;
    for (const std::string &h : r.hints)
      hints.push_back(h);
    f["hints"] = std::move(hints);
    f["fusion"] = fusionToJson(r.fusion);
    f["compute"] = computeToJson(r.cost);
    f["communication"] = communicationToJson(r.cost);
    f["memory"] = memoryToJson(r.memory);
    files.push_back(std::move(f));
  }
  Totals t = totalsOf(reports);
  json::Object root{{"version", kJsonFormatVersion},
                    {"tool", json::Object{{"name", "graphlint"}, {"version", GRAPHLINT_VERSION}}},
                    {"files", std::move(files)},
                    {"summary", json::Object{{"files", static_cast<int64_t>(reports.size())},
                                             {"errors", t.errors},
                                             {"warnings", t.warnings},
                                             {"notes", t.notes},
                                             {"fatal", t.fatal},
                                             {"suppressed", t.suppressed},
                                             {"baselined", t.baselined}}}};
  os << llvm::formatv("{0:2}", json::Value(std::move(root))) << "\n";
}

}  // namespace graphlint
