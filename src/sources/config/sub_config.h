#pragma once
// Bounded reads from one nested object of config.json (talker_config, token2wav_config.dit_config,
// code2wav_config, ...), recorded as "PATH.KEY" so they never overwrite the text model's provenance
// of the same key. A key the config lacks takes transformers' default where the caller names one
// (what from_pretrained would build), and the count says so. Shared by the speech-output counts of
// Qwen2.5-Omni (config_omni.cpp) and Qwen3-Omni (config_omni3.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sources/config/config_view.h"
#include "sources/config/limits.h"

namespace vc::census {

class SubConfig {
 public:
  SubConfig(ConfigView& cfg, const nlohmann::json& obj, std::string path) : cfg_(cfg), obj_(obj), path_(std::move(path)) {}
  // The first of `keys` present (published configs name some sizes twice: "dim" and "hidden_size";
  // transformers 5 writes the talker's "num_experts" as "num_local_experts").
  uint64_t get(std::initializer_list<const char*> keys, uint64_t max, std::optional<uint64_t> fallback = std::nullopt) {
    for (const char* key : keys) {
      const auto it = obj_.find(key);
      if (it == obj_.end() || it->is_null()) continue;
      const std::string where = path_ + "." + key;
      if (!it->is_number_integer() || (!it->is_number_unsigned() && it->get<int64_t>() < 0)) cfg_.fail(where, fmt::format("is {}; a whole number is expected", it->dump()));
      const uint64_t n = it->get<uint64_t>();
      if (n == 0 || n > max) cfg_.fail(where, fmt::format("is {}; accepted: 1 to {}", n, max));
      cfg_.note_source(where, where);
      return n;
    }
    if (!fallback) cfg_.fail(path_ + "." + *keys.begin(), "missing; the count needs it");
    defaults_.push_back(fmt::format("{} {}", *keys.begin(), *fallback));
    return *fallback;
  }
  std::vector<uint64_t> list(const char* key, std::vector<uint64_t> fallback) {
    const auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      defaults_.push_back(fmt::format("{} [{}]", key, fmt::join(fallback, ", ")));
      return fallback;
    }
    return cfg_.u64_list(*it, path_ + "." + key, 64, limits::kWidth);
  }
  // A true/false key (attention_bias), `fallback` when absent; anything else is an error.
  bool flag(const char* key, bool fallback) {
    const auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) cfg_.fail(path_ + "." + key, fmt::format("is {}; true or false is expected", it->dump()));
    return it->get<bool>();
  }
  // The nested object `key` (code_predictor_config, text_config), or an empty one.
  const nlohmann::json& object(const char* key) const {
    static const nlohmann::json kEmpty = nlohmann::json::object();
    const auto it = obj_.find(key);
    return it != obj_.end() && it->is_object() ? *it : kEmpty;
  }
  // " (transformers' defaults: ...)" for the keys the config lacks, or "".
  std::string defaults_text() const { return defaults_.empty() ? "" : fmt::format(" (transformers' defaults: {})", fmt::join(defaults_, ", ")); }
  const std::string& path() const { return path_; }

 private:
  ConfigView& cfg_;
  const nlohmann::json& obj_;
  std::string path_;
  std::vector<std::string> defaults_;
};

}  // namespace vc::census
