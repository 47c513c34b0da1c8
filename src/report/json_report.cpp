#include "report/json_report.h"

#include "core/units.h"
#include "report/engine_report.h"

namespace vc {

nlohmann::json scenario_json(const Scenario& s) {
  nlohmann::json j;
  j["quant"] = s.quant.empty() ? "native" : s.quant;
  j["context_tokens"] = s.context;
  j["sequences"] = s.sequences;
  j["cache_dtype"] = s.cache_dtype;
  j["state_layout"] = to_string(s.state_layout);
  j["overhead_percent"] = s.overhead_bp / 100.0;
  j["overhead_fixed_bytes"] = s.overhead_fixed;
  j["latent_values"] = s.latent_values ? nlohmann::json(*s.latent_values) : nlohmann::json(nullptr);
  j["engine"] = to_string(s.engine);
  return j;
}

nlohmann::json model_summary_json(const Model& m) {
  nlohmann::json j;
  j["id"] = m.id;
  j["name"] = m.name;
  j["family"] = m.family;
  j["architecture"] = m.architecture;
  j["layers"] = m.layers.size();
  nlohmann::json kinds = nlohmann::json::object();
  for (auto k : {AttentionKind::Full, AttentionKind::SlidingWindow, AttentionKind::Latent, AttentionKind::LinearState, AttentionKind::None}) {
    if (auto n = m.layer_count(k)) kinds[to_string(k)] = n;
  }
  j["layer_kinds"] = kinds;
  j["hidden_size"] = m.hidden;
  j["vocab_size"] = m.vocab;
  nlohmann::json p;
  p["total"] = m.params.total();
  p["total_source"] = m.params.total_source();
  p["active"] = m.params.active();
  p["active_source"] = m.params.active_source();
  p["derived_total"] = m.params.derived_total;
  p["derived_active"] = m.params.derived_active;
  p["derived_source"] = m.params.derived_source;
  p["stored_copies"] = m.params.stored_copies;
  p["mtp_copies"] = m.params.mtp_copies;
  auto stated_json = [](const std::optional<StatedFigure>& f) {
    return f ? nlohmann::json{{"value", f->value}, {"source", f->source}} : nlohmann::json(nullptr);
  };
  p["stated_total"] = stated_json(m.params.stated_total);
  p["stated_active"] = stated_json(m.params.stated_active);
  p["active_convention"] = kActiveConvention;
  p["stated_convention"] = m.params.stated_convention.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.params.stated_convention);
  nlohmann::json by_class = nlohmann::json::object();
  for (const auto& [c, n] : m.params.by_class) by_class[to_string(c)] = n;
  p["by_class"] = by_class;
  nlohmann::json active_by_class = nlohmann::json::object();
  for (const auto& [c, n] : m.params.active_by_class) active_by_class[to_string(c)] = n;
  p["active_by_class"] = active_by_class;
  j["params"] = p;
  j["status"] = to_string(m.status);
  j["status_note"] = m.status_note;
  j["weights_available"] = m.weights_available();
  auto origin = m.provenance.find("config.json");
  j["config_origin"] = origin == m.provenance.end() ? nlohmann::json(nullptr) : nlohmann::json(origin->second);
  j["native_checkpoint"] = {{"format", m.native.format}, {"bytes", m.native.bytes}, {"measured", m.native.measured},
                            {"source", m.native.source}, {"note", m.native.note},
                            {"copy_bytes", m.native.copy_bytes}, {"download_bytes", m.native.download_bytes()}};
  nlohmann::json builds = nlohmann::json::array();
  for (const auto& b : m.builds) builds.push_back({{"name", b.name}, {"format", b.format}, {"bytes", b.bytes}, {"source", b.source}, {"note", b.note}});
  j["builds"] = builds;
  j["max_context_tokens"] = m.max_context;
  j["inputs"] = m.inputs;
  j["license"] = m.license;
  nlohmann::json confirmed = nlohmann::json::array();
  for (const auto& c : m.confirmed) confirmed.push_back({{"spec", c.spec}, {"value", c.value}, {"whose_word", c.whose_word}});
  j["confirmed"] = confirmed;
  nlohmann::json assumed = nlohmann::json::array();
  for (const auto& a : m.assumed) assumed.push_back({{"question", a.question}, {"what_we_can_say", a.what_we_can_say}});
  j["assumed"] = assumed;
  j["left_out"] = m.left_out;
  j["sources"] = m.sources;
  j["warnings"] = m.warnings;
  return j;
}

nlohmann::json estimate_json(const Estimate& e) {
  nlohmann::json j;
  j["schema"] = kEstimateSchema;
  j["model"] = model_summary_json(*e.model);
  j["inputs"] = scenario_json(e.scenario);
  j["weights"] = {{"tier", e.weights.tier}, {"bytes", e.weights.bytes}, {"unclamped_bytes", e.weights.unclamped},
                  {"clamped", e.weights.clamped}, {"from_build", e.weights.kind == TierKind::Build}, {"effective_bits_per_param", e.weights.effective_bits}};
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& l : e.lines) {
    lines.push_back({{"id", l.id}, {"label", l.label}, {"bytes", l.bytes}, {"formula", l.formula}, {"assumption", l.assumption}, {"source", l.source}});
  }
  j["lines"] = lines;
  j["totals"] = {{"weights_bytes", e.weights.bytes}, {"cache_bytes", e.cache_bytes}, {"state_bytes", e.state_bytes},
                 {"cache_and_state_bytes", e.context_bytes()}, {"overhead_bytes", e.overhead_bytes}, {"total_bytes", e.total_bytes}};
  j["latent_values_implied"] = e.latent_values_implied;
  nlohmann::json cards = nlohmann::json::array();
  for (const auto& c : e.verdict.cards) cards.push_back({{"card_bytes", c.card_bytes}, {"cards", c.cards}, {"nodes_of_8", c.nodes}});
  j["verdict"] = {{"cards", cards},
                  {"common_box_bytes", e.verdict.common_box_bytes},
                  {"common_box_shortfall_bytes", e.verdict.common_box_shortfall},
                  {"dominant", e.verdict.dominant},
                  {"context_share_percent", e.verdict.context_share_bp / 100.0},
                  {"headline", e.verdict.headline},
                  {"text", e.verdict.text}};
  return j;
}

nlohmann::json estimate_json(const Estimate& e, const EngineAnswer& engine) {
  nlohmann::json j = estimate_json(e);
  j["engine"] = engine_json(engine);
  return j;
}

}  // namespace vc
