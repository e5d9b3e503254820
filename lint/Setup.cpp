#include "graphlint/lint/Setup.h"

namespace graphlint {

std::string_view optimizerName(Optimizer o) {
  switch (o) {
  case Optimizer::SGD: return "sgd";
  case Optimizer::Momentum: return "momentum";
  case Optimizer::Adam: return "adam";
  case Optimizer::AdamW: return "adamw";
  }
  return "adam";
}

std::optional<Optimizer> optimizerFromName(std::string_view s) {
  for (Optimizer o : {Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam, Optimizer::AdamW})
    if (s == optimizerName(o))
      return o;
  return std::nullopt;
}

std::string_view precisionName(Precision p) {
  switch (p) {
  case Precision::FP32: return "fp32";
  case Precision::FP16Mixed: return "fp16-mixed";
  case Precision::BF16Mixed: return "bf16-mixed";
  case Precision::BF16: return "bf16";
  case Precision::TF32: return "tf32";
  }
  return "fp32";
}

std::optional<Precision> precisionFromName(std::string_view s) {
  for (Precision p : {Precision::FP32, Precision::FP16Mixed, Precision::BF16Mixed, Precision::BF16, Precision::TF32})
    if (s == precisionName(p))
      return p;
  return std::nullopt;
}

PrecisionPolicy precisionPolicy(Precision p) {
  switch (p) {
  case Precision::FP32:
  case Precision::TF32: return {4, 4, 0, 4, false};
  case Precision::FP16Mixed:
  case Precision::BF16Mixed: return {2, 2, 4, 4, true};
  case Precision::BF16: return {2, 2, 0, 2, true};
  }
  return {};
}

std::string_view recomputeName(Recompute r) {
  switch (r) {
  case Recompute::None: return "none";
  case Recompute::Layer: return "layer";
  case Recompute::Sqrt: return "sqrt";
  }
  return "none";
}

std::optional<Recompute> recomputeFromName(std::string_view s) {
  if (s == "none") return Recompute::None;
  if (s == "layer" || s == "full") return Recompute::Layer;
  if (s == "sqrt") return Recompute::Sqrt;
  return std::nullopt;
}

const char *recomputeChoices() { return "none, layer (alias full), sqrt"; }

double Setup::ruleOption(std::string_view code, std::string_view option, double fallback) const {
  auto r = ruleOptions.find(std::string(code));
  if (r == ruleOptions.end())
    return fallback;
  auto o = r->second.find(std::string(option));
  return o == r->second.end() ? fallback : o->second;
}

}  // namespace graphlint
