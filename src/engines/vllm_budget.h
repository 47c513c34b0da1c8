#pragma once
// vLLM's memory budget per GPU (vllm/v1/worker/gpu_worker.py determine_available_memory): it may
// use gpu_memory_utilization x the card; from that it takes the weights on this rank, the torch
// peak of the profile run (gpu_model_runner.py profile_run: a forward pass over
// max_num_batched_tokens, then the dummy sampler over max_num_seqs rows), and the non-torch
// memory (CUDA context, NCCL buffers). What is left is the KV cache, turned into tokens by vllm_kv.
#include <cstdint>
#include <string>
#include <vector>

#include "engines/serving_cpu_offload.h"
#include "engines/vllm_data_parallel.h"
#include "engines/vllm_deepstack.h"
#include "engines/vllm_encoder.h"
#include "engines/vllm_lora.h"
#include "engines/vllm_profile.h"
#include "engines/vllm_rope.h"
#include "model/model.h"

namespace vc {

struct VllmBudgetSettings {
  uint64_t card_bytes = 0;              // total GPU memory as vLLM reports it
  double gpu_memory_utilization = 0.9;  // --gpu-memory-utilization
  uint64_t weight_bytes = 0;            // the whole checkpoint as loaded (loaded_weight_bytes at --dtype)
  uint64_t max_num_batched_tokens = 0;  // --max-num-batched-tokens; 0: vLLM's default for the card
  uint64_t max_num_seqs = 0;            // --max-num-seqs; 0: vLLM's default for the card
  std::string quantization;             // --quantization: "" (as the checkpoint stores it) or fp8 (online)
  LoraSlotSettings lora;                // --enable-lora --max-loras --max-lora-rank (vllm_lora.h)
  uint64_t cpu_offload_cap = 0;         // --cpu-offload-gb as bytes, int(N x 1024**3) (serving_cpu_offload.h); 0: off
  VllmOffloadSettings offload;          // --offload-backend, --cpu-offload-params, the prefetch flags (serving_cpu_offload.h)
  uint64_t cpu_offloaded = 0;           // of rank 0's weights, what the offloader moves to host memory (the engine walks the layers)
  uint64_t offload_staging = 0;         // the prefetch offloader's static GPU buffers on rank 0 (allocated after the weights are measured)
  VllmSettings kv;                      // block size, dtypes, tp, pp, max_model_len
  // --data-parallel-size with --enable-expert-parallel on an MoE (vllm_data_parallel.h): DP ranks of
  // kv.tensor_parallel (1) each, the routed experts over all of them; 1: no data parallel.
  uint64_t data_parallel = 1;
  VllmMmLimits mm_limits;               // --limit-mm-per-prompt (vllm_encoder.h)
};

// A pipeline stage after the first (rank 0 is VllmBudget's own figures): what it holds and the
// blocks its own free memory gives (vllm_pipeline.h).
struct VllmStageBudget {
  std::size_t stage = 0;
  uint64_t weights = 0;          // its layers, the output head on the last, rank 0's built extras (rotary tables)
  uint64_t activation = 0;       // the forward pass with the boundary buffers; the last stage's dummy sampler
  uint64_t non_kv_total = 0;
  uint64_t available_kv = 0;
  VllmKv kv;                     // its cache at its available memory (bytes per token over its layers)
};

struct VllmBudget {
  uint64_t requested = 0;        // "requested memory": utilization x card
  uint64_t weights = 0;          // rank 0: a TP share; with pipeline stages the embedding + the first stage's layers;
                                 // less what --cpu-offload-gb moved to host memory ("Model loading took" counts the GPU only);
                                 // the rotary tables (`rope`) and the DeepStack buffers (`deepstack`) included
  VllmRope rope;                 // the rotary cos/sin tables built with the model, whole on the rank (vllm_rope.h)
  VllmDeepstack deepstack;       // Qwen3-VL's DeepStack input buffers built with the model, whole on the rank (vllm_deepstack.h)
  uint64_t mla_whole = 0;        // MLA's A-projections and A-layernorms on the rank's layers, whole on every TP rank
  uint64_t mla_extra = 0;        // what of them the rank holds beyond its even share (in `weights`; 0 at TP 1)
  uint64_t mtp_left_out = 0;     // the checkpoint's MTP layers, which the target model does not build (not in `weights`)
  VllmExpertShard shard;         // data parallel with expert parallel: rank 0's routed experts (ranks 1: none)
  uint64_t dp_gathered = 0;      // data parallel: the MoE layer's gathered input and output beyond the rank's own rows
  LoraSlots lora;                // LoRA slots on rank 0, allocated with the weights (0 B without --enable-lora)
  uint64_t max_num_batched_tokens = 0;  // as resolved (given, or the card's default)
  uint64_t max_num_seqs = 0;
  uint64_t forward_peak = 0;     // the profile forward pass, without the MoE workspace
  uint64_t sampler_peak = 0;     // hidden states kept + the dummy sampler over max_num_seqs rows (0 on rank 0 of a pipeline)
  uint64_t moe_workspace = 0;    // fused-MoE workspaces, kept allocated
  uint64_t activation = 0;       // "torch peak memory increase"
  uint64_t non_torch = 0;        // "non-torch forward increase memory"
  uint64_t offload_staging = 0;  // the prefetch offloader's StaticBufferPool (serving_cpu_offload.h)
  uint64_t non_kv_total = 0;     // "Total non KV cache memory"
  uint64_t available_kv = 0;     // rank 0's ("Available KV cache memory"); 0 when the rest does not fit
  uint64_t kv_allocated = 0;     // rank 0's cache tensors: available_kv, or the smallest stage's blocks at rank 0's block bytes
  std::vector<VllmStageBudget> stages;  // pipeline stages after the first
  std::size_t kv_stage = 0;      // the stage whose blocks bound the pool (0: rank 0's own)
  uint64_t own_blocks = 0;       // the blocks rank 0's own free memory holds
  uint64_t cuda_graphs = 0;      // graphs captured after the KV cache ("Graph capturing finished ... took"), outside the budget in vLLM 0.19
  VllmKv kv;                     // the pool: its tokens and concurrency are the smallest stage's
};

// The checkpoint's bytes as vLLM loads them with --quantization fp8 (online: linear layers at one
// byte a weight, embeddings, head and norms at 16 bits); unchanged for "" (the checkpoint's own).
uint64_t vllm_quantized_weight_bytes(const Model& model, uint64_t loaded_bytes, const std::string& quantization);

VllmBudget vllm_budget(const Model& model, const VllmBudgetSettings& settings);

// vLLM's multi-head latent attention (models/deepseek_v2.py DeepseekV2MLAAttention) builds the
// KV A-projection kv_a_proj_with_mqa (hidden x (kv_lora_rank + rope dim)) as a ReplicatedLinear, or
// with a query rank the fused q/kv A-projection (DeepSeekV2FusedQkvAProjLinear, hidden x (q_lora_rank
// + kv_lora_rank + rope dim), replicated too), and the RMSNorms kv_a_layernorm (kv_lora_rank) and
// q_a_layernorm (q_lora_rank): every TP rank holds them whole. Their bytes on the first `layers`
// layers: the projections at `linear_bytes_per_param` (x 1/1000, so that a quantized checkpoint's
// bytes per weight with its scales can be given), the norms at `norm_bytes`.
uint64_t vllm_mla_whole_bytes(const Model& model, uint64_t layers, uint64_t linear_milli_bytes, uint64_t norm_bytes);

}  // namespace vc
