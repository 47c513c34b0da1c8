#pragma once
// Published config.json values that more than one test reads (the keys the readers use).
#include <nlohmann/json.hpp>

namespace vc::testing {

// Qwen/Qwen2.5-VL-7B-Instruct's published config.json
// (https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/config.json); its vision_config has
// no model_type of its own.
inline nlohmann::json qwen25_vl_7b() {
  return nlohmann::json::parse(R"({
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
    "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
    "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 128000, "tie_word_embeddings": false,
    "use_sliding_window": false, "sliding_window": 32768, "max_window_layers": 28, "torch_dtype": "bfloat16",
    "vision_config": {"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420, "num_heads": 16,
      "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14, "spatial_merge_size": 2, "spatial_patch_size": 14,
      "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2, "temporal_patch_size": 2}})");
}

// Qwen/Qwen2-VL-7B-Instruct's published config.json
// (https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct/blob/main/config.json).
inline nlohmann::json qwen2_vl_7b() {
  return nlohmann::json::parse(R"({
    "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl",
    "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28,
    "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768, "tie_word_embeddings": false,
    "use_sliding_window": false, "sliding_window": 32768, "max_window_layers": 28, "torch_dtype": "bfloat16",
    "vision_config": {"depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16, "in_chans": 3, "hidden_size": 3584,
      "patch_size": 14, "spatial_merge_size": 2, "spatial_patch_size": 14, "temporal_patch_size": 2}})");
}

// microsoft/phi-2's published config.json (https://huggingface.co/microsoft/phi-2/blob/main/config.json).
inline nlohmann::json phi2() {
  return nlohmann::json::parse(R"({"architectures": ["PhiForCausalLM"], "model_type": "phi", "hidden_size": 2560, "intermediate_size": 10240,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 51200, "max_position_embeddings": 2048,
    "partial_rotary_factor": 0.4, "qk_layernorm": false, "tie_word_embeddings": false, "hidden_act": "gelu_new", "torch_dtype": "float16"})");
}

}  // namespace vc::testing
