#include "plan/detect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "core/checked.h"
#include "core/units.h"
#include "plan/bounded_command.h"
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

namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

// Every probe gets this long and this much output (nvidia-smi answers in well under a second; a
// wedged driver must not stall `check --detect`).
constexpr std::chrono::milliseconds kProbeTimeout{5000};
constexpr std::size_t kProbeMaxBytes = 1 << 16;

std::string lowered_alnum(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<uint64_t> whole_number(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(text);
}

// "key: value" lines (sysctl's output without -n), and /proc/cpuinfo's "key\t: value".
std::string field(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    while (!k.empty() && std::isspace(static_cast<unsigned char>(k.back()))) k.pop_back();
    if (k != key) continue;
    std::string v = line.substr(colon + 1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(0, 1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    return v;
  }
  return {};
}

uint64_t meminfo_total(const std::string& meminfo) {
  const std::string v = field(meminfo, "MemTotal");  // "131000000 kB"
  const auto kb = whole_number(v.substr(0, v.find(' ')));
  return kb && *kb < (uint64_t{1} << 40) ? *kb * 1024 : 0;
}

// A unified device the table does not list: its memory as read, the OS rule named, speeds unknown.
Device detected_unified(const std::string& name, uint64_t bytes, const std::string& vendor, const std::string& rule, const std::string& probes) {
  Device d = unknown_device(name, bytes);
  d.kind = "unified";
  d.vendor = vendor;
  d.memory_kind = "unified";
  d.gpu_share_rule = rule;
  d.source = "detected on this machine (" + probes + "); not in the device table: bandwidth unknown";
  return d;
}

// The table's unified device of this vendor whose name (before any "(") the reported name holds,
// with the memory the machine has: `physical` within `slack` below the table's figure (firmware and
// carve-outs keep some from the OS's count).
const Device* table_unified(const std::string& reported, const std::string& vendor, uint64_t physical, uint64_t slack) {
  const std::string r = lowered_alnum(reported);
  for (const auto& d : DeviceTable::builtin().all()) {
    if (d.kind != "unified" || d.vendor != vendor) continue;
    const std::string part = lowered_alnum(d.name.substr(0, d.name.find('(')));
    if (part.empty() || r.find(part) == std::string::npos) continue;
    if (physical <= d.memory_bytes && d.memory_bytes - physical <= slack) return &d;
  }
  return nullptr;
}

// macOS on Apple silicon: the chip (machdep.cpu.brand_string, "Apple M3 Max") and hw.memsize name
// the device ("Apple M3 Max" + 64 GiB = "Apple M3 Max 64GB"). A nonzero iogpu.wired_limit_mb is
// the limit the user set, which Metal reports as recommendedMaxWorkingSetSize: it is the share.
std::optional<Device> apple_device(const std::string& sysctl, std::vector<std::string>& found) {
  const std::string chip = field(sysctl, "machdep.cpu.brand_string");
  const auto memsize = whole_number(field(sysctl, "hw.memsize"));
  if (chip.rfind("Apple ", 0) != 0 || !memsize || *memsize < kGiB) return std::nullopt;
  const std::string name = fmt::format("{} {}GB", chip, *memsize / kGiB);
  Device d;
  const Device* known = nullptr;
  for (const auto& t : DeviceTable::builtin().all()) {
    if (t.kind == "unified" && t.vendor == "apple" && lowered_alnum(t.name) == lowered_alnum(name) && t.memory_bytes == *memsize) known = &t;
  }
  d = known ? *known : detected_unified(name, *memsize, "apple", "macos-wired-limit", "sysctl hw.memsize, machdep.cpu.brand_string");
  found.push_back(fmt::format("sysctl: {} with {} of unified memory{}", chip, format_bytes(*memsize, ByteUnits::Binary),
                              known ? " (as " + known->id + ")" : " (not in the device table: bandwidth unknown)"));
  const auto wired_mb = whole_number(field(sysctl, "iogpu.wired_limit_mb"));
  if (wired_mb && *wired_mb > 0) {
    GpuShare s = os_gpu_share(d);
    s.bytes = std::min(checked_mul(*wired_mb, kMiB), s.visible);
    s.host = s.visible - s.bytes;
    s.raised = true;
    s.formula = fmt::format("{} MiB set on this Mac (sysctl iogpu.wired_limit_mb={}; the OS default: {})", *wired_mb, *wired_mb, s.formula);
    d.memory_bytes = s.bytes;
    d.share = s;
    found.push_back(fmt::format("sysctl: iogpu.wired_limit_mb={}: the GPU may wire {} MiB", *wired_mb, *wired_mb));
  }
  return d;
}

// Linux on a Ryzen AI Max (Strix Halo): one memory, of which the BIOS carve-out is the GPU's VRAM
// and amdgpu maps more through GTT (half the RAM by default; ttm.pages_limit / amdgpu.gttsize raise
// it). The GPU's share is what the driver reports now: mem_info_vram_total + mem_info_gtt_total.
std::optional<Device> strix_halo_device(const MachineProbes& p, std::vector<std::string>& found) {
  const std::string cpu = field(p.cpuinfo, "model name");
  if (lowered_alnum(cpu).find("ryzenaimax") == std::string::npos) return std::nullopt;
  for (const auto& card : p.amd_cards) {
    const auto vram = whole_number(card.vram_total), gtt = whole_number(card.gtt_total);
    if (!vram || !gtt || *gtt == 0) continue;
    const uint64_t physical = checked_add(meminfo_total(p.meminfo), *vram);  // the OS's RAM and the carve-out
    if (physical < kGiB) continue;
    const Device* known = table_unified(cpu, "amd", physical, 8 * kGiB);
    Device d = known ? *known : detected_unified(cpu, physical, "amd", "amdgpu-gtt", "/proc/cpuinfo, /proc/meminfo MemTotal, amdgpu sysfs");
    GpuShare s = os_gpu_share(d);
    s.bytes = std::min(checked_add(*vram, *gtt), s.visible);
    s.host = s.visible - s.bytes;
    s.formula = fmt::format("{} VRAM carve-out + {} GTT = {}, what amdgpu maps for this GPU now (sysfs mem_info_vram_total, mem_info_gtt_total; "
                            "the OS default: {})",
                            format_bytes(*vram, ByteUnits::Binary), format_bytes(*gtt, ByteUnits::Binary), format_bytes(s.bytes, ByteUnits::Binary), s.formula);
    s.source += "; https://docs.kernel.org/gpu/amdgpu/driver-misc.html (mem_info_vram_total, mem_info_gtt_total)";
    d.memory_bytes = s.bytes;
    d.share = s;
    found.push_back(fmt::format("sysfs: card{} of {}: {} VRAM carve-out + {} GTT on {} of unified memory{}", card.index, cpu, format_bytes(*vram, ByteUnits::Binary),
                                format_bytes(*gtt, ByteUnits::Binary), format_bytes(physical, ByteUnits::Binary),
                                known ? " (as " + known->id + ")" : " (not in the device table: bandwidth unknown)"));
    return d;
  }
  return std::nullopt;
}

}  // namespace

MachineProbes probe_machine() {
  MachineProbes p;
  p.nvidia_smi = run_bounded({"nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"}, kProbeTimeout, kProbeMaxBytes);
#ifdef __APPLE__
  p.sysctl = run_bounded({"sysctl", "hw.memsize", "machdep.cpu.brand_string", "iogpu.wired_limit_mb"}, kProbeTimeout, kProbeMaxBytes);
#endif
  p.meminfo = read_small("/proc/meminfo");
  p.cpuinfo = read_small("/proc/cpuinfo");
  for (int i = 0; i < 16; ++i) {
    const std::string base = fmt::format("/sys/class/drm/card{}/device/", i);
    MachineProbes::AmdCard card{i, read_small(base + "mem_info_vram_total", 64), read_small(base + "mem_info_gtt_total", 64)};
    if (!card.vram_total.empty()) p.amd_cards.push_back(std::move(card));
  }
  p.cpus = std::thread::hardware_concurrency();
  return p;
}

Detected detect_from(const MachineProbes& p) {
  Detected d;
  d.box.gpus = parse_nvidia_smi(p.nvidia_smi, d.found);
  if (d.box.gpus.empty()) {
    if (auto apple = apple_device(p.sysctl, d.found)) d.box.gpus.push_back(std::move(*apple));
  }
  if (d.box.gpus.empty()) {
    if (auto strix = strix_halo_device(p, d.found)) d.box.gpus.push_back(std::move(*strix));
  }
  if (d.box.gpus.empty()) {
    // AMD: amdgpu exposes VRAM size per card in sysfs.
    for (const auto& card : p.amd_cards) {
      const auto bytes = whole_number(card.vram_total);
      if (!bytes || *bytes < kGiB) continue;  // integrated GPUs' small carve-outs
      d.found.push_back(fmt::format("sysfs: card{} with {} of VRAM (bandwidth unknown: name the card with --gpu for speeds)", card.index, format_bytes(*bytes)));
      d.box.gpus.push_back(unknown_device(fmt::format("AMD GPU card{}", card.index), *bytes));
    }
  }
  if (d.box.gpus.empty()) d.found.push_back("no GPU found (nvidia-smi absent or silent, no Apple silicon, no amdgpu VRAM in sysfs): planning CPU only");
  d.box.ram_bytes = parse_meminfo(p.meminfo);
  if (d.box.ram_bytes) d.found.push_back(fmt::format("/proc/meminfo: {} available", format_bytes(d.box.ram_bytes)));
  d.cpus = p.cpus;
  d.found.push_back(fmt::format("{} CPU threads", d.cpus));
  return d;
}

Detected detect() { return detect_from(probe_machine()); }

void apply_detected_gpu_shares(Detected& d, std::string_view limit, const std::string& flag) {
  if (!limit.empty() && limit != "default") {  // the user's limit replaces a share read on the machine
    for (auto& g : d.box.gpus) {
      if (g.share) g.memory_bytes = g.share->physical, g.share.reset();
    }
  }
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
