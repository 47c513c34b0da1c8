#pragma once
// What this machine has: NVIDIA GPUs (nvidia-smi), AMD GPUs (sysfs), RAM (/proc/meminfo), CPUs.
#include <cstdint>
#include <string>
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

}  // namespace vc
