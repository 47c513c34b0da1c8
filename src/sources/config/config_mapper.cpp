#include "sources/config/config_mapper.h"

#include <stdexcept>

#include <functional>
#include <map>

#include "core/error.h"
#include "sources/config/config_omni.h"
#include "sources/config/config_omni3.h"
#include "sources/config/config_rope.h"
#include "sources/config/config_tower.h"
#include "sources/config/families.h"
#include "sources/config/native_checkpoint.h"

namespace vc {
namespace {

using Mapper = void (*)(ConfigView&);

// model_type -> mapper; the architecture table of this project.
const std::map<std::string, Mapper>& mapper_table() {
  static const std::map<std::string, Mapper> table = {
      {"kimi_linear", families::map_kimi_linear},
      {"kimi_k3", families::map_kimi_linear},
      {"llama", families::map_llama},
      {"mistral", families::map_llama},
      {"phi3", families::map_llama},  // Phi-3 / Phi-4: Llama's layout with fused qkv and gate_up (same counts)
      {"granite", families::map_llama},  // Granite 3.x dense: Llama's tensors (its multipliers weigh nothing)
      {"gemma", families::map_gemma},
      {"cohere", families::map_cohere},
      {"cohere2", families::map_cohere2},
      {"olmo2", families::map_olmo2},
      {"qwen2", families::map_qwen2},
      {"qwen2_moe", families::map_qwen2},
      {"qwen2_vl", families::map_qwen2},         // Qwen2-VL's language model: Qwen2 dense
      {"qwen2_5_vl", families::map_qwen2},       // Qwen2.5-VL's language model: Qwen2 dense
      {"qwen2_5_vl_text", families::map_qwen2},
      {"qwen2_5_omni", families::map_qwen2},       // Qwen2.5-Omni's thinker (config_omni.h): Qwen2 dense
      {"qwen2_5_omni_text", families::map_qwen2},
      {"qwen2_5_omni_thinker", families::map_qwen2},
      {"qwen3", families::map_qwen3},
      {"qwen3_moe", families::map_qwen3},
      {"qwen3_omni_moe", families::map_qwen3},         // Qwen3-Omni's thinker (config_omni3.h): Qwen3 MoE
      {"qwen3_omni_moe_text", families::map_qwen3},
      {"qwen3_omni_moe_thinker", families::map_qwen3},
      {"qwen3_vl_text", families::map_qwen3},      // Qwen3-VL's language model: Qwen3 dense
      {"qwen3_vl_moe_text", families::map_qwen3},  // Qwen3-VL MoE's language model: Qwen3 MoE
      {"qwen3_next", families::map_qwen3_next},
      {"qwen3_5", families::map_qwen3_next},
      {"qwen3_5_text", families::map_qwen3_next},
      {"qwen3_5_moe", families::map_qwen3_next},
      {"qwen3_5_moe_text", families::map_qwen3_next},
      {"deepseek_v2", families::map_deepseek},
      {"deepseek_v3", families::map_deepseek},
      {"kimi_k2", families::map_deepseek},
      {"deepseek_v32", families::map_deepseek},
      {"glm_moe_dsa", families::map_deepseek},
      {"gpt_oss", families::map_gpt_oss},
      {"gemma2", families::map_gemma2},
      {"phi", families::map_phi},
      {"starcoder2", families::map_starcoder2},
      {"gpt_neox", families::map_gpt_neox},
      {"falcon", families::map_falcon},
      {"RefinedWeb", families::map_falcon},       // Falcon-40B's first config (vLLM's RWConfig)
      {"RefinedWebModel", families::map_falcon},  // Falcon-7B's first config
      {"gpt2", families::map_gpt2},
      {"gpt_bigcode", families::map_gpt_bigcode},
      {"gemma3", families::map_gemma3},
      {"gemma3_text", families::map_gemma3},
      {"mixtral", families::map_mixtral},
      {"llama4", families::map_llama4},
      {"llama4_text", families::map_llama4},
      {"glm4_moe", families::map_glm4_moe},
      {"minimax_m2", families::map_minimax_m2},
      {"nemotron_h", families::map_nemotron_h},
      {"jamba", families::map_jamba},
      {"falcon_h1", families::map_falcon_h1},
      {"granitemoehybrid", families::map_granite_hybrid},
  };
  return table;
}

std::string model_type_of(const nlohmann::json& config) {
  for (const char* k : {"text_config", "language_config", "llm_config"}) {
    auto it = config.find(k);
    if (it != config.end() && it->is_object()) {
      auto t = it->find("model_type");
      if (t != it->end() && t->is_string()) return t->get<std::string>();
    }
  }
  auto t = config.find("model_type");
  if (t != config.end() && t->is_string()) return t->get<std::string>();
  return "";
}

}  // namespace

std::vector<std::string> supported_model_types() {
  std::vector<std::string> out;
  for (const auto& [k, v] : mapper_table()) out.push_back(k);
  return out;
}

static Model map_config(const nlohmann::json& whole, const std::string& whole_label, const StoredTensors& stored) {
  // Qwen2.5-Omni, Qwen3-Omni: the thinker is the served model; its config is read as the mapper's top level.
  const bool omni = is_qwen_omni(whole);
  const nlohmann::json thinker = omni ? omni_thinker_view(whole) : nlohmann::json();
  const nlohmann::json& config = omni ? thinker : whole;
  const std::string label = omni ? whole_label + " thinker_config" : whole_label;
  Model model;
  std::string type = model_type_of(config);
  auto top = config.find("model_type");
  std::string outer = (top != config.end() && top->is_string()) ? top->get<std::string>() : type;
  const auto& table = mapper_table();
  auto it = table.find(type);
  if (it == table.end()) it = table.find(outer);
  model.architecture = outer;
  ConfigView cfg(config, label, model, stored);
  read_rope(cfg);  // before the mapper, which may refine it (Gemma 3's sliding layers)
  if (it == table.end()) {  // unknown: the generic reading, which warns about every guess
    model.family = "generic";
    families::map_generic(cfg);
  } else {
    model.family = it->first;
    it->second(cfg);
  }
  if (model.layers.empty()) throw InputError(label, "the mapper found no layers");
  if (model.max_context == 0) {  // a mapper may have filled in its family's default
    model.max_context = cfg.u64_or("max_position_embeddings", 0, uint64_t{1} << 34, "not in the config");
  }
  count_config_tower(cfg);  // before the native size, which counts the tower at the checkpoint's dtype
  if (is_qwen3_omni(whole)) note_qwen3_omni_parts(cfg);
  else if (omni) note_qwen25_omni_parts(cfg);
  apply_native_checkpoint(cfg);
  apply_tied_head_copy(cfg);
  return model;
}

// Any other exception a mapper can meet on hostile values (a JSON type or range error, a container's
// length or range check) is the file's fault: the reader's error, never an internal error.
Model model_from_config(const nlohmann::json& config, const std::string& label, const StoredTensors& stored) {
  try {
    return map_config(config, label, stored);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(label, std::string("holds a value of the wrong type or range: ") + e.what());
  } catch (const std::logic_error& e) {  // std::out_of_range, length_error, invalid_argument
    throw InputError(label, std::string("holds values this reader cannot use: ") + e.what());
  }
}

}  // namespace vc
