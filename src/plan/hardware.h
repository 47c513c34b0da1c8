#pragma once
// Accelerators and the boxes built from them. The device table is data (data/devices.json, one
// entry per product with its vendor source); a box is what the user has: GPUs per node, nodes,
// system RAM and SSD read bandwidth.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/unified_memory.h"

namespace vc {

// How the GPUs of one server are joined (devices.json "gpu_link", from the vendor's page): PCIe
// only; NVLink bridges joining pairs (RTX 3090, A40, H100 PCIe/NVL); every GPU linked to every other
// (NVSwitch boards, AMD Infinity Fabric). Unknown when the table or the user does not say. Engines
// read it for what their communicators allocate.
enum class GpuLink { Unknown, Pcie, NvlinkPairs, FullMesh };
// "pcie", "nvlink-bridge", "nvswitch", "xgmi", "" (unknown); InputError naming `subject` else.
GpuLink parse_gpu_link(std::string_view text, const std::string& subject);

struct Device {
  std::string id;           // "h200"
  std::string name;         // "H200"
  std::string kind;         // gpu, unified, accelerator
  uint64_t memory_bytes = 0;
  std::string memory_units; // how the vendor's "GB" was read (decimal or binary), with why
  uint64_t bandwidth = 0;   // memory bandwidth, bytes per second
  double bf16_tflops = 0;   // dense
  double fp8_tflops = 0;    // dense, 0 where the part has no FP8
  double fp4_tflops = 0;    // dense, 0 where the part has no FP4
  uint64_t interconnect = 0;  // bytes per second per direction (NVLink, Infinity Fabric, PCIe)
  GpuLink gpu_link = GpuLink::Unknown;
  std::vector<std::string> engines;
  std::string source;
  std::string note;
  std::string vendor;       // nvidia, amd, apple, intel: the backend llama.cpp uses by default
  std::string memory_kind;  // gddr, hbm, unified: which decode efficiency applies
  std::string gpu_share_rule;      // unified devices: the devices.json rule of the OS's default GPU share
  std::optional<GpuShare> share;   // set in a box (apply_gpu_shares): memory_bytes is then the GPU's share
  uint64_t physical_bytes() const { return share ? share->physical : memory_bytes; }
};

class DeviceTable {
 public:
  static const DeviceTable& builtin();
  explicit DeviceTable(std::string_view json_text);
  const std::vector<Device>& all() const { return devices_; }
  // "H200", "h200", "RTX 4090", "4090", "3080Ti", "rtx-3080-ti": exact id or name first, then
  // the same without spaces, dashes and vendor words, then a unique prefix. Throws InputError.
  const Device& find(std::string_view text, const std::string& subject) const;
  // Best match for a name a driver reports ("NVIDIA GeForce RTX 4090"), or nullptr.
  const Device* match_reported(std::string_view reported) const;
  // The GPU-share rule with this id (devices.json gpu_share_rules); throws std::out_of_range.
  const GpuShareRule& gpu_share_rule(const std::string& id) const;
  const std::vector<GpuShareRule>& gpu_share_rules() const { return rules_; }

 private:
  std::vector<Device> devices_;
  std::vector<GpuShareRule> rules_;
};

// What the plan runs on. `gpus` is one node's accelerators; nodes repeat it.
struct Box {
  std::vector<Device> gpus;
  uint64_t nodes = 1;
  uint64_t ram_bytes = 0;      // system RAM free for weights and cache (per node)
  uint64_t ram_bandwidth = 0;  // bytes per second
  uint64_t ssd_bandwidth = 0;  // bytes per second; 0: no SSD tier
  uint64_t device_count() const { return gpus.size() * nodes; }
  uint64_t vram_bytes() const;  // every device of every node
  std::string describe() const; // "8 x H200 (141 GB) x 2 nodes"
};

inline constexpr uint64_t kMaxDevicesPerNode = 64;
inline constexpr uint64_t kMaxNodes = 1024;

// "--gpu H200x8", "3090,3080Ti", "2xRTX 4090", "RTX 4090", "none". Throws InputError(subject).
std::vector<Device> parse_gpus(std::string_view text, const std::string& subject);

}  // namespace vc
