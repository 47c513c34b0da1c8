#include "plan/unified_memory.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "plan/hardware.h"

namespace vc {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr const char* kAccepted =
    "accepted: a size such as 56GiB or 57344MiB (what iogpu.wired_limit_mb=57344 sets), a share of the memory such as 90%, or default";

// "64 GiB" when whole, "21.33 GiB" otherwise: these memories are sold in binary GiB.
std::string gib(uint64_t bytes) { return bytes % kGiB == 0 ? fmt::format("{} GiB", bytes / kGiB) : format_bytes(bytes, ByteUnits::Binary, 2); }

// "75%" where the fraction is a whole percentage, "2/3" where it is not.
std::string share_text(uint64_t num, uint64_t den) { return (100 * num) % den == 0 ? fmt::format("{}%", 100 * num / den) : fmt::format("{}/{}", num, den); }

bool small(const GpuShareRule& r, uint64_t visible) { return r.small_den && visible <= r.small_up_to; }

std::string default_formula(const GpuShareRule& r, uint64_t physical, uint64_t share) {
  const uint64_t visible = physical - r.reserve;
  const bool is_small = small(r, visible);
  const std::string whole = r.reserve ? fmt::format("{} - {} the firmware and kernel keep", gib(physical), gib(r.reserve)) : gib(physical);
  const std::string frac = is_small ? share_text(r.small_num, r.small_den) : share_text(r.num, r.den);
  const std::string of = frac == "100%" ? whole : fmt::format("{} of {}", frac, r.reserve ? "(" + whole + ")" : whole);
  return fmt::format("{} = {}, {}", of, gib(share), r.name);
}

// The limit as the user gives it, in bytes of `physical`.
uint64_t parse_limit(std::string_view text, const std::string& flag, uint64_t physical) {
  const std::string raw(text);
  uint64_t bytes = 0;
  try {
    if (!raw.empty() && raw.back() == '%') {
      const uint32_t bp = parse_percent_bp(raw, flag);
      if (bp == 0 || bp > 10000) throw InputError(flag, "'" + raw + "' must be above 0% and at most 100% of the memory; " + kAccepted);
      bytes = checked_mul(physical / 10000, bp) + (physical % 10000) * bp / 10000;
    } else {
      bytes = parse_bytes(raw, flag);
    }
  } catch (const InputError& e) {
    if (std::string(e.what()).find(kAccepted) != std::string::npos) throw;
    throw InputError(flag, "'" + raw + "' is not a GPU memory limit; " + kAccepted);
  }
  if (bytes < kGiB) throw InputError(flag, fmt::format("'{}' is under 1 GiB (a plain number is bytes: write {}MiB for iogpu.wired_limit_mb={}); {}", raw, raw, raw, kAccepted));
  return bytes;
}

}  // namespace

uint64_t default_gpu_share(const GpuShareRule& r, uint64_t physical) {
  const uint64_t visible = physical - r.reserve;
  const uint64_t num = small(r, visible) ? r.small_num : r.num, den = small(r, visible) ? r.small_den : r.den;
  // visible x num / den without overflow: whole parts first, then the remainder.
  return checked_add(checked_mul(visible / den, num), (visible % den) * num / den);
}

GpuShare os_gpu_share(const Device& d) {
  const GpuShareRule& rule = DeviceTable::builtin().gpu_share_rule(d.gpu_share_rule);
  GpuShare s;
  s.physical = d.physical_bytes();
  s.visible = s.physical - rule.reserve;
  s.bytes = default_gpu_share(rule, s.physical);
  s.host = s.visible - s.bytes;
  s.formula = default_formula(rule, s.physical, s.bytes);
  s.raise = rule.raise;
  s.source = rule.source;
  return s;
}

void apply_gpu_shares(Box& box, std::string_view limit, const std::string& flag) {
  const bool given = !limit.empty() && limit != "default";
  bool any = false, all = !box.gpus.empty();
  uint64_t left = 0;
  std::string first;  // the device a refused --ram names
  for (auto& g : box.gpus) {
    if (g.gpu_share_rule.empty()) {
      all = false;
      continue;
    }
    any = true;
    if (!g.share) {
      GpuShare s = os_gpu_share(g);
      if (given) {
        s.bytes = parse_limit(limit, flag, s.physical);
        if (s.bytes > s.visible) {
          throw InputError(flag, fmt::format("'{}' is above {}'s memory: {} of {}{} can be given to the GPU", std::string(limit), g.name, gib(s.visible), gib(s.physical),
                                             s.visible < s.physical ? " (the rest is the firmware's)" : ""));
        }
        s.raised = true;
        s.formula = fmt::format("{} set by --gpu-wired-limit (the OS default: {}); {} of {} is left for the CPU side", gib(s.bytes), s.formula, gib(s.visible - s.bytes), gib(s.physical));
      }
      s.host = s.visible - s.bytes;
      g.memory_bytes = s.bytes;
      g.share = s;
    }
    left = checked_add(left, g.share->host);
    if (first.empty()) first = g.name;
  }
  if (given && !any) throw InputError(flag, "sets the GPU's share of a unified memory (Apple silicon, Strix Halo, DGX Spark); --gpu names no such device");
  if (!all) return;  // a discrete GPU's host RAM is its own memory
  if (box.ram_bytes == 0) {
    box.ram_bytes = left;  // 0 when the CPU side shares the GPU's pool: not checked
  } else if (box.ram_bytes > left) {
    throw InputError("--ram", fmt::format("{} is more than {}'s unified memory leaves beside the GPU's share: {} is left for the CPU side (one memory, not two); "
                                          "give at most that, leave --ram out to use it, or lower --gpu-wired-limit",
                                          format_bytes(box.ram_bytes), first, format_bytes(left)));
  }
}

std::vector<std::string> gpu_share_notes(const Box& box) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& g : box.gpus) {
    if (!g.share || !seen.insert(g.name).second) continue;
    const GpuShare& s = *g.share;
    out.push_back(fmt::format("{}: GPU share {}; {} (source: {})", g.name, s.formula,
                              s.raised ? "the OS must be set to match: " + s.raise : "raise with " + s.raise + ", or --gpu-wired-limit here", s.source));
  }
  return out;
}

std::string gpu_share_lines(const Box& box) {
  std::string out;
  for (const auto& n : gpu_share_notes(box)) out += n + "\n";
  return out;
}

nlohmann::json gpu_share_json(const std::string& device, const GpuShare& s) {
  return {{"device", device}, {"physical_bytes", s.physical}, {"gpu_bytes", s.bytes}, {"host_bytes", s.host}, {"raised", s.raised},
          {"formula", s.formula}, {"raise", s.raise}, {"source", s.source}};
}

nlohmann::json gpu_shares_json(const Box& box) {
  nlohmann::json out = nlohmann::json::array();
  std::set<std::string> seen;
  for (const auto& g : box.gpus) {
    if (g.share && seen.insert(g.name).second) out.push_back(gpu_share_json(g.name, *g.share));
  }
  return out;
}

bool has_default_gpu_share(const Box& box) {
  for (const auto& g : box.gpus) {
    if (g.share && !g.share->raised && g.share->bytes < g.share->visible) return true;
  }
  return false;
}

Box with_raised_gpu_shares(const Box& box) {
  Box raised = box;
  bool all = !raised.gpus.empty();
  for (auto& g : raised.gpus) {
    if (!g.share) {
      all = false;
      continue;
    }
    g.share->bytes = g.memory_bytes = g.share->visible;
    g.share->host = 0;
    g.share->raised = true;
  }
  if (all) raised.ram_bytes = 0;  // the GPU holds it all: nothing is left to check on the CPU side
  return raised;
}

}  // namespace vc
