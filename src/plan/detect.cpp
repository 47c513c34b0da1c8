#include "plan/detect.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/checked.h"
#include "core/units.h"
#include "plan/unified_memory.h"

namespace vc {
namespace {

std::string read_small(const std::string& path, std::size_t max = 1 << 16) {
  std::ifstream in(path);
  if (!in) return {};
  std::string s(max, '\0');
  in.read(s.data(), static_cast<std::streamsize>(max));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

std::string run_capture(const char* cmd, std::size_t max = 1 << 16) {
  FILE* pipe = popen(cmd, "r");
  if (!pipe) return {};
  std::string out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0 && out.size() < max) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

Device unknown_device(const std::string& name, uint64_t bytes) {
  Device d;
  d.id = "detected";
  d.name = name;
  d.memory_bytes = bytes;
  d.source = "detected on this machine; bandwidth unknown";
  d.engines = {"llamacpp", "vllm", "sglang"};
  return d;
}

}  // namespace

std::vector<Device> parse_nvidia_smi(const std::string& csv, std::vector<std::string>& found) {
  std::vector<Device> out;
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line) && out.size() < kMaxDevicesPerNode) {
    const auto comma = line.rfind(',');
    if (comma == std::string::npos) continue;
    std::string name = line.substr(0, comma);
    uint64_t mib = 0;
    try {
      mib = std::stoull(line.substr(comma + 1));
    } catch (...) {
      mib = 0;
    }
    const Device* known = DeviceTable::builtin().match_reported(name);
    if (mib == 0 && known && known->kind == "unified") {
      // Unified memory has no figure of its own in nvidia-smi ("[N/A]" on GB10): the part's memory.
      found.push_back(fmt::format("nvidia-smi: {} without a memory figure (unified memory): as {}, {} of memory", name, known->id, format_bytes(known->memory_bytes)));
      out.push_back(*known);
      continue;
    }
    if (mib == 0 || mib > (uint64_t{1} << 24)) continue;
    const uint64_t bytes = checked_mul(mib, uint64_t{1} << 20);
    // Keep the driver's memory figure (what is really there); take bandwidth and compute from the table.
    Device d = known ? *known : unknown_device(name, bytes);
    d.memory_bytes = bytes;
    found.push_back(fmt::format("nvidia-smi: {} with {} MiB{}", name, mib, known ? " (as " + known->id + ")" : " (not in the device table: bandwidth unknown)"));
    out.push_back(std::move(d));
  }
  return out;
}

uint64_t parse_meminfo(const std::string& meminfo) {
  uint64_t total = 0, available = 0;
  std::istringstream in(meminfo);
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (kb > (uint64_t{1} << 40)) continue;
    if (key == "MemTotal:") total = kb * 1024;
    if (key == "MemAvailable:") available = kb * 1024;
  }
  return available ? available : total;
}

Detected detect() {
  Detected d;
  d.box.gpus = parse_nvidia_smi(run_capture("nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits 2>/dev/null"), d.found);
  if (d.box.gpus.empty()) {
    // AMD: amdgpu exposes VRAM size per card in sysfs.
    std::error_code ec;
    for (int i = 0; i < 16; ++i) {
      const std::string base = fmt::format("/sys/class/drm/card{}/device/", i);
      const std::string vram = read_small(base + "mem_info_vram_total", 64);
      if (vram.empty()) continue;
      uint64_t bytes = 0;
      try {
        bytes = std::stoull(vram);
      } catch (...) {
        continue;
      }
      if (bytes < (uint64_t{1} << 30)) continue;  // integrated GPUs' small carve-outs
      Device dev = unknown_device(fmt::format("AMD GPU card{}", i), bytes);
      d.found.push_back(fmt::format("sysfs: card{} with {} of VRAM (bandwidth unknown: name the card with --gpu for speeds)", i, format_bytes(bytes)));
      d.box.gpus.push_back(std::move(dev));
    }
  }
  if (d.box.gpus.empty()) d.found.push_back("no GPU found (nvidia-smi absent or silent, no amdgpu VRAM in sysfs): planning CPU only");
  d.box.ram_bytes = parse_meminfo(read_small("/proc/meminfo"));
  d.found.push_back(fmt::format("/proc/meminfo: {} available", format_bytes(d.box.ram_bytes)));
  d.cpus = std::thread::hardware_concurrency();
  d.found.push_back(fmt::format("{} CPU threads", d.cpus));
  return d;
}

void apply_detected_gpu_shares(Detected& d, std::string_view limit, const std::string& flag) {
  const bool unified = std::any_of(d.box.gpus.begin(), d.box.gpus.end(), [](const Device& g) { return !g.gpu_share_rule.empty(); });
  if (!unified) {
    apply_gpu_shares(d.box, limit, flag);  // refuses a --gpu-wired-limit without a unified device
    return;
  }
  const uint64_t available = d.box.ram_bytes;
  d.box.ram_bytes = 0;  // one memory: the host's is what the GPU's share leaves
  apply_gpu_shares(d.box, limit, flag);
  if (available && d.box.ram_bytes > available) {
    d.found.push_back(fmt::format("host RAM: {} available now (/proc/meminfo), less than the {} the GPU's share leaves", format_bytes(available),
                                  format_bytes(d.box.ram_bytes)));
    d.box.ram_bytes = available;
  }
}

}  // namespace vc
