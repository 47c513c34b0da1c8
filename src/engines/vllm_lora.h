#pragma once
// vLLM's LoRA slots (`--enable-lora --max-loras N --max-lora-rank R`): at load time the LoRA model
// manager wraps every linear module of the decoder and preallocates, per module and per TP rank,
// stacked A and B buffers for N adapters of rank R at the model's dtype
// (vllm/lora/layers/base_linear.py create_lora_weights; column_parallel_linear.py for the packed
// qkv_proj and gate_up_proj; fused_moe.py for the experts). They are allocated with the weights,
// before the profile run, so they come out of the KV cache's share. Per slot and rank:
//   qkv_proj      A 3 x R x hidden, B (q + k + v on the rank) x R
//   o_proj        A R x (q heads x v head dim / tp), B hidden x R
//   gate_up_proj  A 2 x R x hidden, B 2 x (width / tp) x R, down_proj A R x (width / tp), B hidden x R
//   MoE experts   the same per expert (w13, w2 on every rank: TP shards the width), router A R x hidden, B experts x R
// Multi-head latent attention (DeepseekV2MLAAttention, vllm/model_executor/models/deepseek_v2.py;
// DeepSeek-V2/V3, Kimi K2, GLM-5): every linear module is wrapped too (vllm/lora/utils.py
// get_supported_lora_modules: "all linear layers support LoRA"), per slot and rank:
//   fused_qkv_a_proj (q_a_proj + kv_a_proj_with_mqa, packed; whole on every rank, disable_tp)
//                 A 2 x R x hidden, B (q_lora_rank + kv_lora_rank + rope) x R
//   q_b_proj      A R x q_lora_rank, B (heads / tp x (nope + rope)) x R
//   without q_lora_rank: q_proj A R x hidden, B (heads / tp x (nope + rope)) x R, and
//   kv_a_proj_with_mqa (ReplicatedLinear) A R x hidden, B (kv_lora_rank + rope) x R
//   kv_b_proj     A R x kv_lora_rank, B (heads / tp x (nope + v)) x R; o_proj A R x (heads / tp x v), B hidden x R
// The DSA indexer (Indexer in deepseek_v2.py; DeepSeek-V3.2, GLM-5): three ReplicatedLinear, whole
// on every rank (ReplicatedLinearWithLoRA): wq_b A R x q_lora_rank, B (index heads x index dim) x R;
// wk A R x hidden, B index dim x R; weights_proj A R x hidden, B index heads x R.
// The recurrent mixers, every projection a LinearBase and so wrapped: the conv1d weights too, a
// ColumnParallelLinear of input conv_kernel; a MergedColumnParallelLinear gets one A per output slice
// (MergedColumnParallelLinearWithLoRA with a 2-name packed_modules_mapping entry, the VariableSlice
// wrapper for 3 slices or more), one A in all when the mapping names it alone with fewer than 3 slices
// (ColumnParallelLinearWithLoRA); B holds every slice's share of the rank.
//   Gated DeltaNet (layers/mamba/gdn; k = key heads x key dim, v = value heads x value dim, n value heads):
//     in_proj_qkvz A R x hidden (Qwen3-Next: one interleaved slice) or 4 x R x hidden (Qwen3.5: q, k, v, z),
//                   B (2k + 2v) / tp x R; in_proj_ba A 1 or 2 x R x hidden, B 2n / tp x R;
//     conv1d A R x kernel, B (2k + v) / tp x R; out_proj A R x v / tp, B hidden x R
//   Mamba2 (MambaMixer2; d = heads x head dim, g groups of state s): with tp dividing the groups,
//     in_proj 5 slices (z, x, B, C, dt): A 5 x R x hidden, B (2d + 2gs + heads) / tp x R; conv1d 3 slices:
//     A 3 x R x kernel, B (d + 2gs) / tp x R. One group on tp > 1 ranks: plain ColumnParallelLinear with
//     the group copied to every rank (tp groups): in_proj A R x hidden, B (2d + heads) / tp + 2s;
//     conv1d A R x kernel, B d / tp + 2s. out_proj A R x d / tp, B hidden x R.
//   Mamba1 (MambaMixer; d = d_inner): in_proj A R x hidden, B 2d / tp x R; conv1d A R x kernel, B d / tp;
//     x_proj A R x d / tp, B (dt_rank + 2 state); dt_proj A R x dt_rank, B d / tp; out_proj A R x d / tp, B hidden
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace vc {

struct LoraSlotSettings {
  uint64_t max_loras = 0;       // adapters resident at once; 0: LoRA off (no --enable-lora)
  uint64_t max_lora_rank = 16;  // --max-lora-rank (vLLM's default 16)
  // --lora-modules: the adapters vLLM loads at start (paths), read for the rank check
  // (vllm_lora_adapters.h); what the reading found, for the notes.
  std::vector<std::string> adapter_paths;
  uint64_t adapters_checked = 0, adapters_unread = 0, largest_adapter_rank = 0;
};

struct LoraSlots {
  uint64_t bytes = 0;  // on one rank
  std::string formula;
  std::string assumption;  // what is not counted
};

// The A + B values per unit of rank and adapter slot that vLLM and SGLang both allocate for one
// layer on one TP rank (SGLang's lora/mem_pool.py shapes match vLLM's):
//   qkv_proj  A 3 x hidden, B (q + k + v heads on the rank) x head dims; o_proj A q x v dim, B hidden
//   a gated MLP of width w: gate_up A 2 x hidden, B 2 x w / tp; down A w / tp, B hidden
// Heads on a rank are its share, or one replicated head when there are fewer heads than ranks.
struct AttentionLoraValues {
  uint64_t qkv = 0, o = 0;
};
AttentionLoraValues attention_lora_values(uint64_t hidden, const AttentionSpec& attention, uint64_t tp);
// The same for one multi-head latent attention layer (the MLA shapes above), module by module:
// qkv_a is fused_qkv_a_proj (or, without q_lora_rank, kv_a_proj_with_mqa) and q_b is q_b_proj (or
// q_proj); all 0 when the projection widths were not read (a GGUF's MLA: nope_dim / value_dim unknown).
struct LatentLoraValues {
  uint64_t qkv_a = 0, q_b = 0, kv_b = 0, o = 0;
  uint64_t total() const { return qkv_a + q_b + kv_b + o; }
};
LatentLoraValues latent_attention_lora_values(uint64_t hidden, const AttentionSpec& attention, uint64_t tp);
// The same for one recurrent mixer (the shapes above); 0 when its geometry was not read (a GGUF's)
// or the family has no rule here (KDA: vLLM refuses LoRA for Kimi Linear). `split_gdn`: the Qwen3.5
// layout (separate q, k, v, z and b, a slices), not Qwen3-Next's interleaved one.
uint64_t recurrent_mixer_lora_values(uint64_t hidden, const AttentionSpec& mixer, uint64_t tp, bool split_gdn);
// The DSA indexer's wq_b, wk and weights_proj (whole on every rank); 0 without an indexer.
struct IndexerLoraValues {
  uint64_t wq_b = 0, wk = 0, weights_proj = 0;
  uint64_t total() const { return wq_b + wk + weights_proj; }
};
IndexerLoraValues indexer_lora_values(uint64_t hidden, const AttentionSpec& attention);
struct MlpLoraValues {
  uint64_t gate_up = 0, down = 0;
  uint64_t total() const { return gate_up + down; }
};
MlpLoraValues gated_mlp_lora_values(uint64_t hidden, uint64_t width, uint64_t tp);
// An MLP without a gate (Nemotron-H's squared ReLU; NemotronHMLP up_proj ColumnParallelLinear,
// down_proj RowParallelLinear; its non-gated experts: FusedMoEWithLoRA w13 of one slice):
//   up A hidden, B width / tp; down A width / tp, B hidden
MlpLoraValues plain_mlp_lora_values(uint64_t hidden, uint64_t width, uint64_t tp);

// --max-lora-rank as vLLM accepts it (vllm/config/lora.py MaxLoRARanks: 1, 8, 16, 32, 64, 128,
// 256, 320, 512); --max-loras from 1 to 1,024 (vLLM sets no bound; ours keeps the figure finite).
uint64_t parse_max_lora_rank(const std::string& text, const std::string& flag);
uint64_t parse_max_loras(const std::string& text, const std::string& flag);

// vLLM refuses --enable-lora at start for a model class that implements no SupportsLoRA
// (vllm/v1/worker/lora_model_runner_mixin.py load_lora_model: "{cls} does not support LoRA yet."):
// the message for such a model (Kimi Linear, Falcon, GPT-NeoX, GPT-2, read from each class's bases
// in vllm/model_executor/models/), or nullopt.
std::optional<std::string> vllm_lora_refusal(const Model& model);

// The slots on rank 0 of tp x pp (its ceil(layers / pp) layers), at `value_bytes` per value.
LoraSlots vllm_lora_slots(const Model& model, const LoraSlotSettings& settings, uint64_t tp, uint64_t pp, uint64_t value_bytes);

}  // namespace vc
