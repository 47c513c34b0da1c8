#include "sources/config/config_rope.h"

#include <fmt/format.h>

#include <cmath>

namespace vc {
namespace {

// A positive finite number in (0, max], or `fallback` when absent or null; `where` names it in messages.
double positive_number(ConfigView& cfg, const nlohmann::json* v, const std::string& where, double max, double fallback) {
  if (!v || v->is_null()) return fallback;
  if (!v->is_number()) cfg.fail(where, fmt::format("is {}; a number is expected", v->dump()));
  const double d = v->get<double>();
  if (!(std::isfinite(d) && d > 0 && d <= max)) cfg.fail(where, fmt::format("is {}; a number above 0 and at most {} is expected", d, max));
  return d;
}

const nlohmann::json* member(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

}  // namespace

void read_rope(ConfigView& cfg) {
  RopeSpec& r = cfg.model().rope;
  const char* key = "rope_scaling";
  const nlohmann::json* scaling = cfg.raw(key);
  if (!scaling || !scaling->is_object()) {
    key = "rope_parameters";
    scaling = cfg.raw(key);
  }
  std::string path = key;
  if (scaling && scaling->is_object()) {
    if (auto full = scaling->find("full_attention"); full != scaling->end() && full->is_object()) {
      scaling = &*full;
      path += ".full_attention";
    }
    const auto type = scaling->contains("rope_type") ? scaling->find("rope_type") : scaling->find("type");
    if (type != scaling->end() && !type->is_null()) {
      if (!type->is_string()) cfg.fail(path + ".rope_type", fmt::format("is {}; a string is expected", type->dump()));
      r.type = type->get<std::string>();
      if (r.type.size() > 64) cfg.fail(path + ".rope_type", "is longer than 64 characters");
    }
    r.factor = positive_number(cfg, member(*scaling, "factor"), path + ".factor", 1e6, 1.0);
    if (scaling->contains("original_max_position_embeddings") && !(*scaling)["original_max_position_embeddings"].is_null())
      r.original_positions = cfg.u64_in(*scaling, path, "original_max_position_embeddings", uint64_t{1} << 34);
    r.partial_rotary_factor = positive_number(cfg, member(*scaling, "partial_rotary_factor"), path + ".partial_rotary_factor", 1.0, 1.0);
  }
  if (const nlohmann::json* p = cfg.raw("partial_rotary_factor"); p && !p->is_null())
    r.partial_rotary_factor = positive_number(cfg, p, "partial_rotary_factor", 1.0, 1.0);
  else if (const nlohmann::json* pct = cfg.raw("rotary_pct"); pct && !pct->is_null())  // GPT-NeoX's name for it
    r.partial_rotary_factor = positive_number(cfg, pct, "rotary_pct", 1.0, 1.0);
}

}  // namespace vc
