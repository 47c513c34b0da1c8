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

// `nvidia_smi_csv`: the output of `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits`
// (memory in MiB). Exposed for tests; detect() runs the real probes.
std::vector<Device> parse_nvidia_smi(const std::string& nvidia_smi_csv, std::vector<std::string>& found);
// MemAvailable (else MemTotal) from /proc/meminfo text, in bytes; 0 when absent.
uint64_t parse_meminfo(const std::string& meminfo);
Detected detect();

// A unified device among the detected (DGX Spark's GB10, which nvidia-smi reports without a memory
// figure): the driver and /proc/meminfo see one memory, so the box gets the GPU's share as a
// planned unified box does (plan/unified_memory.h, `limit` as --gpu-wired-limit), and the host what
// the share leaves, at most what /proc/meminfo said was available (a note in `found` then).
void apply_detected_gpu_shares(Detected& detected, std::string_view limit, const std::string& flag);

}  // namespace vc
