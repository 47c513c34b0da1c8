#pragma once
// What this machine has: NVIDIA GPUs (nvidia-smi), AMD GPUs (sysfs), RAM (/proc/meminfo), CPUs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/hardware.h"

namespace vc {

struct Detected {
  Box box;
  std::vector<std::string> found;  // what each probe said, for the report
  uint64_t cpus = 0;
};

// What the probes said, as text: detection is worked out from these alone (detect_from), so each
// machine's reading can be tested from a captured output. Each program runs bounded in time and
// output (plan/bounded_command.h).
struct MachineProbes {
  std::string nvidia_smi;  // nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits
  std::string meminfo;     // /proc/meminfo (Linux)
  std::string cpuinfo;     // /proc/cpuinfo (Linux): its first "model name" is read
  struct AmdCard {
    int index = 0;
    std::string vram_total, gtt_total;  // /sys/class/drm/cardN/device/mem_info_{vram,gtt}_total (bytes)
  };
  std::vector<AmdCard> amd_cards;
  std::string sysctl;      // macOS: `sysctl hw.memsize machdep.cpu.brand_string iogpu.wired_limit_mb` ("key: value" lines)
  uint64_t cpus = 0;       // CPU threads
};

// `nvidia_smi_csv`: the output of `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits`
// (memory in MiB). Exposed for tests; detect() runs the real probes.
std::vector<Device> parse_nvidia_smi(const std::string& nvidia_smi_csv, std::vector<std::string>& found);
// MemAvailable (else MemTotal) from /proc/meminfo text, in bytes; 0 when absent.
uint64_t parse_meminfo(const std::string& meminfo);
// Reads this machine (each probe bounded: never hangs) and works it out with detect_from.
MachineProbes probe_machine();
// The box the probes describe: NVIDIA GPUs from nvidia-smi; else Apple silicon from sysctl (chip
// and memory matched to the device table, "Apple M3 Max" + 64 GiB = m3-max-64gb); else AMD from
// sysfs, where a Ryzen AI Max CPU (Strix Halo) makes the GPU one unified device whose share is
// what amdgpu maps now (VRAM carve-out + GTT); else CPU only. RAM from /proc/meminfo.
Detected detect_from(const MachineProbes& probes);
Detected detect();

// A unified device among the detected (Apple silicon, Strix Halo, DGX Spark's GB10, which nvidia-smi reports without a memory
// figure): the driver and /proc/meminfo see one memory, so the box gets the GPU's share as a
// planned unified box does (plan/unified_memory.h, `limit` as --gpu-wired-limit), and the host what
// the share leaves, at most what /proc/meminfo said was available (a note in `found` then). A share
// read on the machine (iogpu.wired_limit_mb, amdgpu's GTT) stands unless `limit` names another.
void apply_detected_gpu_shares(Detected& detected, std::string_view limit, const std::string& flag);

}  // namespace vc
