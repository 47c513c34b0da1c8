#pragma once
// Bounded, provenance-recording access to a Hugging Face config.json. Multimodal wrappers nest the
// language model under text_config (Kimi K3, Gemma 3, Qwen3.5); lookups read there first, then the
// top level. Every value read is recorded in Model::provenance; every guess in Model::warnings.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "sources/config/stored_tensors.h"

namespace vc {

class ConfigView {
 public:
  // `label` names the file in messages ("Kimi-K3/config.json").
  // `stored`: what the checkpoint holds beyond its geometry, where someone stated it.
  ConfigView(const nlohmann::json& root, std::string label, Model& model, StoredTensors stored = {});

  const nlohmann::json& root() const { return root_; }
  const nlohmann::json& text() const { return text_; }
  const std::string& label() const { return label_; }
  Model& model() { return model_; }
  const StoredTensors& stored() const { return stored_; }

  bool has(const std::string& key) const;
  // Required unsigned integer in [1, max] (0 allowed when allow_zero).
  uint64_t u64(const std::string& key, uint64_t max, bool allow_zero = false);
  // Optional: nullopt when absent or null.
  std::optional<uint64_t> opt_u64(const std::string& key, uint64_t max);
  // Absent -> fallback, and a warning saying the field was filled in and why.
  uint64_t u64_or(const std::string& key, uint64_t fallback, uint64_t max, const std::string& why);
  bool flag(const std::string& key, bool fallback);
  std::string str(const std::string& key, const std::string& fallback);
  // Any value (text_config first), or nullptr when absent or null; records where it was read.
  const nlohmann::json* raw(const std::string& key);
  // A nested object (e.g. "linear_attn_config"), or nullptr.
  const nlohmann::json* object(const std::string& key) const;
  // Array of unsigned integers, bounded in length and value.
  std::vector<uint64_t> u64_list(const nlohmann::json& array, const std::string& key, uint64_t max_len, uint64_t max_value);
  std::vector<std::string> str_list(const std::string& key, uint64_t max_len);

  // Reads a key from a nested object, with the full path in messages.
  uint64_t u64_in(const nlohmann::json& obj, const std::string& path, const std::string& key, uint64_t max);
  uint64_t u64_in_or(const nlohmann::json& obj, const std::string& path, const std::string& key, uint64_t fallback, uint64_t max, const std::string& why);

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  void warn(const std::string& message);
  void note_source(const std::string& key, const std::string& where);

 private:
  const nlohmann::json* find(const std::string& key, std::string& where) const;
  uint64_t as_u64(const nlohmann::json& v, const std::string& where, uint64_t max, bool allow_zero) const;

  const nlohmann::json& root_;
  const nlohmann::json& text_;
  std::string label_;
  Model& model_;
  StoredTensors stored_;
};

// Parses config.json text. Accepts the non-standard Infinity/NaN that Python's json writes
// (Nemotron-H configs carry "time_step_limit": [0.0, Infinity]); bounded in size.
nlohmann::json parse_config_text(const std::string& text, const std::string& label);

}  // namespace vc
