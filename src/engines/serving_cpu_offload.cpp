#include "engines/serving_cpu_offload.h"

#include "engines/engine_impl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"

namespace vc {

namespace {
constexpr double kMaxGib = 1'000'000;  // a million GiB per GPU: beyond any host
}

uint64_t cpu_offload_cap_bytes(const std::string& value, const std::string& flag, bool whole_only) {
  const std::string accepted = whole_only ? "accepted: a whole number of GiB per GPU, 0 (off) to 1,000,000 (SGLang reads it as an int)"
                                          : "accepted: a number of GiB per GPU, 0 (off) to 1,000,000, e.g. 4 or 2.5";
  const bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
  char* end = nullptr;
  const double gib = value.empty() ? -1 : std::strtod(value.c_str(), &end);
  const bool number = !value.empty() && end == value.c_str() + value.size() && std::isfinite(gib);
  if (!number || (whole_only && !digits) || gib < 0 || gib > kMaxGib) throw InputError(flag, "'" + value + "' is not accepted; " + accepted);
  // int(cpu_offload_gb * 1024**3): a double product, truncated.
  return static_cast<uint64_t>(std::floor(gib * 1073741824.0));
}

bool offload_name_matches(const std::string& name, const std::vector<std::string>& segments) {
  const std::string dotted = "." + name + ".";
  for (const auto& seg : segments)
    if (dotted.find("." + seg + ".") != std::string::npos) return true;
  return false;
}

OffloadRule vllm_offload_rule(uint64_t cap, const VllmOffloadSettings& s) {
  OffloadRule r;
  if (s.prefetch()) {
    r.group_size = s.group_size;
    r.num_in_group = s.num_in_group;
    r.prefetch_step = s.prefetch_step;
    r.segments = s.offload_params;
  } else {
    r.cap = cap;
    r.segments = s.cpu_offload_params;
  }
  return r;
}

OffloadWalker::OffloadWalker(const OffloadRule& rule) : rule_(rule) {
  o_.cap = rule.prefetch() ? 0 : rule.cap;
  o_.segments = rule.segments;
  if (rule.prefetch()) o_.group_size = rule.group_size, o_.num_in_group = rule.num_in_group, o_.prefetch_step = rule.prefetch_step;
}

std::vector<bool> OffloadWalker::layer(const std::vector<NamedParam>& params) {
  std::vector<bool> moved(params.size(), false);
  const uint64_t index = index_++;
  ++o_.stage_layers;
  const bool filtered = !rule_.segments.empty();
  const auto eligible = [&](const NamedParam& p) { return !filtered || offload_name_matches(p.name, rule_.segments); };
  if (filtered)
    for (const auto& p : params) o_.matched_params += eligible(p) ? 1 : 0;
  uint64_t n = 0;
  if (rule_.prefetch()) {
    // prefetch.py wrap_modules: the last num_in_group layers of every group_size; a layer none of
    // whose parameters match is skipped.
    if (index % rule_.group_size < rule_.group_size - rule_.num_in_group) return moved;
    for (size_t k = 0; k < params.size(); ++k) {
      if (!eligible(params[k])) continue;
      moved[k] = true;
      ++n;
      o_.bytes = checked_add(o_.bytes, params[k].bytes);
      ++o_.params;
      // StaticBufferPool: prefetch_step slots of each distinct (name, shape, stride, dtype).
      const std::pair<std::string, uint64_t> key{params[k].name, params[k].bytes};
      if (std::find(keys_.begin(), keys_.end(), key) == keys_.end()) {
        keys_.push_back(key);
        ++o_.staging_keys;
        o_.staging = checked_add(o_.staging, checked_mul(params[k].bytes, rule_.prefetch_step));
      }
    }
    if (n) ++o_.layers_touched;
    if (n && n == params.size()) ++o_.layers_whole;
    return moved;
  }
  if (o_.bytes >= rule_.cap) return moved;  // the module check: nothing more moves
  bool stopped = false;
  for (size_t k = 0; k < params.size(); ++k) {
    if (o_.bytes >= rule_.cap) {  // the parameter check: the crossing one moved whole already
      stopped = true;
      break;
    }
    if (!eligible(params[k])) continue;  // --cpu-offload-params: not matched, the walk goes on
    moved[k] = true;
    ++n;
    o_.bytes = checked_add(o_.bytes, params[k].bytes);
    ++o_.params;
  }
  if (n) ++o_.layers_touched;
  if (o_.bytes >= rule_.cap && !o_.cap_reached_in) o_.cap_reached_in = index + 1;
  if (n == params.size()) ++o_.layers_whole;
  else if (!filtered || stopped) o_.moved_in_last = n, o_.kept_in_last = params.size() - n;
  return moved;
}

CpuOffload cpu_offload_walk(const std::vector<std::vector<NamedParam>>& layers, const OffloadRule& rule) {
  OffloadWalker w(rule);
  for (const auto& l : layers) w.layer(l);
  return w.result();
}

CpuOffload cpu_offload_walk(const std::vector<std::vector<uint64_t>>& layers, uint64_t cap) {
  std::vector<std::vector<NamedParam>> named;
  for (const auto& l : layers) {
    named.emplace_back();
    for (uint64_t b : l) named.back().push_back({"", b});
  }
  OffloadRule rule;
  rule.cap = cap;
  return cpu_offload_walk(named, rule);
}

namespace {
std::string segment_list(const std::vector<std::string>& segs) {
  std::string out;
  for (const auto& s : segs) out += (out.empty() ? "" : " ") + ("'" + s + "'");
  return out;
}
}  // namespace

std::string cpu_offload_formula(const CpuOffload& o) {
  const std::string matched =
      o.segments.empty() ? std::string()
                         : fmt::format(" matching {} ({} of the stage's parameters match)", segment_list(o.segments), format_count(o.matched_params));
  if (o.prefetch())
    return fmt::format("the layers i of this rank's {} with i mod {} >= {} ({} layers), {}: {} parameters, {} B; the GPU keeps prefetch_step {} slot(s) "
                       "of each of their {} distinct parameters (name and size): {} B",
                       o.stage_layers, o.group_size, o.group_size - o.num_in_group, o.layers_touched,
                       o.segments.empty() ? std::string("every parameter") : "their parameters" + matched, o.params, format_count(o.bytes),
                       o.prefetch_step, o.staging_keys, format_count(o.staging));
  if (!o.segments.empty())
    return fmt::format("{} parameters{} in {} of the {} decoder layers on this rank, moved while under the cap int(cpu_offload_gb x 1024^3) = {} B{}: {} B",
                       o.params, matched, o.layers_touched, o.stage_layers, format_count(o.cap),
                       o.cap_reached_in ? fmt::format(" (reached in layer {}, the last crossing it moved whole)", o.cap_reached_in)
                                        : std::string(" (never reached: every match moved)"),
                       format_count(o.bytes));
  const uint64_t partial = o.kept_in_last ? 1 : 0;
  return fmt::format("{} parameters of the {} decoder layers on this rank ({} whole{}), moved while under the cap int(cpu_offload_gb x 1024^3) = {} B: {} B",
                     o.params, o.stage_layers, o.layers_whole,
                     partial ? fmt::format(", then the first {} parameters of layer {}, the last crossing the cap moved whole; its other {} stay on the GPU",
                                           o.moved_in_last, o.layers_whole + 1, o.kept_in_last)
                             : "",
                     format_count(o.cap), format_count(o.bytes));
}

const char* cpu_offload_flag(const CpuOffload& o) { return o.prefetch() ? "--offload-group-size" : "--cpu-offload-gb"; }

std::string cpu_offload_moved_suffix(const CpuOffload& o) {
  return o.bytes ? fmt::format(" - {} B moved to host memory by {}", format_count(o.bytes), cpu_offload_flag(o)) : "";
}

}  // namespace vc

namespace vc::engines {

void add_cpu_offload_host(EngineAnswer& a, const CpuOffload& o, uint64_t ranks, const EngineRequest& r, const std::string& source, const std::string& how_read) {
  if (!o.on()) return;
  const std::string flag = cpu_offload_flag(o);
  if (o.cap) a.settings.push_back({"cpu_offload_gb", static_cast<double>(o.cap) / 1073741824.0});
  if (o.bytes == 0) return;  // nothing moved (a --cpu-offload-params filter matching nothing): no host line
  a.notes.push_back(fmt::format("{}: {} B of each rank's decoder layers live in pinned host memory{}", flag, format_count(o.bytes), how_read));
  DeviceAllocation d;
  d.name = "host";
  if (r.box && r.box->ram_bytes) d.capacity = r.box->ram_bytes;
  d.add({AllocKind::Weights, "Weights offloaded by " + flag + " (pinned host memory)", checked_mul(o.bytes, ranks),
         fmt::format("{} rank(s) x {} B ({})", ranks, format_count(o.bytes), cpu_offload_formula(o)),
         "each rank pins its own share (page-locked: the OS cannot page it out); every rank taken as moving what rank 0 moves", source});
  a.devices.push_back(std::move(d));
}

}  // namespace vc::engines
