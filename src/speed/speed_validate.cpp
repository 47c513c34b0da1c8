#include "speed/speed_validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <tuple>
#include <fstream>
#include <map>
#include <sstream>

#include "catalogue/catalogue.h"
#include "core/checked.h"
#include "core/error.h"
#include "estimate/estimate.h"
#include "plan/footprint.h"
#include "plan/hardware.h"
#include "speed/speculative.h"
#include "speed/speed_bound.h"
#include "speed/speculative_verify.h"

namespace vc {
namespace {

uint64_t trailing_number(const std::string& s, std::size_t from) {
  uint64_t v = 0;
  for (std::size_t i = from; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  return v;
}

nlohmann::json reads_json(const TokenReads& t) {
  nlohmann::json mems = nlohmann::json::array();
  for (const auto& m : t.memories) {
    mems.push_back({{"name", m.name}, {"backend", m.backend}, {"memory", m.memory}, {"bandwidth", m.bandwidth}, {"weights_read", m.weights_read},
                    {"cache_read", m.cache_read}, {"weights_held", m.weights_held}, {"layers", m.layers}, {"moe_layers", m.moe_layers},
                    {"tflops", m.tflops}, {"host_link", m.host_link}, {"prefill_flops", m.prefill_flops}});
  }
  return {{"engine", t.engine}, {"memories", mems}, {"handoffs", t.handoffs}, {"tensor_parallel", t.tensor_parallel}, {"layers", t.layers},
          {"ubatch", t.ubatch}, {"offload", t.offload}, {"placement", t.placement}, {"threads", t.threads ? nlohmann::json(*t.threads) : nlohmann::json()}};
}

SpeedRow run_case(const nlohmann::json& c) {
  SpeedRow r;
  r.id = c.at("id").get<std::string>();
  r.part = c.at("set_aside").get<bool>() ? "set-aside" : "fitted";
  r.measured = c.at("measured_tok_s").get<double>();
  const std::string kind = c.at("kind").get<std::string>();
  const std::string test = c.at("test").get<std::string>();
  const Model* model = Catalogue::builtin().find(c.at("model").get<std::string>());
  if (!model) throw InputError("model", "'" + c.at("model").get<std::string>() + "' is not in the catalogue");
  Box box;
  const std::string gpu = c.at("gpu").get<std::string>();
  if (gpu != "none") box.gpus = parse_gpus(gpu, "gpu");
  box.ram_bandwidth = static_cast<uint64_t>(c.value("ram_gbps", 0.0) * 1e9);
  box.ram_bytes = static_cast<uint64_t>(c.value("ram_gb", 0.0) * 1e9);
  SpeedSettings s;
  s.engine = c.at("engine").get<std::string>();
  s.backend = c.value("backend", "");
  const nlohmann::json st = c.value("settings", nlohmann::json::object());
  if (st.contains("ngl")) s.llamacpp.n_gpu_layers = st.at("ngl").get<uint64_t>();
  if (st.contains("n_cpu_moe")) add_n_cpu_moe(s.llamacpp, st.at("n_cpu_moe").get<uint64_t>());
  if (st.contains("ot")) {
    for (auto& o : parse_overrides(st.at("ot").get<std::string>())) s.llamacpp.overrides.push_back(o);
  }
  if (st.contains("ubatch")) s.ubatch = st.at("ubatch").get<uint64_t>();
  if (st.contains("tp")) s.tensor_parallel = st.at("tp").get<uint32_t>();
  if (st.contains("gpu_experts")) s.gpu_experts = st.at("gpu_experts").get<uint32_t>();
  if (st.contains("sockets")) s.sockets = st.at("sockets").get<uint32_t>();
  if (st.contains("threads")) s.threads = st.at("threads").get<uint32_t>();
  if (st.contains("experts_per_token")) s.experts_per_token = st.at("experts_per_token").get<uint32_t>();
  s.depth = c.value("depth", uint64_t{0});
  // tgN: N tokens generated after the depth, so the cache holds depth + N/2 on average; ppN and
  // prefillN: a prompt of N tokens after the depth.
  const bool prefill = kind == "prefill";
  if (!prefill && test.rfind("tg", 0) == 0) s.depth += trailing_number(test, 2) / 2;
  if (prefill) s.prompt = test.rfind("pp", 0) == 0 ? trailing_number(test, 2) : trailing_number(test, 7);
  if (prefill && s.prompt == 0) s.prompt = 512;
  Scenario sc;
  sc.quant = c.at("quant").get<std::string>();
  sc.context = std::max<uint64_t>(s.depth + s.prompt, 1);
  const Estimate e = estimate(*model, sc);
  const Footprint f = make_footprint(*model, e);
  if (c.contains("ssd_gbps")) {
    // llama.cpp's weights memory-mapped from an SSD on a host whose page cache holds less than the
    // weights the CPU reads: what the cache cannot hold is read from the SSD again (paged_out in
    // speed/token_reads.h), at the read rate the source states.
    if (!c.contains("page_cache_gb")) throw InputError("page_cache_gb", "a case with ssd_gbps needs page_cache_gb: what the page cache held, in GB");
    box.ssd_bandwidth = static_cast<uint64_t>(c.at("ssd_gbps").get<double>() * 1e9);
    s.paged_out = paged_out_of(token_reads(*model, f, box, s), static_cast<uint64_t>(c.at("page_cache_gb").get<double>() * 1e9));
  }
  const TokenReads t = token_reads(*model, f, box, s);
  SpeedEstimate est = prefill ? prefill_speed(t) : decode_speed(t);
  if (!prefill && st.contains("spec_method")) {
    SpeculativeSettings spec;
    spec.method = st.at("spec_method").get<std::string>();
    spec.tokens = st.value("spec_tokens", uint32_t{1});
    if (st.contains("spec_acceptance")) spec.acceptance = st.at("spec_acceptance").get<double>();
    spec.draft_model = st.value("spec_draft", "");
    est = speculative_decode(verify_step(est, f, t, spec.tokens + 1), drafter_seconds(spec, *model, f, sc, box, s, t, est), spec);
  }
  const bool from_ssd = std::any_of(t.memories.begin(), t.memories.end(), [](const MemoryRead& m) { return m.memory == "ssd" && m.weights_read; });
  r.group = prefill ? "prefill" : from_ssd ? "decode from SSD" : t.offload ? "decode offload" : "decode on device";
  r.setup = fmt::format("{} {} on {}{}, {}", model->id, sc.quant, gpu == "none" ? "CPU" : gpu, t.offload ? " + RAM" : "", c.at("engine").get<std::string>());
  r.estimate = est.tok_s;
  r.reads = reads_json(t);
  r.bound = prefill ? compute_bound_tok_s(t) : bandwidth_bound_tok_s(t);
  // A drafter changes what a token costs; the rule has no speculative decoding to bound.
  if (st.contains("spec_method")) r.bound = 0;
  if (r.bound > 0) r.bound_share = r.measured / r.bound;
  if (r.estimate > 0) {
    r.ratio = r.measured / r.estimate;
    const auto [lo, hi] = speed_target(r.group);
    r.met = r.ratio >= lo && r.ratio <= hi;
  } else {
    r.note = est.formula;
  }
  return r;
}

}  // namespace

uint64_t paged_out_of(const TokenReads& t, uint64_t page_cache_bytes) {
  uint64_t held = 0;
  for (const auto& m : t.memories)
    if (m.memory == "ram") held = checked_add(held, m.weights_held);
  return held > page_cache_bytes ? held - page_cache_bytes : 0;
}

std::pair<double, double> speed_target(const std::string& group) {
  if (group == "decode on device") return {0.8, 1.25};
  if (group == "decode offload") return {0.7, 1.4};
  return {0.5, 2.0};  // prefill and decode from SSD
}

std::vector<SpeedRow> validate_speed(const std::string& measurements_json) {
  std::ifstream in(measurements_json, std::ios::binary);
  if (!in) throw InputError("--speed", "cannot open '" + measurements_json + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::exception& ex) {
    throw InputError("--speed", "'" + measurements_json + "' is not JSON: " + ex.what());
  }
  if (!doc.contains("cases") || !doc.at("cases").is_array()) throw InputError("--speed", "'" + measurements_json + "' has no cases array");
  std::vector<SpeedRow> rows;
  for (const auto& c : doc.at("cases")) {
    try {
      rows.push_back(run_case(c));
    } catch (const std::exception& ex) {
      SpeedRow r;
      r.id = c.value("id", "?");
      r.part = c.value("set_aside", false) ? "set-aside" : "fitted";
      r.group = c.value("kind", "") == "prefill" ? "prefill" : "decode";
      r.measured = c.value("measured_tok_s", 0.0);
      r.note = ex.what();
      rows.push_back(r);
    }
  }
  return rows;
}

namespace {

// Per group and part: how many runs, how many inside the target band and the printed range, and
// the median of `ratio` (0 for a run the figure does not cover).
template <typename Ratio, typename Range>
std::vector<SpeedSummary> summarize(const std::vector<SpeedRow>& rows, Ratio ratio_of, Range range_of) {
  std::vector<SpeedSummary> out;
  for (const char* group : {"decode on device", "decode offload", "decode from SSD", "prefill"}) {
    for (const char* part : {"fitted", "set-aside"}) {
      SpeedSummary s{group, part};
      std::tie(s.low, s.high) = speed_target(group);
      const auto [range_low, range_high] = range_of(std::string(group));
      std::vector<double> ratios;
      for (const auto& r : rows) {
        const double ratio = ratio_of(r);
        if (r.group != group || r.part != part || ratio <= 0) continue;
        ratios.push_back(ratio);
        s.met += ratio >= s.low && ratio <= s.high ? 1 : 0;
        s.inside_range += ratio >= range_low && ratio <= range_high ? 1 : 0;
      }
      s.cases = ratios.size();
      if (!ratios.empty()) {
        std::sort(ratios.begin(), ratios.end());
        const std::size_t n = ratios.size();
        s.median_ratio = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
      }
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace

std::vector<SpeedSummary> summarize_speed(const std::vector<SpeedRow>& rows, const SpeedData& data) {
  return summarize(rows, [](const SpeedRow& r) { return r.estimate > 0 ? r.ratio : 0.0; },
                   [&](const std::string& group) {
                     const SpeedRange& r = group == "prefill" ? data.prefill_range : group == "decode on device" ? data.decode_on_device : data.decode_offload;
                     return std::pair{r.low, r.high};
                   });
}

std::vector<SpeedSummary> summarize_rule_speed(const std::vector<SpeedRow>& rows, double decode_efficiency, double prefill_efficiency, const SpeedData& data) {
  // The rule's estimate is bound x efficiency and its range bound x [low, high] share, so measured
  // / estimate falls inside it when the share lies in [low, high] / efficiency.
  const auto efficiency = [&](const std::string& group) { return group == "prefill" ? prefill_efficiency : decode_efficiency; };
  return summarize(rows, [&](const SpeedRow& r) { return r.bound_share > 0 ? r.bound_share / efficiency(r.group) : 0.0; },
                   [&](const std::string& group) {
                     const BoundShareRange& r = group == "prefill" ? data.rule_prefill : group == "decode on device" ? data.rule_decode_on_device : data.rule_decode_offload;
                     return std::pair{r.low / efficiency(group), r.high / efficiency(group)};
                   });
}

}  // namespace vc
