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

// EleutherAI/pythia-1.4b's published config.json (https://huggingface.co/EleutherAI/pythia-1.4b/blob/main/config.json).
inline nlohmann::json pythia_1_4b() {
  return nlohmann::json::parse(R"({"architectures": ["GPTNeoXForCausalLM"], "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "gelu",
    "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 8192, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
    "model_type": "gpt_neox", "num_attention_heads": 16, "num_hidden_layers": 24, "rotary_emb_base": 10000, "rotary_pct": 0.25,
    "tie_word_embeddings": false, "torch_dtype": "float16", "use_cache": true, "use_parallel_residual": true, "vocab_size": 50304})");
}

// tiiuae/falcon-40b's published config.json (https://huggingface.co/tiiuae/falcon-40b/blob/main/config.json).
inline nlohmann::json falcon_40b() {
  return nlohmann::json::parse(R"({"alibi": false, "apply_residual_connection_post_layernorm": false, "architectures": ["FalconForCausalLM"],
    "bias": false, "bos_token_id": 11, "eos_token_id": 11, "hidden_size": 8192, "layer_norm_epsilon": 1e-05, "model_type": "falcon",
    "multi_query": true, "new_decoder_architecture": true, "num_attention_heads": 128, "num_hidden_layers": 60, "num_kv_heads": 8,
    "parallel_attn": true, "torch_dtype": "bfloat16", "vocab_size": 65024})");
}

// tiiuae/falcon-180B's published config.json (https://huggingface.co/tiiuae/falcon-180B/blob/main/config.json).
inline nlohmann::json falcon_180b() {
  return nlohmann::json::parse(R"({"alibi": false, "architectures": ["FalconForCausalLM"], "bias": false, "bos_token_id": 11,
    "eos_token_id": 11, "hidden_size": 14848, "layer_norm_epsilon": 1e-05, "max_position_embeddings": 2048, "model_type": "falcon",
    "multi_query": true, "new_decoder_architecture": true, "num_attention_heads": 232, "num_hidden_layers": 80, "num_kv_heads": 8,
    "parallel_attn": true, "torch_dtype": "bfloat16", "vocab_size": 65024})");
}

// bigcode/starcoder's published config.json (https://huggingface.co/bigcode/starcoder/blob/main/config.json).
inline nlohmann::json starcoder() {
  return nlohmann::json::parse(R"({"activation_function": "gelu_pytorch_tanh", "architectures": ["GPTBigCodeForCausalLM"],
    "attention_softmax_in_fp32": true, "multi_query": true, "model_type": "gpt_bigcode", "n_embd": 6144, "n_head": 48, "n_inner": 24576,
    "n_layer": 40, "n_positions": 8192, "scale_attention_softmax_in_fp32": true, "scale_attn_weights": true, "torch_dtype": "float32",
    "vocab_size": 49152})");
}

// openai-community/gpt2's published config.json (https://huggingface.co/openai-community/gpt2/blob/main/config.json).
inline nlohmann::json gpt2() {
  return nlohmann::json::parse(R"({"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "bos_token_id": 50256,
    "eos_token_id": 50256, "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12,
    "n_positions": 1024, "vocab_size": 50257})");
}

}  // namespace vc::testing
