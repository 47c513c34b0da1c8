#pragma once
// The GPU's share of a unified-memory device (Apple silicon, Strix Halo, DGX Spark). The GPU and
// the CPU draw on one memory, and the OS lets the GPU hold only part of it by default: macOS wires
// 3/4 (2/3 on small Macs), Linux amdgpu maps half through GTT, DGX OS keeps a firmware reserve.
// A plan counts that share as the device's capacity and the rest as the host's RAM, so a 128 GB
// box is not planned as 128 GB of VRAM. The rules are data (devices.json gpu_share_rules).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace vc {

struct Box;
struct Device;

// One OS's default, as devices.json states it with its source.
struct GpuShareRule {
  std::string id;              // "macos-wired-limit"
  std::string name;            // "macOS's default GPU wired limit"
  uint64_t num = 1, den = 1;   // share of the visible memory
  uint64_t small_num = 0, small_den = 0;  // the share at or below small_up_to (0: none)
  uint64_t small_up_to = 0;
  uint64_t reserve = 0;        // what the firmware and kernel keep before any share (bytes)
  bool same_pool = false;      // the CPU side draws on the GPU's share (no memory left over)
  std::string raise;           // how users raise it
  std::string source;
  std::string note;
};

// A unified device's share once a box is built: the capacity the plan uses, and why.
struct GpuShare {
  uint64_t physical = 0;   // the device's whole memory
  uint64_t visible = 0;    // physical less the rule's reserve: the most the GPU can be given
  uint64_t bytes = 0;      // the GPU's share (the device's capacity in the plan)
  uint64_t host = 0;       // what is left for the CPU side (0 when it shares the GPU's pool)
  bool raised = false;     // set by --gpu-wired-limit, not the OS default
  std::string formula;     // "75% of 64 GiB = 48 GiB, macOS's default GPU wired limit"
  std::string raise;       // how to raise it
  std::string source;
};

// The --gpu-wired-limit flag's help (plan, check and estimate take it; the API as gpu-wired-limit).
inline constexpr const char* kGpuWiredLimitHelp =
    "Unified memory (Apple silicon, Strix Halo, DGX Spark): the GPU's share, as raised with sudo sysctl iogpu.wired_limit_mb=N (macOS) "
    "or ttm.pages_limit / amdgpu.gttsize (Linux): 56GiB, 57344MiB, 90% of the memory, or default (the OS's default share)";

// The OS default for `physical` bytes under `rule`: exact integer arithmetic, rounded down.
uint64_t default_gpu_share(const GpuShareRule& rule, uint64_t physical);

// The OS's default share of a unified device (d.gpu_share_rule set).
GpuShare os_gpu_share(const Device& d);

// Give every unified device of `box` its GPU share: the OS default, or `limit` ("56GiB",
// "57344MiB", "90%" of the memory, "default"/"" for the OS's). With no --ram (box.ram_bytes 0),
// the host's RAM becomes what the shares leave; a --ram above that is refused (one memory).
// InputError names `flag` (or --ram) with the accepted forms.
void apply_gpu_shares(Box& box, std::string_view limit, const std::string& flag);

// "Apple M3 Max 64GB: GPU share 75% of 64 GiB = 48 GiB, macOS's default GPU wired limit; raise
// with ... or --gpu-wired-limit here (source: ...)", one per distinct unified device of the box.
std::vector<std::string> gpu_share_notes(const Box& box);
// The same, one line each.
std::string gpu_share_lines(const Box& box);
// The box's unified devices whose share is the OS default (false when none is).
bool has_default_gpu_share(const Box& box);
// The shares as JSON: one object per unified device of the box (plan and check answers).
nlohmann::json gpu_shares_json(const Box& box);
nlohmann::json gpu_share_json(const std::string& device, const GpuShare& share);

// The box with every unified device given all of its visible memory: the most users can raise to.
Box with_raised_gpu_shares(const Box& box);

}  // namespace vc
