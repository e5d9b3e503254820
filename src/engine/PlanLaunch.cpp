// The launch line of a plan's pick (Plan.h, planLaunch): torchrun and a
// torchtitan job config. The TOML is written key for key as the torchtitan
// mapping of LaunchConfig.cpp reads it (mapTorchtitan), so that
// `graphlint MODEL --launch-config plan.toml` resolves the same setup
// (tests/unit/PlanTest.cpp reads it back).
#include "graphlint/engine/Plan.h"

#include <fmt/format.h>

namespace graphlint {

namespace {

// torchtitan's schedule class names (torch.distributed.pipelining), which
// the mapping reads case-insensitively.
const char *torchtitanSchedule(PipelineSchedule s) {
  switch (s) {
  case PipelineSchedule::GPipe: return "GPipe";
  case PipelineSchedule::OneFOneB: return "1F1B";
  case PipelineSchedule::Interleaved1F1B: return "Interleaved1F1B";
  case PipelineSchedule::ZBV: return "ZBVZeroBubble";
  }
  return "1F1B";
}

}  // namespace

PlanLaunch planLaunch(const PlanSetup &p, const Setup &base) {
  PlanLaunch l;
  unsigned perNode = std::max(1u, std::min(base.gpusPerNode, p.gpus));
  unsigned nodes = (p.gpus + perNode - 1) / perNode;
  l.torchrun = fmt::format("torchrun --nnodes {} --nproc-per-node {} -m torchtitan.train --job.config_file plan.toml",
                           nodes, perNode);
  std::string t = "[training]\n";
  t += fmt::format("local_batch_size = {}\n", p.batch);
  if (auto it = base.dims.find("seq"); it != base.dims.end())
    t += fmt::format("seq_len = {}\n", it->second);
  switch (base.precision) {
  case Precision::BF16Mixed: t += "mixed_precision_param = \"bfloat16\"\n"; break;
  case Precision::FP16Mixed: t += "mixed_precision_param = \"float16\"\n"; break;
  case Precision::FP32:
  case Precision::TF32: t += "mixed_precision_param = \"float32\"\n"; break;
  case Precision::BF16: t += "# pure bf16 (no fp32 master weights) has no torchtitan setting\n"; break;
  }
  t += "\n[parallelism]\n";
  t += fmt::format("data_parallel_replicate_degree = {}\n", p.dpReplicate);
  t += fmt::format("data_parallel_shard_degree = {}\n", p.dpShard);
  t += fmt::format("tensor_parallel_degree = {}\n", p.tp);
  if (p.tp > 1 && base.asyncTp)
    t += "enable_async_tensor_parallel = true\n";
  t += fmt::format("context_parallel_degree = {}\n", p.cp);
  t += fmt::format("expert_parallel_degree = {}\n", p.ep);
  t += fmt::format("pipeline_parallel_degree = {}\n", p.pp);
  if (p.pp > 1) {
    t += fmt::format("pipeline_parallel_schedule = \"{}\"\n", torchtitanSchedule(p.ppSchedule));
    t += fmt::format("pipeline_parallel_microbatch_size = {}\n", p.batch / std::max(1u, p.microbatches));
  }
  t += "\n[activation_checkpoint]\n";
  switch (p.recompute) {
  case Recompute::None: t += "mode = \"none\"\n"; break;
  case Recompute::Layer: t += "mode = \"full\"\n"; break;
  case Recompute::SelectiveOp: t += "mode = \"selective\"\nselective_ac_option = \"op\"\n"; break;
  case Recompute::SelectiveLayer:
    t += fmt::format("mode = \"selective\"\nselective_ac_option = \"{}\"\n", p.recomputeEvery);
    break;
  case Recompute::Sqrt: t += "# sqrt checkpointing has no torchtitan setting\n"; break;
  }
  t += "\n[compile]\n";
  t += fmt::format("enable = {}\n", p.backend == FusionBackend::Inductor ? "true" : "false");
  if (p.float8 != Float8::None) {
    t += "\n[model]\nconverters = [\"float8\"]\n\n[float8]\n";
    t += fmt::format("recipe_name = \"{}\"\n", float8Name(p.float8));
    if (p.float8 == Float8::Tensorwise && base.float8AllGather)
      t += "enable_fsdp_float8_all_gather = true\n";
    if (p.float8 == Float8::Tensorwise && base.float8PrecomputeScale)
      t += "precompute_float8_dynamic_scale_for_fsdp = true\n";
  }
  switch (base.optimizer) {
  case Optimizer::Adam: t += "\n[optimizer]\nname = \"Adam\"\n"; break;
  case Optimizer::AdamW: t += "\n[optimizer]\nname = \"AdamW\"\n"; break;
  case Optimizer::SGD: t += "\n[optimizer]\nname = \"SGD\"\n"; break;
  case Optimizer::Momentum: t += "\n# SGD with momentum has no torchtitan optimizer name\n"; break;
  }
  l.toml = std::move(t);
  return l;
}

}  // namespace graphlint
