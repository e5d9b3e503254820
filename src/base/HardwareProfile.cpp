// Hardware profiles: the hardware.yaml reader (llvm::yaml traits), the built-in
// table (data/hardware.yaml embedded at build time; datasheet numbers,
// docs/hardware.md) and the catalog that merges a user file over it.
#include "graphlint/base/HardwareProfile.h"

#include "graphlint/ir/InputFile.h"
#include "graphlint/ir/MessageText.h"
#include "graphlint/base/EnumNames.h"

#include <fmt/format.h>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/ErrorHandling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/YAMLTraits.h>

#include <algorithm>
#include <cmath>

namespace graphlint {

namespace {
const EnumName<MathPrecision> kMathPrecisions[] = {
    {MathPrecision::FP64, "fp64"}, {MathPrecision::FP32, "fp32"}, {MathPrecision::TF32, "tf32"},
    {MathPrecision::FP16, "fp16"}, {MathPrecision::BF16, "bf16"}, {MathPrecision::FP8, "fp8"},
    {MathPrecision::INT8, "int8"}};
static_assert(sizeof(kMathPrecisions) / sizeof(kMathPrecisions[0]) == kNumMathPrecisions);
}  // namespace

std::string_view mathPrecisionName(MathPrecision p) { return nameOf(kMathPrecisions, p); }
std::optional<MathPrecision> mathPrecisionFromName(std::string_view s) { return fromName(kMathPrecisions, s); }

std::optional<MathPrecision> mathPrecisionOf(DType t) {
  switch (t) {
  case DType::Double: return MathPrecision::FP64;
  case DType::Float: return MathPrecision::FP32;
  case DType::Float16: return MathPrecision::FP16;
  case DType::BFloat16: return MathPrecision::BF16;
  case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    return MathPrecision::FP8;
  case DType::Int8: case DType::UInt8: return MathPrecision::INT8;
  default: return std::nullopt;
  }
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGBps = 1e9;
constexpr double kTera = 1e12;

// The built-in table: data/hardware.yaml as it was when the binary was built
// (src/base/EmbedFile.cmake), so a binary moved anywhere knows its targets.
constexpr const char kBuiltinYaml[] =
#include "HardwareYaml.inc"
    ;
constexpr const char *kBuiltinName = "data/hardware.yaml (built in)";

// "H100_SXM", "h100 sxm" and "H100-SXM" name the same profile.
std::string normalize(std::string_view s) {
  std::string out;
  for (char c : s)
    out.push_back(c == '_' || c == ' ' ? '-' : static_cast<char>(llvm::toLower(c)));
  return out;
}

// ---- hardware.yaml -------------------------------------------------------

struct NameList {
  std::vector<std::string> names;
  auto begin() const { return names.begin(); }  // llvm::yaml elides empty sequences
  auto end() const { return names.end(); }
};
struct PeakYaml { std::array<llvm::Optional<double>, kNumMathPrecisions> tflops; };
struct ProfileYaml {
  std::string name, description, architecture, computeCapability, source;
  NameList aliases;
  unsigned smCount = 0;
  double memoryGiB = 0, bandwidthGBps = 0;
  llvm::Optional<double> launchOverheadUs, computeEfficiency, tensorCoreEfficiency, attentionEfficiency, memoryEfficiency;
  llvm::Optional<double> usdPerGpuHour;
  std::string intraNode, interNode;
  PeakYaml peak;
};
struct ProfileList { std::vector<ProfileYaml> items; };
struct LinkYaml {
  std::string name, description, source;
  NameList aliases;
  double bandwidthGBps = 0;
  llvm::Optional<double> efficiency, latencyUs, halfBandwidthKiB;
};
struct LinkList {
  std::vector<LinkYaml> items;
  auto begin() const { return items.begin(); }  // mapOptional compares with the default
  auto end() const { return items.end(); }
};
struct HardwareFile { ProfileList profiles; LinkList interconnects; };

}  // namespace
}  // namespace graphlint

namespace llvm::yaml {
using graphlint::HardwareFile;
using graphlint::LinkList;
using graphlint::LinkYaml;
using graphlint::NameList;
using graphlint::PeakYaml;
using graphlint::ProfileList;
using graphlint::ProfileYaml;

template <> struct SequenceTraits<NameList> {
  static size_t size(IO &, NameList &l) { return l.names.size(); }
  static std::string &element(IO &, NameList &l, size_t i) {
    if (i >= l.names.size()) l.names.resize(i + 1);
    return l.names[i];
  }
  static const bool flow = true;
};
template <typename List> struct ItemSequence {
  static size_t size(IO &, List &l) { return l.items.size(); }
  static auto &element(IO &, List &l, size_t i) {
    if (i >= l.items.size()) l.items.resize(i + 1);
    return l.items[i];
  }
};
template <> struct SequenceTraits<ProfileList> : ItemSequence<ProfileList> {};
template <> struct SequenceTraits<LinkList> : ItemSequence<LinkList> {};
template <> struct MappingTraits<PeakYaml> {
  static void mapping(IO &io, PeakYaml &p) {
    for (unsigned i = 0; i < graphlint::kNumMathPrecisions; ++i) {
      std::string key(graphlint::mathPrecisionName(static_cast<graphlint::MathPrecision>(i)));
      io.mapOptional(key.c_str(), p.tflops[i]);
    }
  }
};
template <> struct MappingTraits<ProfileYaml> {
  static void mapping(IO &io, ProfileYaml &p) {
    io.mapRequired("name", p.name);
    io.mapOptional("aliases", p.aliases);
    io.mapOptional("description", p.description);
    io.mapOptional("architecture", p.architecture);
    io.mapOptional("compute_capability", p.computeCapability);
    io.mapRequired("sm_count", p.smCount);
    io.mapRequired("memory_gib", p.memoryGiB);
    io.mapRequired("memory_bandwidth_gb_per_s", p.bandwidthGBps);
    io.mapOptional("launch_overhead_us", p.launchOverheadUs);
    io.mapRequired("peak_tflops", p.peak);
    io.mapOptional("source", p.source);
    io.mapOptional("compute_efficiency", p.computeEfficiency);
    io.mapOptional("tensor_core_efficiency", p.tensorCoreEfficiency);
    io.mapOptional("attention_efficiency", p.attentionEfficiency);
    io.mapOptional("memory_efficiency", p.memoryEfficiency);
    io.mapOptional("usd_per_gpu_hour", p.usdPerGpuHour);
    io.mapOptional("intra_node", p.intraNode);
    io.mapOptional("inter_node", p.interNode);
  }
};
// The same shape as the profile mapping with other keys: llvm::yaml wants one
// MappingTraits per type.
template <> struct MappingTraits<LinkYaml> {
  static void mapping(IO &io, LinkYaml &l) {
    io.mapRequired("name", l.name);
    io.mapOptional("aliases", l.aliases);
    io.mapOptional("description", l.description);
    io.mapRequired("bandwidth_gb_per_s", l.bandwidthGBps);
    io.mapOptional("efficiency", l.efficiency);
    io.mapOptional("latency_us", l.latencyUs);
    io.mapOptional("half_bandwidth_kib", l.halfBandwidthKiB);
    io.mapOptional("source", l.source);
  }
};
template <> struct MappingTraits<HardwareFile> {
  static void mapping(IO &io, HardwareFile &f) {
    io.mapRequired("profiles", f.profiles);
    io.mapOptional("interconnects", f.interconnects);
  }
};
}  // namespace llvm::yaml

namespace graphlint {
namespace {

// "9.0" -> 90; nullopt when malformed.
std::optional<unsigned> parseComputeCapability(llvm::StringRef s) {
  auto [major, minor] = s.split('.');
  unsigned ma = 0, mi = 0;
  if (major.getAsInteger(10, ma) || (!minor.empty() && minor.getAsInteger(10, mi)) || mi > 9)
    return std::nullopt;
  return ma * 10 + mi;
}

}  // namespace

namespace {

llvm::Error fileError(llvm::StringRef bufferName, const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", bufferName.str().c_str(),
                                 oneLine(why).c_str());
}

// One llvm::yaml pass over the whole file; profiles and interconnects are
// validated by their own readers below.
llvm::Expected<HardwareFile> readHardwareFile(llvm::StringRef text, llvm::StringRef bufferName) {
  // llvm::yaml recurses once per level.
  if (llvm::Error e = checkNestingDepth(text, TextSyntax::Yaml, bufferName.str()))
    return std::move(e);
  // Collect llvm::yaml's diagnostics instead of letting it print to stderr.
  std::string diags;
  auto handler = [](const llvm::SMDiagnostic &d, void *ctx) {
    auto &out = *static_cast<std::string *>(ctx);
    if (d.getKind() != llvm::SourceMgr::DK_Error)
      return;
    if (!out.empty())
      out += "; ";
    out += fmt::format("line {}: {}", d.getLineNo(), d.getMessage().str());
  };
  HardwareFile file;
  llvm::yaml::Input in(text, nullptr, handler, &diags);
  // Newer files may carry keys this binary does not know.
  in.setAllowUnknownKeys(true);
  in >> file;
  if (in.error())
    return fileError(bufferName, diags.empty() ? "not a hardware profile file" : diags);
  return file;
}

}  // namespace

llvm::Expected<std::vector<Interconnect>> parseInterconnectYaml(llvm::StringRef text, llvm::StringRef bufferName) {
  auto file = readHardwareFile(text, bufferName);
  if (!file)
    return file.takeError();
  std::vector<Interconnect> out;
  for (const LinkYaml &y : file->interconnects.items) {
    auto bad = [&](const std::string &why) { return fileError(bufferName, fmt::format("interconnect '{}': {}", escapedForMessage(y.name), why)); };
    if (y.name.empty())
      return fileError(bufferName, "an interconnect has an empty name");
    Interconnect l;
    l.name = y.name;
    l.aliases = y.aliases.names;
    l.description = y.description;
    l.source = y.source;
    if (!(y.bandwidthGBps > 0))
      return bad("bandwidth_gb_per_s must be positive");
    l.bandwidth = y.bandwidthGBps * kGBps;
    l.efficiency = y.efficiency.getValueOr(l.efficiency);
    l.latency = y.latencyUs ? *y.latencyUs * 1e-6 : l.latency;
    l.halfBandwidthBytes = y.halfBandwidthKiB ? *y.halfBandwidthKiB * 1024 : l.halfBandwidthBytes;
    if (!(l.efficiency > 0 && l.efficiency <= 1))
      return bad("efficiency must be in (0, 1]");
    if (!(l.latency >= 0) || !(l.halfBandwidthBytes >= 0))
      return bad("latency_us and half_bandwidth_kib must not be negative");
    out.push_back(std::move(l));
  }
  return out;
}

llvm::Expected<std::vector<HardwareProfile>> parseHardwareYaml(llvm::StringRef text, llvm::StringRef bufferName) {
  auto parsedFile = readHardwareFile(text, bufferName);
  if (!parsedFile)
    return parsedFile.takeError();
  const HardwareFile &file = *parsedFile;
  auto fail = [&](const std::string &why) { return fileError(bufferName, why); };

  std::vector<HardwareProfile> out;
  for (const ProfileYaml &y : file.profiles.items) {
    auto bad = [&](const std::string &why) { return fail(fmt::format("profile '{}': {}", escapedForMessage(y.name), why)); };
    if (y.name.empty())
      return fail("a profile has an empty name");
    HardwareProfile p;
    p.name = y.name;
    p.aliases = y.aliases.names;
    p.description = y.description;
    p.architecture = y.architecture;
    if (!y.computeCapability.empty()) {
      auto cc = parseComputeCapability(y.computeCapability);
      if (!cc)
        return bad(fmt::format("compute_capability '{}' is not MAJOR.MINOR", escapedForMessage(y.computeCapability)));
      p.computeCapability = *cc;
    }
    if (y.smCount == 0)
      return bad("sm_count must be positive");
    if (!(y.memoryGiB > 0) || !(y.bandwidthGBps > 0))
      return bad("memory_gib and memory_bandwidth_gb_per_s must be positive");
    p.smCount = y.smCount;
    p.memoryBytes = y.memoryGiB * kGiB;
    p.memoryBandwidth = y.bandwidthGBps * kGBps;
    if (y.launchOverheadUs) {
      if (!(*y.launchOverheadUs >= 0))
        return bad("launch_overhead_us must not be negative");
      p.launchOverhead = *y.launchOverheadUs * 1e-6;
    }
    for (unsigned i = 0; i < kNumMathPrecisions; ++i) {
      double v = y.peak.tflops[i].getValueOr(0);
      if (!(v >= 0))
        return bad("peak_tflops values must not be negative");
      p.peak[i] = v * kTera;
    }
    if (!p.supports(MathPrecision::FP32))
      return bad("peak_tflops.fp32 is required");
    p.source = y.source;
    p.computeEfficiency = y.computeEfficiency.getValueOr(p.computeEfficiency);
    p.tensorCoreEfficiency = y.tensorCoreEfficiency.getValueOr(p.tensorCoreEfficiency);
    p.memoryEfficiency = y.memoryEfficiency.getValueOr(p.memoryEfficiency);
    if (!(p.computeEfficiency > 0 && p.computeEfficiency <= 1) || !(p.memoryEfficiency > 0 && p.memoryEfficiency <= 1) ||
        !(p.tensorCoreEfficiency > 0 && p.tensorCoreEfficiency <= 1))
      return bad("compute_efficiency, tensor_core_efficiency and memory_efficiency must be in (0, 1]");
    if (y.attentionEfficiency) {
      if (!(*y.attentionEfficiency > 0 && *y.attentionEfficiency <= 1))
        return bad("attention_efficiency must be in (0, 1]");
      p.attentionEfficiency = *y.attentionEfficiency;
    }
    if (y.usdPerGpuHour) {
      if (!(*y.usdPerGpuHour > 0 && *y.usdPerGpuHour < 1e6))
        return bad("usd_per_gpu_hour must be a price above 0");
      p.usdPerGpuHour = *y.usdPerGpuHour;
    }
    if (!y.intraNode.empty())
      p.intraNode = y.intraNode;
    if (!y.interNode.empty())
      p.interNode = y.interNode;
    out.push_back(std::move(p));
  }
  return out;
}

HardwareCatalog HardwareCatalog::builtin() {
  static const HardwareCatalog table = [] {
    HardwareCatalog c;
    auto profiles = parseHardwareYaml(kBuiltinYaml, kBuiltinName);
    auto links = parseInterconnectYaml(kBuiltinYaml, kBuiltinName);
    // The build embedded a file the unit tests parse: failing here means the
    // binary was built from a broken data/hardware.yaml.
    if (!profiles)
      llvm::report_fatal_error(llvm::Twine(llvm::toString(profiles.takeError())));
    if (!links)
      llvm::report_fatal_error(llvm::Twine(llvm::toString(links.takeError())));
    c.profiles_ = std::move(*profiles);
    c.interconnects_ = std::move(*links);
    return c;
  }();
  return table;
}

namespace {

// Profiles and interconnects are looked up and replaced the same way: by
// canonical name first, then by alias, case-insensitively.
template <typename T> const T *findByName(const std::vector<T> &items, std::string_view nameOrAlias) {
  std::string key = normalize(nameOrAlias);
  for (const T &x : items)
    if (normalize(x.name) == key)
      return &x;
  for (const T &x : items)
    for (const std::string &a : x.aliases)
      if (normalize(a) == key)
        return &x;
  return nullptr;
}

template <typename T> void replaceByName(std::vector<T> &items, std::vector<T> more) {
  for (T &x : more) {
    auto it = std::find_if(items.begin(), items.end(), [&](const T &q) { return normalize(q.name) == normalize(x.name); });
    if (it != items.end())
      *it = std::move(x);
    else
      items.push_back(std::move(x));
  }
}

}  // namespace

const HardwareProfile *HardwareCatalog::find(std::string_view nameOrAlias) const {
  return findByName(profiles_, nameOrAlias);
}

void HardwareCatalog::merge(std::vector<HardwareProfile> more) {
  replaceByName(profiles_, std::move(more));
  // An alias taken over by a new profile must resolve to it: drop the alias
  // from every earlier profile that still lists it.
  for (size_t i = 0; i < profiles_.size(); ++i)
    for (size_t j = i + 1; j < profiles_.size(); ++j)
      for (const std::string &a : profiles_[j].aliases)
        llvm::erase_if(profiles_[i].aliases, [&](const std::string &b) { return normalize(a) == normalize(b); });
}

const Interconnect *HardwareCatalog::findInterconnect(std::string_view nameOrAlias) const {
  return findByName(interconnects_, nameOrAlias);
}

void HardwareCatalog::mergeInterconnects(std::vector<Interconnect> more) {
  replaceByName(interconnects_, std::move(more));
}

double Interconnect::busBandwidth(double chunkBytes) const {
  double peak = bandwidth * efficiency;
  if (!(chunkBytes > 0))
    return peak;
  return peak * chunkBytes / (chunkBytes + halfBandwidthBytes);
}

namespace {

bool environmentIgnored = false;

// Only an explicit choice: the built-in table is data/hardware.yaml already.
std::vector<std::string> dataFileCandidates() {
  if (environmentIgnored)
    return {};
  if (auto env = llvm::sys::Process::GetEnv("GRAPHLINT_HARDWARE_FILE"); env && !env->empty())
    return {*env};
  return {};
}

}  // namespace

void HardwareCatalog::ignoreEnvironment() { environmentIgnored = true; }

const HardwareCatalog &HardwareCatalog::instance() {
  static const HardwareCatalog catalog = [] {
    HardwareCatalog c = builtin();
    for (const std::string &path : dataFileCandidates()) {
      auto text = readInputFile(path, InputKind::HardwareFile);
      if (!text) {
        c.loadError_ = llvm::toString(text.takeError());
        break;
      }
      auto parsed = parseHardwareYaml(*text, path);
      if (!parsed) {
        c.loadError_ = llvm::toString(parsed.takeError());
        break;
      }
      auto links = parseInterconnectYaml(*text, path);
      if (!links) {
        c.loadError_ = llvm::toString(links.takeError());
        break;
      }
      c.merge(std::move(*parsed));
      c.mergeInterconnects(std::move(*links));
      c.dataFile_ = path;
      break;
    }
    return c;
  }();
  return catalog;
}

llvm::Expected<const HardwareProfile &> resolveHardwareTarget(std::string_view target) {
  const HardwareCatalog &c = HardwareCatalog::instance();
  if (const HardwareProfile *p = c.find(target))
    return *p;
  std::string names;
  for (const HardwareProfile &p : c.profiles())
    names += (names.empty() ? "" : ", ") + p.name;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "unknown target '%s' (known: %s)",
                                 escapedForMessage(std::string(target)).c_str(), names.c_str());
}

llvm::Expected<const Interconnect &> resolveInterconnect(std::string_view name) {
  const HardwareCatalog &c = HardwareCatalog::instance();
  if (const Interconnect *i = c.findInterconnect(name))
    return *i;
  std::string names;
  for (const Interconnect &i : c.interconnects())
    names += (names.empty() ? "" : ", ") + i.name;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "unknown interconnect '%s' (known: %s)",
                                 escapedForMessage(std::string(name)).c_str(), names.c_str());
}

double rooflineSeconds(const HardwareProfile &hw, double flops, MathPrecision p, double bytes) {
  double peak = hw.supports(p) ? hw.peakFor(p) : hw.peakFor(MathPrecision::FP32);
  double compute = flops > 0 && peak > 0 ? flops / peak : 0;
  double memory = bytes > 0 && hw.memoryBandwidth > 0 ? bytes / hw.memoryBandwidth : 0;
  return std::max(compute, memory);
}

}  // namespace graphlint
