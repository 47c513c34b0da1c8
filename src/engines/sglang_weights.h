#pragma once
// SGLang's weights on one GPU as its log prints them ("Load weight end ... mem usage"): the fall in
// free device memory over load_model (model_runner.py: get_available_gpu_memory, which empties
// torch's cache and reads torch.cuda.mem_get_info, before and after), so what counts is the
// segments PyTorch's caching allocator reserved for the rank's tensors, not their bytes
// (engines/torch_caching_allocator.h). Three parts beyond an even share of the checkpoint:
//   - tensors SGLang keeps whole on every rank, where an even share holds 1/tp of them: the
//     layer norms, the MoE router (ReplicatedLinear / MoEGate), and in multi-head latent attention
//     (models/deepseek_v2.py DeepseekV2AttentionMLA) fused_qkv_a_proj_with_mqa (q_a_proj and
//     kv_a_proj_with_mqa fused: hidden x (q_lora_rank + kv_lora_rank + qk_rope_head_dim)), or
//     kv_a_proj_with_mqa alone without query compression, and q_a_layernorm and kv_a_layernorm;
//     q_b_proj (or q_proj), kv_b_proj and o_proj split over the TP ranks; the vocabulary padded to
//     64 rows (VocabParallelEmbedding) before it is split; a KV head replicated where a rank would
//     hold less than one (QKVParallelLinear);
//   - MLA: post_load_weights keeps w_kc and w_vc, contiguous 16-bit copies of the rank's kv_b_proj,
//     beside kv_b_proj itself (the MHA prefill path still uses it);
//   - the RoPE cos/sin cache (layers/rotary_embedding/base.py RotaryEmbedding): max_position_embeddings
//     x rotary dim x 4 B (fp32 on CUDA, HIP and XPU), built on the GPU while the model is created,
//     one per rotary dim (get_rope shares an instance over the layers through _ROPE_DICT); the rotary
//     dim is taken as the head dim (MLA: qk_rope_head_dim): partial rotary factors and the longer
//     caches of linear / dynamic scaling are not read. Its temporaries (t, freqs, cos, sin) are
//     replayed and freed: a later tensor may take their blocks;
//   - Kimi K2.5's vision tower (models/kimi_k25.py): its MLP, norms, patch embedding, positions and
//     projector whole on every rank, its attention split over the TP ranks;
//   - the caching allocator's rounding: each tensor of 10 MiB and more in its own segment rounded
//     up to 2 MiB, smaller ones packed into 20 MiB and 2 MiB segments.
// The rank's tensors are laid out from the model's geometry in the order SGLang's model classes
// create them (embedding, per layer attention then feed-forward then its two norms, final norm,
// output head; the w_kc / w_vc copies last), at the checkpoint's bytes a parameter of each class;
// a quantized tensor is two allocations, its values (1 B each at 8 bits and more, 1/2 B at 4 to 8)
// then its scales. Only the first pipeline stage's rank is laid out. The allocator is PyTorch's
// with its defaults (no PYTORCH_CUDA_ALLOC_CONF), CUDA's or ROCm's (hipified from the same file).
// Layers of other kinds (recurrent mixers, sparse-attention indexers) count as their even share.
// --enable-dp-attention (attention_dp = --dp-size > 1): the TP ranks form attention_dp groups of
// attn_tp_size = tp / dp ranks (layers/dp_attention.py compute_dp_attention_world_info). The model
// classes written for it (models/deepseek_v2.py: DeepSeek V2 / V3 / V3.2, Kimi K2, and GLM-5's
// GlmMoeDsaForCausalLM, its subclass; models/qwen2_moe.py and qwen3_moe.py; models/qwen3.py, the dense
// Qwen3, sglang PR #7681; models/llama.py, sglang PR #15268, with Mistral and Phi-3 its subclasses;
// models/glm4_moe.py; models/minimax_m2.py, sglang PR #20067; models/gpt_oss.py)
// build their attention projections on the attention-TP group (tp_rank=attn_tp_rank,
// tp_size=attn_tp_size: QKVParallelLinear / o_proj,
// MLA's q_b_proj, kv_b_proj, o_proj and the w_kc / w_vc copies) and their embedding over that group
// too (VocabParallelEmbedding(use_attn_tp_group=is_dp_attention_enabled()), sglang PR #17403; whole
// before it, and still whole in gpt-oss); the MLP (Qwen3's Qwen2MLP takes no tp override), the experts and the output head
// (ParallelLMHead without --enable-dp-lm-head, which puts it on the attention group) stay split over
// all tp ranks. Other classes are refused, Qwen2 among them (models/qwen2.py's
// Qwen2Attention stays on the whole TP group while Qwen2Model's embedding follows the attention group).
// --moe-dense-tp-size 1 (the only value SGLang accepts, server_args.py): enable_moe_dense_fully_dp()
// (layers/communicator.py) makes DeepseekV2DecoderLayer and Glm4MoeDecoderLayer build their dense MLP
// layers (the first first_k_dense_replace) with tp_rank 0, tp_size 1: whole on every rank. The shared experts and the
// MLPs of the other classes read (Qwen2MLP, LlamaMLP, Qwen3MoeMLP: no tp override) keep tp; a model
// with dense MLP layers in a class not read is refused.
#include <cstdint>
#include <string>
#include <vector>

#include "engines/serving_cpu_offload.h"
#include "model/model.h"
#include "plan/split.h"

namespace vc {

struct SglangRankWeights {
  uint64_t even_share = 0;          // the loaded checkpoint / (tp x pp)
  uint64_t replicated_extra = 0;    // whole or padded tensors on this rank beyond their 1/tp share
  uint64_t mla_copies = 0;          // w_kc + w_vc (16-bit copies of this rank's kv_b_proj)
  uint64_t rope_cache = 0;          // the RoPE cos/sin cache(s), fp32, whole on every rank
  uint64_t tower_extra = 0;         // of replicated_extra: the vision tower kept whole (Kimi K2.5)
  uint64_t allocator_overhead = 0;  // reserved - requested over the rank's laid-out tensors
  uint64_t attention_tp = 0;        // ranks the attention projections are split over (tp; tp / dp with DP attention)
  uint64_t embedding_tp = 0;        // ranks the embedding is split over (tp; tp / dp with DP attention on the attention group)
  uint64_t mixer_tp = 0;            // ranks the recurrent mixers (Qwen3-Next's and Qwen3.5's Gated DeltaNet) are split over, as attention_tp; 0: none laid out
  uint64_t dense_mlp_tp = 0;        // ranks the dense MLP layers are split over (tp; 1 with --moe-dense-tp-size 1 in DeepSeek V2 / GLM-4.5 classes)
  uint64_t head_tp = 0;             // ranks the output head is split over (tp; tp / dp with --enable-dp-lm-head; 0: no head laid out)
  uint64_t total = 0;               // what "mem usage" would print
  CpuOffload offload;               // --cpu-offload-gb: the decoder layers' parameters moved to host memory (not in total)
  std::vector<uint64_t> tensors;    // the rank's live tensor bytes, in creation order (the temporaries left out)
};

// Whether SGLang's model class for `model` builds its attention on the attention-TP group under
// --enable-dp-attention (true); InputError naming --enable-dp-attention and the classes accepted for
// a class not read or not written for it.
bool sglang_attention_on_dp_group(const Model& model);

// The same question without the refusal: whether the class was read as building its attention on the
// attention-TP group.
bool sglang_dp_attention_read(const Model& model);

// plan's ep split on SGLang over `ranks` GPUs (more than one): DP attention over every rank (--dp N
// --enable-dp-attention, attention whole on each) for a class read for it; false otherwise, where
// the experts go over the TP ranks (--ep N) with attention on TP. The engine's answer
// (engines/engine.cpp engine_run_for) and plan's command (plan/engine_command.cpp) both follow it.
bool sglang_ep_split_runs_dp_attention(const Model& model, SplitMode split, uint64_t ranks);

// For a class on the attention-TP group: whether its embedding follows that group
// (VocabParallelEmbedding(use_attn_tp_group=is_dp_attention_enabled())), or is whole on every rank
// (false: gpt-oss's enable_tp=not is_dp_attention_enabled()).
bool sglang_dp_embedding_on_group(const Model& model);

// Whether --enable-dp-lm-head puts the class's output head on the attention-TP group
// (ParallelLMHead(use_attn_tp_group=enable_dp_lm_head)); false: MiniMax-M2, whose head keeps tp.
bool sglang_dp_lm_head_on_group(const Model& model);

// The ranks `model`'s dense MLP layers are split over at tensor parallel `tp` with
// --moe-dense-tp-size (0: not given; 1: SGLang's only other value): 1 for DeepseekV2DecoderLayer's
// dense layers under 1, else tp. InputError naming --moe-dense-tp-size for another value, or for 1
// with a model whose dense MLP layers are in a class not read.
uint64_t sglang_dense_mlp_tp(const Model& model, uint64_t tp, uint64_t moe_dense_tp_size);

// tier_bytes: the checkpoint as resolved (the native tier, or another the scenario names); dtype:
// --dtype (16-bit weights load at its width, as loaded_weight_bytes has it); attention_dp: --dp-size
// under --enable-dp-attention (1: off), dividing tp.
// moe_dense_tp_size: --moe-dense-tp-size (0: not given), as sglang_dense_mlp_tp reads it.
// dp_lm_head: --enable-dp-lm-head, the output head (ParallelLMHead(use_attn_tp_group=True), Llama's
// too) split over the attention group's tp / dp ranks.
// offload_cap: the --cpu-offload-gb cap in bytes (serving_cpu_offload.h): each decoder layer is
// created on the GPU, then the offloader moves its parameters while under the cap and frees them on
// the GPU before the next layer is created, so the allocator replays their release. vLLM's model
// classes create the decoder layers' parameters in the same order (attention, MLP or experts, the
// two norms), so its offload reads this layout's walk too.
SglangRankWeights sglang_rank_weights(const Model& model, uint64_t tier_bytes, uint64_t tp, uint64_t pp, const std::string& dtype,
                                      uint64_t attention_dp = 1, bool dp_lm_head = false, uint64_t offload_cap = 0,
                                      uint64_t moe_dense_tp_size = 0);
// The same with vLLM's whole offload rule (a --cpu-offload-params filter, the prefetch backend):
// the decoder layers' parameters carry vLLM's names within the layer (models/llama.py
// LlamaDecoderLayer: self_attn.qkv_proj.weight, self_attn.o_proj.weight, mlp.gate_up_proj.weight,
// mlp.down_proj.weight, input_layernorm.weight, post_attention_layernorm.weight; MoE blocks
// mlp.gate.weight, mlp.experts.w13_weight, mlp.experts.w2_weight, mlp.shared_experts.*; MLA
// (models/deepseek_v2.py) self_attn.fused_qkv_a_proj / q_a_layernorm / q_b_proj or q_proj /
// kv_a_proj_with_mqa, kv_b_proj, o_proj, kv_a_layernorm), a quantized tensor's scales NAME_scale.
SglangRankWeights sglang_rank_weights(const Model& model, uint64_t tier_bytes, uint64_t tp, uint64_t pp, const std::string& dtype,
                                      uint64_t attention_dp, bool dp_lm_head, const OffloadRule& offload, uint64_t moe_dense_tp_size = 0);

// One wording of the weights line for the profile (sglang_profile.h) and the answer without a card.
std::string sglang_weights_formula(const SglangRankWeights& w, const std::string& dtype, uint64_t tp, uint64_t pp);
extern const char* const kSglangWeightsAssumption;
extern const char* const kSglangWeightsSource;

}  // namespace vc
