#include "report/json_verbs.h"

#include <fmt/format.h>

#include "engines/engine_tiers.h"
#include "report/json_report.h"

namespace vc {

nlohmann::json models_json(const std::vector<Model>& models) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : models) out.push_back(model_summary_json(m));
  return out;
}

nlohmann::json builds_json(const Model& model, const std::vector<LadderRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json opts = nlohmann::json::array();
    for (const auto& op : r.options) opts.push_back({{"label", op.label}, {"card_bytes", op.card_bytes}, {"cards", op.cards}});
    out.push_back({{"name", r.build->name}, {"bytes", r.build->bytes}, {"overhead_bytes", r.overhead_bytes},
                   {"with_overhead_bytes", r.with_overhead}, {"bits_per_param", r.bits_per_param}, {"source", r.build->source}, {"cards", opts}});
  }
  return nlohmann::json{{"schema", "vramcalc.builds/1"}, {"model", model.id}, {"builds", out}};
}

nlohmann::json engine_builds_json(const Model& model, const Scenario& scenario, const std::vector<EngineLadderRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json cards = nlohmann::json::array();
    for (const auto& op : r.options) {
      nlohmann::json c = {{"label", op.label}, {"card_bytes", op.card_bytes}, {"cards", op.cards}, {"fits", op.answer.has_value()}};
      if (const EngineAnswer* a = op.answer ? &*op.answer : nullptr) {
        const DeviceAllocation* t = a->tightest();
        c["tightest_device"] = t ? t->name : "";
        c["tightest_device_bytes"] = t ? t->total_bytes : 0;
        c["total_bytes"] = a->total_bytes;
        c["kv_tokens"] = a->kv_tokens ? nlohmann::json(*a->kv_tokens) : nlohmann::json(nullptr);
        c["max_concurrency"] = a->max_concurrency ? nlohmann::json(*a->max_concurrency) : nlohmann::json(nullptr);
      }
      cards.push_back(std::move(c));
    }
    out.push_back({{"quant", r.quant}, {"tier", r.weights.tier}, {"weights_bytes", r.weights.bytes}, {"cards", cards}});
  }
  return {{"schema", "vramcalc.builds/2"}, {"model", model.id}, {"engine", to_string(scenario.engine)}, {"context", scenario.context},
          {"sequences", scenario.sequences}, {"tiers", engine_tiers_text(scenario.engine)}, {"builds", out}};
}

nlohmann::json sweep_json(const Model& model, const std::vector<SweepRow>& rows) {
  nlohmann::json out;
  out["schema"] = "vramcalc.sweep/2";
  out["model"] = model.id;
  out["rows"] = nlohmann::json::array();
  for (const auto& r : rows) {
    auto j = estimate_json(r.estimate, r.engine);
    j.erase("model");  // the model is the same on every row
    j["saving_vs_previous_bytes"] = r.saving_vs_previous;
    out["rows"].push_back(j);
  }
  return out;
}

EngineAnswer engine_for(const Model& model, const Scenario& scenario) {
  EngineRequest r;
  r.model = &model;
  r.scenario = scenario;
  return run_engine(r);
}

nlohmann::json compare_json(const Estimate& a, const Estimate& b, const EngineAnswer& engine_a, const EngineAnswer& engine_b) {
  nlohmann::json out;
  out["schema"] = "vramcalc.compare/2";
  out["a"] = estimate_json(a, engine_a);
  out["b"] = estimate_json(b, engine_b);
  out["difference_bytes"] = static_cast<int64_t>(b.total_bytes) - static_cast<int64_t>(a.total_bytes);
  return out;
}

nlohmann::json stream_json(const Model& model, const StreamEstimate& s) {
  nlohmann::json rates = nlohmann::json::array();
  for (const auto& r : s.rates) rates.push_back({{"bandwidth_bytes_per_s", r.bandwidth_bytes_per_s}, {"tokens_per_s", r.tokens_per_s}});
  return nlohmann::json{{"schema", "vramcalc.stream/1"}, {"model", model.id}, {"active_params", s.active_params},
                        {"bits_per_weight", s.bits_per_weight}, {"bytes_per_token", s.bytes_per_token}, {"rates", rates},
                        {"formula", s.formula},
                        {"assumption", "every active weight is read once per token from that tier; no cache hits (pure upper bound)"}};
}

nlohmann::json estimate_display_json(const Estimate& e, ByteUnits units) {
  auto b = [units](uint64_t bytes) { return format_bytes(bytes, units); };
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& l : e.lines) lines.push_back(b(l.bytes));
  nlohmann::json cards = nlohmann::json::array();
  for (const auto& c : e.verdict.cards) cards.push_back(fmt::format("{} × {} GB", c.cards, c.card_bytes / 1'000'000'000));
  nlohmann::json d{{"units", units == ByteUnits::Binary ? "gib" : "gb"},
                   {"lines", lines},
                   {"weights", b(e.weights.bytes)},
                   {"cache", b(e.cache_bytes)},
                   {"state", b(e.state_bytes)},
                   {"cache_and_state", b(e.context_bytes())},
                   {"overhead", b(e.overhead_bytes)},
                   {"total", b(e.total_bytes)},
                   {"context", format_tokens(e.scenario.context)},
                   {"context_share", format_percent_bp(e.verdict.context_share_bp)},
                   {"cards", cards}};
  d["clamp_note"] = e.weights.clamped ? fmt::format("{} would need {} for the weights, more than the native {} checkpoint; the native size stands.",
                                                    e.weights.tier, b(e.weights.unclamped), e.model->native.format)
                                      : "";
  return d;
}

}  // namespace vc
