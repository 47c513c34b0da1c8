#include "catalogue/catalogue.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "catalogue/catalogue_tower.h"
#include "catalogue/embedded_data.h"
#include "core/checked.h"
#include "core/text.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_tower.h"
#include "sources/config/config_view.h"

namespace vc {
namespace {

ParamClass param_class_from(const std::string& name) {
  for (auto c : {ParamClass::Embedding, ParamClass::OutputHead, ParamClass::Attention, ParamClass::DenseMlp,
                 ParamClass::RoutedExperts, ParamClass::SharedExperts, ParamClass::Router, ParamClass::Norms,
                 ParamClass::Vision, ParamClass::Mtp, ParamClass::Other}) {
    if (name == to_string(c)) return c;
  }
  throw std::invalid_argument("unknown parameter class '" + name + "'");
}

ReleaseStatus release_status_from(const std::string& name) {
  for (auto s : {ReleaseStatus::Released, ReleaseStatus::Announced, ReleaseStatus::Withdrawn}) {
    if (name == to_string(s)) return s;
  }
  throw std::invalid_argument("unknown status '" + name + "'; accepted: released, announced, withdrawn");
}

StatedFigure stated(const nlohmann::json& j) { return {j.at("value").get<uint64_t>(), j.at("source").get<std::string>()}; }

void apply_facts(Model& m, const nlohmann::json& f) {
  m.id = f.at("id").get<std::string>();
  m.name = f.at("name").get<std::string>();
  for (const auto& s : f.value("sources", std::vector<std::string>{})) m.sources.push_back(s);
  if (f.contains("extra_params")) {  // parts the config does not describe (vision towers, MTP)
    for (const auto& e : f["extra_params"]) {
      ParamClass c = param_class_from(e.at("class").get<std::string>());
      uint64_t n = e.at("value").get<uint64_t>();
      if (c == ParamClass::Vision) {
        // One count per tower: a tower counted from the config's vision_config is not stated again;
        // a stated one (a layout the config reader does not model) replaces the "not counted" warning.
        if (tower_from_config(m)) throw std::invalid_argument("facts for '" + f.at("id").get<std::string>() + "': the vision tower is counted from config.json; drop extra_params vision");
        std::erase_if(m.warnings, [](const std::string& w) { return w.rfind(kTowerNotCountedWarning, 0) == 0; });
      }
      m.params.by_class[c] = checked_add(m.params.by_class[c], n);
      m.params.derived_total = checked_add(m.params.derived_total, n);
      // MTP and vision are shipped but not read per decoded token (kActiveConvention). A native
      // size derived from the config gains them at 16 bits (vision towers and projectors ship in
      // bf16 beside FP8 or BF16 language models); a measured checkpoint below replaces it all.
      if (!f.contains("checkpoint")) {
        const uint64_t bytes = checked_mul(n, 2);
        m.native.bytes = checked_add(m.native.bytes, bytes);
        if (!m.native.bytes_by_class.empty()) m.native.bytes_by_class[c] = checked_add(m.native.bytes_by_class[c], bytes);
      }
      m.provenance[std::string("params.") + to_string(c)] = e.at("source").get<std::string>();
    }
  }
  if (f.contains("stated")) {
    const auto& s = f["stated"];
    if (s.contains("total_params")) m.params.stated_total = stated(s["total_params"]);
    if (s.contains("active_params")) m.params.stated_active = stated(s["active_params"]);
    m.params.stated_convention = s.value("convention", "");
    m.params.difference_note = s.value("difference", "");
  }
  m.status = release_status_from(f.value("status", "released"));
  m.status_note = f.value("status_note", "");
  if (m.status != ReleaseStatus::Released && m.status_note.empty()) {
    throw std::invalid_argument("facts for '" + m.id + "': status '" + to_string(m.status) + "' needs a status_note saying why");
  }
  if (f.contains("checkpoint")) {
    const auto& c = f["checkpoint"];
    m.native.format = c.at("format").get<std::string>();
    m.native.bytes = c.at("bytes").get<uint64_t>();
    m.native.measured = c.value("measured", true);
    m.native.source = c.at("source").get<std::string>();
    m.native.note = c.value("note", m.native.note);
  }
  for (const auto& b : f.value("builds", nlohmann::json::array())) {
    m.builds.push_back({b.at("name").get<std::string>(), b.at("format").get<std::string>(), b.at("bytes").get<uint64_t>(),
                        b.at("source").get<std::string>(), b.value("note", "")});
  }
  if (f.contains("max_context")) {  // the card's native context; the config's positions stay for the rotary tables
    const uint64_t stated = f["max_context"].get<uint64_t>();
    if (m.max_context && stated != m.max_context && m.rope.max_positions == 0) m.rope.max_positions = m.max_context;
    m.max_context = stated;
  }
  m.inputs = f.value("inputs", std::vector<std::string>{"text"});
  m.license = f.value("license", "");
  for (const auto& c : f.value("confirmed", nlohmann::json::array())) {
    m.confirmed.push_back({c.at("spec").get<std::string>(), c.at("value").get<std::string>(), c.at("whose_word").get<std::string>()});
  }
  for (const auto& a : f.value("assumed", nlohmann::json::array())) {
    m.assumed.push_back({a.at("question").get<std::string>(), a.at("what_we_can_say").get<std::string>()});
  }
  m.left_out = f.value("left_out", std::vector<std::string>{});
  for (const auto& n : f.value("notes", std::vector<std::string>{})) m.notes.push_back(n);
}

// facts.json `stored_tensors`: what the checkpoint holds beyond its geometry, each a sourced yes or no
// ({"value": false, "source": "..."}), for the config reader.
StoredTensors stored_tensors_from(const nlohmann::json& f) {
  StoredTensors out;
  if (!f.contains("stored_tensors")) return out;
  const std::string id = f.value("id", std::string("?"));
  for (const auto& [key, e] : f["stored_tensors"].items()) {
    std::optional<StoredFact>* slot = key == "mtp_embedding_and_head_copies" ? &out.mtp_embedding_and_head_copies
                                      : key == "tied_head_copy"              ? &out.tied_head_copy
                                                                             : nullptr;
    if (!slot) throw std::invalid_argument("facts for '" + id + "': stored_tensors." + key + " is not known; accepted: mtp_embedding_and_head_copies, tied_head_copy");
    if (!e.is_object() || !e.contains("value") || !e["value"].is_boolean() || !e.contains("source") || !e["source"].is_string() ||
        e["source"].get<std::string>().empty()) {
      throw std::invalid_argument("facts for '" + id + "': stored_tensors." + key + " needs {\"value\": true or false, \"source\": \"where it was read\"}");
    }
    *slot = StoredFact{e["value"].get<bool>(), e["source"].get<std::string>()};
  }
  return out;
}

}  // namespace

Model model_from_facts(const std::string& facts_json, const std::string& config_json, const std::string& label) {
  auto facts = nlohmann::json::parse(facts_json);
  auto config = parse_config_text(config_json, label);
  if (facts.contains("config_patch")) config.merge_patch(facts["config_patch"]);  // RFC 7386
  Model m = model_from_config(config, label, stored_tensors_from(facts));
  if (facts.contains("config_source")) m.provenance["config.json"] = facts["config_source"].get<std::string>();
  if (facts.contains("config_origin")) {  // the published file: repository, revision, file, copies compared
    const auto& o = facts["config_origin"];
    std::string text = o.at("published_as").get<std::string>() + ", " + o.at("how").get<std::string>() + " from " +
                       o.at("repository").get<std::string>() + " @ " + o.at("revision").get<std::string>() + " : " + o.at("file").get<std::string>();
    for (const auto& c : o.value("copies", std::vector<std::string>{})) text += "; checked against " + c;
    m.provenance["config.json"] = text;
  }
  apply_facts(m, facts);
  return m;
}

// A model without published files of its own borrows another entry's config (K3.1 Pro: K3's).
std::string catalogue_config_path(const nlohmann::json& facts, std::string_view dir) {
  return facts.contains("config_from") ? "models/" + facts["config_from"].get<std::string>() + "/config.json" : std::string(dir) + "/config.json";
}

Catalogue::Catalogue() {
  for (auto path : embedded::paths_under("models/")) {
    constexpr std::string_view suffix = "/facts.json";
    if (path.size() < suffix.size() || path.substr(path.size() - suffix.size()) != suffix) continue;
    std::string facts_text(embedded::file_text(path));
    auto facts = nlohmann::json::parse(facts_text);
    const std::string config_path = catalogue_config_path(facts, path.substr(0, path.size() - suffix.size()));
    std::string config_text(embedded::file_text(config_path));
    models_.push_back(model_from_facts(facts_text, config_text, "catalogue " + config_path));
  }
  std::sort(models_.begin(), models_.end(), [](const Model& a, const Model& b) { return a.id < b.id; });
}

const Catalogue& Catalogue::builtin() {
  static const Catalogue catalogue;
  return catalogue;
}

const Model* Catalogue::find(std::string_view id_or_name) const {
  const std::string key = lower(id_or_name);
  for (const auto& m : models_) {
    if (lower(m.id) == key || lower(m.name) == key) return &m;
  }
  return nullptr;
}

std::string Catalogue::ids() const {
  std::string out;
  for (const auto& m : models_) out += (out.empty() ? "" : ", ") + m.id;
  return out;
}

}  // namespace vc
