#include "speed/speed_data.h"

#include <nlohmann/json.hpp>

#include "catalogue/embedded_data.h"
#include "core/error.h"

namespace vc {
namespace {

double share(const nlohmann::json& e, const char* key, double hi) {
  const double v = e.at(key).get<double>();
  if (!(v >= 0 && v <= hi)) throw InputError(std::string("speed_efficiency.json: ") + key, "out of range");
  return v;
}

SpeedRange range(const nlohmann::json& e) {
  SpeedRange r{e.at("low").get<double>(), e.at("high").get<double>(), e.value("source", "")};
  if (!(r.low > 0 && r.low <= 1 && r.high >= 1 && r.high < 100)) throw InputError("speed_efficiency.json: range", "low must be in (0, 1] and high in [1, 100)");
  return r;
}

BoundShareRange bound_share_range(const nlohmann::json& e) {
  BoundShareRange r{e.at("low").get<double>(), e.at("high").get<double>(), e.value("source", "")};
  // A share above 1 is a run faster than its bound: bytes the bound counts that the run did not read.
  if (!(r.low > 0 && r.low <= r.high && r.high <= 2)) throw InputError("speed_efficiency.json: rule_ranges", "low must be above 0, at most high, and high at most 2");
  return r;
}

// How specific a row is for a request: -1 when it does not match.
int score(const std::string& row, const std::string& want, int weight) {
  if (row == "*") return 0;
  return row == want ? weight : -1;
}

// The matching row with the most specific engine, then backend, then memory; the last row matches all.
template <typename Row>
const Row& most_specific(const std::vector<Row>& rows, const std::string& engine, const std::string& backend, const std::string& memory) {
  const Row* best = &rows.back();
  int best_score = -1;
  for (const auto& r : rows) {
    const int e = score(r.engine, engine, 4), b = score(r.backend, backend, 2), m = score(r.memory, memory, 1);
    if (e < 0 || b < 0 || m < 0) continue;
    if (e + b + m > best_score) best_score = e + b + m, best = &r;
  }
  return *best;
}

}  // namespace

SpeedData::SpeedData(std::string_view json_text) {
  const auto doc = nlohmann::json::parse(json_text);
  for (const auto& e : doc.at("decode")) {
    decode.push_back({e.at("engine"), e.at("backend"), e.at("memory"), share(e, "bandwidth_share", 1), share(e, "layer_us", 10000),
                      share(e, "moe_layer_us", 10000), e.at("source")});
  }
  for (const auto& e : doc.at("prefill")) prefill.push_back({e.at("engine"), e.at("backend"), e.at("memory"), share(e, "compute_share", 4), e.at("source")});
  handoff_us = share(doc, "handoff_us", 1e6);
  tp_allreduce_us = share(doc, "tp_allreduce_us", 1e6);
  pcie_share = share(doc, "pcie_share", 1);
  cpu_flops_per_ram_byte = share(doc, "cpu_flops_per_ram_byte", 1e6);
  second_socket_gain = share(doc, "second_socket_gain", 1);
  // Optional: without them every GPU pays the same fixed cost per layer.
  if (doc.contains("layer_reference_tflops")) layer_reference_tflops = share(doc, "layer_reference_tflops", 1e6);
  if (doc.contains("cpu_thread_gbps")) cpu_thread_gbps = share(doc, "cpu_thread_gbps", 1e6);
  if (doc.contains("cpu_threaded_layer_us")) cpu_threaded_layer_us = share(doc, "cpu_threaded_layer_us", 1e6);
  if (doc.contains("cpu_prefill_gflops_per_thread")) cpu_prefill_gflops_per_thread = share(doc, "cpu_prefill_gflops_per_thread", 1e6);
  if (doc.contains("layer_compute_share")) layer_compute_share = share(doc, "layer_compute_share", 1);
  decode_on_device = range(doc.at("ranges").at("decode_on_device"));
  decode_offload = range(doc.at("ranges").at("decode_offload"));
  prefill_range = range(doc.at("ranges").at("prefill"));
  rule_decode_on_device = bound_share_range(doc.at("rule_ranges").at("decode_on_device"));
  rule_decode_offload = bound_share_range(doc.at("rule_ranges").at("decode_offload"));
  rule_prefill = bound_share_range(doc.at("rule_ranges").at("prefill"));
  source = doc.at("source");
  if (decode.empty() || decode.back().engine != "*" || decode.back().backend != "*" || decode.back().memory != "*")
    throw InputError("speed_efficiency.json: decode", "the last row must match everything (*, *, *)");
  if (prefill.empty() || prefill.back().engine != "*" || prefill.back().backend != "*" || prefill.back().memory != "*")
    throw InputError("speed_efficiency.json: prefill", "the last row must match everything (*, *, *)");
}

const SpeedData& SpeedData::builtin() {
  static const SpeedData data(embedded::file_text("speed_efficiency.json"));
  return data;
}

const DecodeFactor& SpeedData::decode_for(const std::string& engine, const std::string& backend, const std::string& memory) const {
  return most_specific(decode, engine, backend, memory);
}

double SpeedData::layer_cost_scale(bool gpu, double tflops) const {
  if (!gpu || tflops <= 0 || layer_reference_tflops <= 0) return 1.0;
  return (1 - layer_compute_share) + layer_compute_share * layer_reference_tflops / tflops;
}

const PrefillFactor& SpeedData::prefill_for(const std::string& engine, const std::string& backend, const std::string& memory) const {
  return most_specific(prefill, engine, backend, memory);
}

std::string speed_engine_family(const std::string& engine) {
  if (engine == "llamacpp" || engine == "llama.cpp" || engine == "ik_llama.cpp" || engine == "ollama" || engine == "rule") return "llamacpp";
  if (engine == "ktransformers") return "ktransformers";
  if (engine == "vllm" || engine == "sglang") return "vllm";
  throw InputError("engine", "'" + engine + "' has no speed model; accepted: llamacpp, ik_llama.cpp, ollama, ktransformers, vllm, sglang");
}

}  // namespace vc
