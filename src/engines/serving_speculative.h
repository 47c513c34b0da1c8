#pragma once
// Speculative decoding in vLLM and SGLang: what the drafter adds on each GPU.
//   vLLM  --speculative-config '{"method": ..., "model": ..., "num_speculative_tokens": N}'
//         (vllm/config/speculative.py). The drafter (a draft model, an EAGLE head, or the model's
//         own MTP layers) loads with the target's weights at the target's tensor parallelism
//         (draft_tensor_parallel_size must equal it: vllm/v1/spec_decode/draft_model.py), and its
//         attention layers join the KV cache spec, so each token of the pool holds the target's
//         and the drafter's K/V (vllm/v1/worker/gpu_model_runner.py get_kv_cache_spec).
//   SGLang --speculative-algorithm EAGLE|EAGLE3|NEXTN|STANDALONE|NGRAM, --speculative-draft-model-path,
//         --speculative-num-steps / --speculative-eagle-topk / --speculative-num-draft-tokens
//         (python/sglang/srt/server_args.py). The draft worker loads at the target's TP after the
//         target's pool; the target's pool is sized with its per-token bytes scaled by
//         (1 + draft layers / target layers) (model_executor/pool_configurator.py), and the draft's
//         own pool holds the target's tokens plus the speculative headroom (model_runner.py
//         draft_runner_cache_size).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace vc {

struct ServingSpeculative {
  // The drafter, one of: draft_model, eagle, eagle3, mtp (the model's own MTP / NEXTN layers),
  // ngram (no model); empty: no speculative decoding.
  std::string method;
  std::string draft;                                   // the draft model (vLLM "model", SGLang --speculative-draft-model-path)
  std::string source_flag;                             // the flag it came from, for messages
  uint64_t num_speculative_tokens = 0;                 // vLLM
  std::optional<uint64_t> draft_tensor_parallel_size;  // vLLM
  std::optional<uint64_t> steps, topk, draft_tokens;   // SGLang --speculative-num-steps / -eagle-topk / -num-draft-tokens
  bool on() const { return !method.empty(); }
  bool needs_draft() const { return method == "draft_model" || method == "eagle" || method == "eagle3"; }
};

// vLLM's --speculative-config JSON (the CLI's and the API's speculative-config take the same).
// InputError naming `flag` for text that is not a JSON object, an unknown or unmodelled method, a
// method that needs a draft model without one, or a bad number.
ServingSpeculative parse_vllm_speculative_config(const std::string& json_text, const std::string& flag);

// SGLang's --speculative-algorithm value as the method; InputError naming the flag otherwise.
std::string sglang_speculative_method(const std::string& algorithm);
// The SGLang algorithm name of a method (STANDALONE for a draft model, NEXTN for MTP).
std::string sglang_algorithm_name(const std::string& method);

// SGLang's step / top-k / draft-token defaults (server_args.py auto_choose_speculative_params:
// (3, 1, 4) for DeepSeek V2/V3, else (5, 4, 8); top-k 1 makes the draft tokens steps + 1).
struct SglangSpecShape {
  uint64_t steps = 0, topk = 0, draft_tokens = 0;
};
SglangSpecShape sglang_spec_shape(const ServingSpeculative& s, const Model& target);

// The drafter as the engines load it beside `target`.
struct Drafter {
  std::string name;                 // "draft model Llama 3.2 1B", "MTP layers of DeepSeek V3"
  uint64_t weight_bytes = 0;        // whole drafter at the engine's dtype, before TP (0: already in the target's weights)
  std::string weight_formula;
  std::vector<LayerConfig> layers;  // the drafter's attention layers, whose cache the engine adds
  std::string layers_formula;
};

// `draft` is the loaded draft model (nullptr for mtp and ngram). `dtype` is --dtype. InputError
// when the method needs what the models lack (mtp on a model without MTP layers).
Drafter serving_drafter(const Model& target, const Model* draft, const ServingSpeculative& s, const std::string& dtype);

// The model's MTP / NEXTN layers: (MTP parameters - their own embedding and head copies) / (one
// decoder layer + the 2h x h projection), rounded (config.json's num_nextn_predict_layers /
// mtp_num_hidden_layers, which the model does not keep as a number). 0 without MTP parameters.
uint64_t mtp_layer_count(const Model& model);

// The MTP / NEXTN layers' weights in a checkpoint loaded as `whole_bytes` (loaded_share_bytes).
// vLLM's and SGLang's target models do not build them: vLLM's DeepseekV2ForCausalLM.load_weights
// skips every name get_spec_layer_idx_from_weight_name places in them ("skip spec decode layers for
// main model"), SGLang's loads only layers below num_hidden_layers; an MTP drafter loads them.
// `own_only` leaves out the embedding and head copies the checkpoint stores beside them
// (params.mtp_copies, at 16 bits), which the drafter shares with the target.
uint64_t mtp_weight_bytes(const Model& model, uint64_t whole_bytes, bool own_only);

inline constexpr const char* kVllmSpecSource = "https://github.com/vllm-project/vllm/blob/main/vllm/config/speculative.py";
inline constexpr const char* kSglangSpecSource =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/pool_configurator.py (EAGLE/STANDALONE cell size); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py (draft_runner_cache_size)";

}  // namespace vc
