#pragma once
// SGLang's LoRA memory pool (`--enable-lora` or `--lora-paths`): after the weights load and before
// the token pool is sized, LoRAManager.init_memory_pool preallocates, for every one of the
// model's num_hidden_layers (on each rank, whatever --pp) and every target module, an A buffer
// [max_loras_per_batch, R x stacked, input / tp for row-parallel modules] and a B buffer
// [max_loras_per_batch, output / tp for column-parallel modules, R] at the model's dtype
// (python/sglang/srt/lora/mem_pool.py LoRAMemoryPool.init_buffers, get_lora_A_shape,
// get_lora_B_shape; lora/utils.py get_hidden_dim, get_stacked_multiply). Per slot and rank:
//   qkv_proj      A 3R x hidden, B (q + k + v on the rank) x R (one replicated K and V head when
//                 there are fewer KV heads than ranks: _column_parallel_lora_b_per_rank_dim)
//   o_proj        A R x (q heads x v head dim / tp), B hidden x R
//   gate_up_proj  A 2R x hidden, B (2 x width / tp) x R;  down_proj A R x (width / tp), B hidden x R
//   MoE models    gate_up_proj_moe / down_proj_moe the same per expert on every layer, and the dense
//                 buffers (shared-expert width on MoE layers) only when the model has shared experts
//   embed_tokens  A R x vocab, B hidden x R (unsharded);  lm_head A R x hidden, B (vocab / tp) x R
// Multi-head latent attention (DeepSeek-V3, Kimi K2, DeepSeek-V3.2, GLM-5; default get_hidden_dim in
// lora/utils.py; q_a_proj / kv_a_proj_with_mqa normalize to fused_qkv_a_proj_with_mqa), the shapes
// vLLM's are (engines/vllm_lora.h latent_attention_lora_values, one place for both):
//   fused_qkv_a_proj_with_mqa  replicated (REPLICATED_LINEAR_LORA_NAMES): A 2R x hidden, B (q_lora_rank + kv_lora_rank + rope) x R
//   q_b_proj      A R x q_lora_rank, B (heads / tp x (nope + rope)) x R
//   kv_b_proj     A R x kv_lora_rank, B (heads / tp x (nope + v)) x R;  o_proj A R x (heads / tp x v), B hidden x R
// The DSA indexer (DeepSeek-V3.2, GLM-5; wq_b, wk, weights_proj normalize to indexer.*), replicated:
//   wq_b A R x q_lora_rank, B (index heads x index dim) x R; wk A R x hidden, B index dim x R;
//   weights_proj A R x hidden, B index heads x R
// Hybrid recurrent models: init_buffers allocates every target module on every one of
// num_hidden_layers, sized from the config by the model's get_hidden_dim, whatever the layer's type,
// so qkv_proj / o_proj buffers sit on the recurrent layers too (Qwen3.5's qkv_proj B with the output
// gate: 2 x heads). The mixers' modules (get_stacked_multiply: in_proj_qkvz 4, in_proj 2):
//   Qwen3.5 (models/qwen3_5.py Qwen3_5ForCausalLM.get_hidden_dim, supported_lora_modules):
//     in_proj_qkvz A 4R x hidden, B (2 x key + 2 x value) / tp x R; out_proj A R x value / tp, B hidden x R
//   Nemotron-H (models/nemotron_h.py NemotronHForCausalLM.get_hidden_dim, supported_lora_modules; d = d_inner):
//     in_proj A 2R x hidden, B 2d / tp x R; out_proj A R x d / tp, B hidden x R; the MLP by layer type
//     (a mamba layer's gate_up_proj B 2d / tp, the others' intermediate_size); "all" adds up_proj
//     (A hidden, B intermediate / tp) and fc1 / fc2_latent_proj (replicated, hidden -> hidden)
//   any other class (Qwen3-Next, Granite 4.0-H, Falcon-H1, ...: no get_hidden_dim): the default
//     raises NotImplementedError for in_proj_qkvz / in_proj / out_proj, so naming them, or "all" (which
//     finds them in the model), is refused (InputError naming the flag), as SGLang fails to start.
// "all" adds embed_tokens and lm_head on every model (lora_manager.py init_lora_shapes:
// target_modules.update(EMBEDDING_NAMES)).
// Nothing else comes out of the pool: it is allocated once, so the token pool gets that much less.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engines/vllm_lora.h"
#include "model/model.h"

namespace vc {

struct SglangLoraSettings {
  uint64_t max_loras_per_batch = 0;        // slots; 0: LoRA off (no --enable-lora, no --lora-paths)
  std::optional<uint64_t> max_lora_rank;   // --max-lora-rank; none: the adapters' largest r
  // normalized (qkv_proj, o_proj, gate_up_proj, down_proj, embed_tokens, lm_head, and the latent
  // attention's fused_qkv_a_proj_with_mqa, q_b_proj, kv_b_proj, indexer.wq_b, indexer.wk,
  // indexer.weights_proj, and the recurrent mixers' in_proj_qkvz, in_proj, out_proj); empty: not given
  std::set<std::string> target_modules;
  bool all_modules = false;                // --lora-target-modules all: every LoRA module the model has
  std::vector<std::string> unmodelled_modules;  // --lora-target-modules names outside those (conv1d, in_proj_ba, ...)
  uint64_t adapters = 0;                   // --lora-paths entries
  std::vector<std::string> adapter_paths;  // each entry's path (NAME=PATH, PATH or {"lora_path": ...}), as written
  // What the adapters' adapter_config.json files gave (engines/sglang_lora_adapters.h), for the notes.
  bool rank_from_adapters = false, targets_from_adapters = false;
  uint64_t unread_adapters = 0;            // adapters whose config could not be read (the targets then assumed)
};

// SGLang's default slots (server_args.py max_loras_per_batch = 8).
inline constexpr uint64_t kSglangDefaultLorasPerBatch = 8;

// The pool's rank: --max-lora-rank, or the adapters' largest r once read; InputError naming
// --max-lora-rank when neither is known (SGLang itself reads the adapters; we cannot guess).
uint64_t sglang_lora_rank(const SglangLoraSettings& settings);

inline constexpr const char* kSglangLoraSource =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/mem_pool.py (LoRAMemoryPool.init_buffers, get_lora_A_shape, get_lora_B_shape); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/utils.py (get_hidden_dim, get_stacked_multiply, auto_detect_lora_target_modules); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/lora_manager.py (init_lora_shapes: all adds embed_tokens and lm_head); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/qwen3_5.py and "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/nemotron_h.py (get_hidden_dim, supported_lora_modules)";

// --lora-target-modules as SGLang normalizes it (lora/utils.py get_normalized_target_modules):
// q/k/v_proj -> qkv_proj, gate/up_proj -> gate_up_proj, q_a_proj / kv_a_proj_with_mqa ->
// fused_qkv_a_proj_with_mqa, wq_b / wk / weights_proj -> indexer.*, in_proj_qkv / _q / _k / _v / _z
// -> in_proj_qkvz (in_proj and out_proj kept); "all" (alone) -> every module SGLang knows that the model
// has (auto_detect_lora_target_modules: the latent projections and the indexer on an MLA model, the
// mixers' on Qwen3.5 and Nemotron-H) and embed_tokens / lm_head; names of other modules are kept in
// unmodelled_modules. InputError for none, or for "all"
// beside other names, as SGLang refuses them.
void set_sglang_lora_targets(SglangLoraSettings& settings, const std::vector<std::string>& names);

// "LoRA memory pool (8 slots of rank 16)": the line's label.
std::string sglang_lora_label(const SglangLoraSettings& settings);

// The pool on one rank of --tp `tp`, at `value_bytes` per value. InputError naming
// --lora-target-modules (--lora-paths when the adapters gave the modules) where SGLang cannot size a
// module it would allocate: a recurrent mixer's in_proj_qkvz / in_proj / out_proj on a class whose
// get_hidden_dim lacks it, or "all" on such a hybrid (the header above).
LoraSlots sglang_lora_pool(const Model& model, const SglangLoraSettings& settings, uint64_t tp, uint64_t value_bytes);

}  // namespace vc
