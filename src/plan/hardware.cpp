#include "plan/hardware.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "catalogue/embedded_data.h"
#include "core/checked.h"
#include "core/error.h"
#include "core/text.h"
#include "core/units.h"

namespace vc {
namespace {

// Letters and digits only, lower case, without the vendor words people leave out.
std::string squash(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char* word : {"nvidia", "geforce", "amd", "radeon", "instinct", "tesla", "intel", "apple"}) {
    const std::string w = word;
    if (out.rfind(w, 0) == 0 && out.size() > w.size()) out = out.substr(w.size());
  }
  return out;
}

std::string without_rtx(const std::string& s) { return s.rfind("rtx", 0) == 0 && s.size() > 3 ? s.substr(3) : s; }

double tflops(const nlohmann::json& e, const char* key) {
  if (!e.contains(key) || e[key].is_null()) return 0;
  const double v = e[key].get<double>();
  if (!(v >= 0 && v < 1e6)) throw InputError(std::string("devices.json: ") + key, "must be a TFLOPS figure from 0 to 1,000,000");
  return v;
}

uint64_t bounded(const nlohmann::json& e, const char* key, uint64_t max) {
  const uint64_t v = e.at(key).get<uint64_t>();
  if (v > max) throw InputError(std::string("devices.json: ") + key, fmt::format("{} is above the bound {}", v, max));
  return v;
}

// [numerator, denominator] of a share, 0 < n <= d <= 1000.
std::pair<uint64_t, uint64_t> fraction(const nlohmann::json& e, const char* key, const std::string& id) {
  const auto& f = e.at(key);
  const uint64_t n = f.at(0).get<uint64_t>(), d = f.at(1).get<uint64_t>();
  if (!(n > 0 && n <= d && d <= 1000)) throw InputError("devices.json: gpu_share_rules " + id, std::string(key) + " must be [n, d] with 0 < n <= d <= 1000");
  return {n, d};
}

GpuShareRule parse_share_rule(const nlohmann::json& e) {
  GpuShareRule r;
  r.id = e.at("id").get<std::string>();
  r.name = e.at("name").get<std::string>();
  std::tie(r.num, r.den) = fraction(e, "share", r.id);
  if (e.contains("small_share")) {
    std::tie(r.small_num, r.small_den) = fraction(e, "small_share", r.id);
    r.small_up_to = bounded(e, "small_up_to_bytes", uint64_t{1} << 44);
  }
  r.reserve = bounded(e, "reserve_bytes", uint64_t{1} << 40);
  r.same_pool = e.value("same_pool", false);
  r.raise = e.at("raise").get<std::string>();
  r.source = e.at("source").get<std::string>();
  r.note = e.value("note", "");
  if (r.source.empty()) throw InputError("devices.json: gpu_share_rules " + r.id, "every rule needs a source");
  return r;
}

}  // namespace

GpuLink parse_gpu_link(std::string_view text, const std::string& subject) {
  if (text.empty()) return GpuLink::Unknown;
  if (text == "pcie") return GpuLink::Pcie;
  if (text == "nvlink-bridge") return GpuLink::NvlinkPairs;
  if (text == "nvswitch" || text == "xgmi") return GpuLink::FullMesh;
  throw InputError(subject, "'" + std::string(text) + "' is not a GPU link; accepted: pcie, nvlink-bridge, nvswitch, xgmi");
}

DeviceTable::DeviceTable(std::string_view json_text) {
  const auto doc = nlohmann::json::parse(json_text);
  for (const auto& e : doc.value("gpu_share_rules", nlohmann::json::array())) rules_.push_back(parse_share_rule(e));
  const auto& list = doc.at("devices");
  if (!list.is_array() || list.size() > 4096) throw InputError("devices.json: devices", "must be an array of at most 4,096 entries");
  for (const auto& e : list) {
    Device d;
    d.id = e.at("id").get<std::string>();
    d.name = e.at("name").get<std::string>();
    d.kind = e.value("kind", "gpu");
    d.memory_bytes = bounded(e, "memory_bytes", uint64_t{1} << 44);  // 16 TiB per device
    d.memory_units = e.value("memory_units", "");
    d.bandwidth = bounded(e, "bandwidth_bytes_per_s", uint64_t{1} << 50);
    d.bf16_tflops = tflops(e, "bf16_dense_tflops");
    d.fp8_tflops = tflops(e, "fp8_dense_tflops");
    d.fp4_tflops = tflops(e, "fp4_dense_tflops");
    d.interconnect = bounded(e, "interconnect_bytes_per_s", uint64_t{1} << 50);
    d.gpu_link = parse_gpu_link(e.value("gpu_link", ""), "devices.json: " + d.id + " gpu_link");
    for (const auto& eng : e.value("engines", nlohmann::json::array())) d.engines.push_back(eng.get<std::string>());
    d.source = e.at("source").get<std::string>();
    d.note = e.value("note", "");
    d.vendor = e.value("vendor", "");
    d.memory_kind = e.value("memory", d.kind == "unified" ? "unified" : "gddr");
    if (d.memory_kind != "gddr" && d.memory_kind != "hbm" && d.memory_kind != "unified") throw InputError("devices.json: " + d.id, "memory must be gddr, hbm or unified");
    if (d.source.empty()) throw InputError("devices.json: " + d.id, "every device needs a source");
    d.gpu_share_rule = e.value("gpu_share", "");
    if (d.kind == "unified" && d.gpu_share_rule.empty()) throw InputError("devices.json: " + d.id, "a unified device needs a gpu_share rule");
    if (!d.gpu_share_rule.empty()) {
      const uint64_t reserve = gpu_share_rule(d.gpu_share_rule).reserve;  // throws on an unknown rule
      if (reserve >= d.memory_bytes) throw InputError("devices.json: " + d.id, "the gpu_share rule's reserve_bytes is not below memory_bytes");
    }
    devices_.push_back(std::move(d));
  }
}

const GpuShareRule& DeviceTable::gpu_share_rule(const std::string& id) const {
  for (const auto& r : rules_) if (r.id == id) return r;
  throw InputError("devices.json: gpu_share", "'" + id + "' is not in gpu_share_rules");
}

const DeviceTable& DeviceTable::builtin() {
  static const DeviceTable table(embedded::file_text("devices.json"));
  return table;
}

const Device& DeviceTable::find(std::string_view text, const std::string& subject) const {
  const std::string want = lower(text);
  for (const auto& d : devices_) if (lower(d.id) == want || lower(d.name) == want) return d;
  const std::string key = squash(text);
  std::vector<const Device*> prefixed;
  for (const auto& d : devices_) {
    for (const std::string& k : {squash(d.id), squash(d.name), without_rtx(squash(d.id))}) {
      if (k == key || without_rtx(key) == k) return d;
      if (!key.empty() && (k.rfind(key, 0) == 0 || k.rfind(without_rtx(key), 0) == 0)) {
        if (std::find(prefixed.begin(), prefixed.end(), &d) == prefixed.end()) prefixed.push_back(&d);
      }
    }
  }
  if (prefixed.size() == 1) return *prefixed.front();
  std::string names;
  for (const Device* d : prefixed) names += (names.empty() ? "" : ", ") + d->id;
  if (!prefixed.empty()) throw InputError(subject, fmt::format("'{}' could be any of {}: name one", text, names));
  throw InputError(subject, fmt::format("'{}' is not a known device; run `vramcalc devices` for the list (ids such as h200, rtx-4090, mi300x, m3-max-128gb)", text));
}

const Device* DeviceTable::match_reported(std::string_view reported) const {
  const std::string r = squash(reported);
  const Device* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& d : devices_) {
    // "nvidiah200" contains "h200"; the longest contained key wins ("rtx4090" over "rtx40").
    // A unified part may be reported by its chip alone ("NVIDIA GB10" for "DGX Spark (GB10)"): the
    // name's parenthesized chip is a key too.
    const auto open = d.name.find('('), close = d.name.find(')');
    const std::string chip =
        d.kind == "unified" && open != std::string::npos && close > open ? squash(d.name.substr(open + 1, close - open - 1)) : "";
    for (const std::string& k : {squash(d.name), squash(d.id), chip.size() >= 4 ? chip : std::string()}) {
      if (k.empty()) continue;
      if (k.size() > best_len && r.find(k) != std::string::npos) {
        best = &d;
        best_len = k.size();
      }
    }
  }
  return best;
}

uint64_t Box::vram_bytes() const {
  uint64_t per_node = 0;
  for (const auto& g : gpus) per_node = checked_add(per_node, g.memory_bytes);
  return checked_mul(per_node, nodes);
}

std::string Box::describe() const {
  if (gpus.empty()) return "CPU only";
  std::map<std::string, uint64_t> counts;
  std::vector<std::string> order;
  for (const auto& g : gpus) {
    if (!counts[g.name]++) order.push_back(g.name);
  }
  std::string out;
  for (const auto& name : order) {
    const Device* d = nullptr;
    for (const auto& g : gpus) if (g.name == name) d = &g;
    const std::string memory = d->share ? fmt::format("{} GPU share of {}", format_bytes(d->memory_bytes, ByteUnits::Decimal, 1), format_bytes(d->share->physical, ByteUnits::Decimal, 1))
                                        : format_bytes(d->memory_bytes, ByteUnits::Decimal, 1);
    out += fmt::format("{}{} x {} ({})", out.empty() ? "" : " + ", counts[name], name, memory);
  }
  if (nodes > 1) out += fmt::format(", {} nodes", nodes);
  return out;
}

std::vector<Device> parse_gpus(std::string_view text, const std::string& subject) {
  std::vector<Device> out;
  const std::string all = lower(text);
  if (all.empty() || all == "none" || all == "cpu") return out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string item(text.substr(start, comma - start));
    start = comma + 1;
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.erase(0, 1);
    if (item.empty()) throw InputError(subject, "an empty entry; accepted: NAME, NAMExCOUNT or COUNTxNAME, comma-separated (H200x8, 3090,3080Ti)");
    const Device* device = nullptr;
    uint64_t count = 1;
    try {
      device = &DeviceTable::builtin().find(item, subject);
    } catch (const InputError&) {
      // "H200x8" / "H200 x 8" / "8xH200": a count before or after an x.
      const std::string low = lower(item);
      std::size_t x = low.find_last_of("x*");
      std::string name, number;
      if (x != std::string::npos && x + 1 < low.size() && std::all_of(low.begin() + static_cast<long>(x) + 1, low.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == ' '; })) {
        name = item.substr(0, x);
        number = item.substr(x + 1);
      } else if ((x = low.find_first_of("x*")) != std::string::npos && x > 0 && std::all_of(low.begin(), low.begin() + static_cast<long>(x), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == ' '; })) {
        number = item.substr(0, x);
        name = item.substr(x + 1);
      } else {
        throw;
      }
      number.erase(std::remove(number.begin(), number.end(), ' '), number.end());
      count = parse_count(number, subject, 1, kMaxDevicesPerNode);
      device = &DeviceTable::builtin().find(name, subject);
    }
    for (uint64_t i = 0; i < count; ++i) out.push_back(*device);
    if (out.size() > kMaxDevicesPerNode) throw InputError(subject, fmt::format("at most {} devices per node", kMaxDevicesPerNode));
    if (comma == text.size()) break;
  }
  return out;
}

}  // namespace vc
