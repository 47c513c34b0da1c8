#include "report/json_plan.h"

#include <fmt/format.h>

#include "engines/engine_tiers.h"
#include "report/engine_report.h"

namespace vc {

nlohmann::json check_json(const Box& box, const std::vector<std::string>& found, const std::vector<CheckRow>& rows, EngineKind engine) {
  nlohmann::json out;
  out["schema"] = "vramcalc.check/3";
  out["engine"] = to_string(engine);
  out["tiers"] = engine_tiers_text(engine);
  out["box"] = box.describe();
  out["ram_bytes"] = box.ram_bytes;
  out["gpu_shares"] = gpu_shares_json(box);
  out["found"] = found;
  out["rows"] = nlohmann::json::array();
  for (const auto& r : rows) {
    out["rows"].push_back({{"model", r.model->id}, {"fit", to_string(r.fit)}, {"tier", r.tier}, {"weights_bytes", r.weights_bytes},
                           {"total_bytes", r.total_bytes}, {"max_context", r.max_context}, {"decode_tok_s", r.decode_tok_s},
                           {"decode_range_tok_s", r.decode_low_tok_s > 0 ? nlohmann::json::array({r.decode_low_tok_s, r.decode_high_tok_s}) : nlohmann::json(nullptr)},
                           {"quant", r.quant}, {"gpu_bytes", r.gpu_bytes}, {"ram_bytes", r.ram_bytes}, {"ssd_bytes", r.ssd_bytes},
                           {"tiers_tried", r.tiers_tried}, {"tiers_fitting", r.tiers_fitting}, {"note", r.note},
                           {"kv_tokens", r.kv_tokens ? nlohmann::json(*r.kv_tokens) : nlohmann::json(nullptr)},
                           {"max_concurrency", r.max_concurrency ? nlohmann::json(*r.max_concurrency) : nlohmann::json(nullptr)},
                           {"engine_answer", r.engine ? engine_json(*r.engine) : nlohmann::json(nullptr)}});
  }
  return out;
}

nlohmann::json devices_json(const std::vector<Device>& devices) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& d : devices) {
    out.push_back({{"id", d.id}, {"name", d.name}, {"kind", d.kind}, {"memory_bytes", d.memory_bytes}, {"memory_units", d.memory_units},
                   {"bandwidth_bytes_per_s", d.bandwidth}, {"bf16_dense_tflops", d.bf16_tflops}, {"fp8_dense_tflops", d.fp8_tflops},
                   {"fp4_dense_tflops", d.fp4_tflops}, {"interconnect_bytes_per_s", d.interconnect}, {"engines", d.engines}, {"source", d.source},
                   {"note", d.note}, {"gpu_share", d.gpu_share_rule.empty() ? nlohmann::json(nullptr) : gpu_share_json(d.name, os_gpu_share(d))}});
  }
  return out;
}

nlohmann::json check_row_display_json(const CheckRow& r, ByteUnits units) {
  return {{"quant", r.quant},
          {"weights", r.weights_bytes ? format_bytes(r.weights_bytes, units) : "-"},
          {"total", r.total_bytes ? format_bytes(r.total_bytes, units) : "-"},
          {"max_context", r.max_context ? format_tokens(r.max_context) : "-"},
          {"gpu", format_bytes(r.gpu_bytes, units)},
          {"ram", format_bytes(r.ram_bytes, units)},
          {"ssd", format_bytes(r.ssd_bytes, units)},
          {"decode_tok_s", decode_cell(r)}};
}

nlohmann::json plan_display_json(const Plan& p, const PlanSolved& solved, ByteUnits units) {
  auto b = [units](uint64_t bytes) { return format_bytes(bytes, units); };
  nlohmann::json d;
  d["units"] = units == ByteUnits::Binary ? "gib" : "gb";
  d["estimate_total"] = b(p.estimate.total_bytes);
  d["aggregate_capacity"] = b(p.aggregate_capacity);
  d["context"] = format_tokens(p.estimate.scenario.context);
  d["devices"] = nlohmann::json::array();
  if (p.split) {
    for (const auto& dev : p.split->devices) {
      const int64_t head = dev.headroom();
      d["devices"].push_back({{"weights", b(dev.weights)}, {"cache", b(dev.cache)}, {"state", b(dev.state)}, {"overhead", b(dev.overhead)},
                              {"total", b(dev.total)}, {"capacity", b(dev.capacity)},
                              {"headroom", head >= 0 ? b(static_cast<uint64_t>(head)) : "-" + b(static_cast<uint64_t>(-head))}});
    }
  }
  d["decode_expected_tok_s"] = p.decode.upper_tok_s > 0 ? fmt::format("{:.2f}", p.decode.expected_tok_s) : "unknown";
  d["decode_upper_tok_s"] = p.decode.upper_tok_s > 0 ? fmt::format("{:.2f}", p.decode.upper_tok_s) : "unknown";
  d["decode_range_tok_s"] = p.decode.low_tok_s > 0 ? fmt::format("{:.2f}-{:.2f}", p.decode.low_tok_s, p.decode.high_tok_s) : "";
  d["max_context"] = solved.max_context ? format_tokens(solved.max_context) : "none fits";
  d["max_sequences"] = format_count(solved.max_sequences);
  return d;
}

}  // namespace vc
