#pragma once
// SGLang's memory on each GPU, as its server sizes it at start-up (docs/engines.md, SGLang):
//   mem_fraction_static (given, or chosen from the card, chunked prefill, CUDA graph batch and
//   TP in server_args.py _handle_gpu_memory_settings) is the share of the memory free before the
//   weights load that may hold weights + the token (KV) pool; the rest is left for activations and
//   CUDA graphs. Token pool = free after weights - free before weights x (1 - mem_fraction_static),
//   divided by the bytes a token takes over all layers (model_runner.py profile_max_num_token,
//   model_executor/pool_configurator.py). Sliding-window layers get a pool of their own only on
//   SGLang's hybrid SWA list (Llama 4, gpt-oss, MiMo V2, Step 3.5, Gemma 4: configs/model_config.py
//   is_hybrid_swa_model); elsewhere (Gemma 2 and 3, Mistral, ...) they hold every token like full
//   layers. A DSA model's fp8 pool is sized with the latent priced unpacked (708 B a layer) and then
//   allocated packed (788 B). With LoRA on, its memory pool (sglang_lora.h) is allocated
//   after the weights and before the token pool, so it comes out of the token pool's share.
// Speculative decoding (EAGLE, EAGLE3, NEXTN, STANDALONE): the chosen mem_fraction_static keeps 2
//   GiB more out of the static share (6 GiB for STANDALONE); the target's bytes a token are scaled
//   by (1 + draft layers / target layers), so its pool leaves room for the draft's cache; the
//   draft's weights load after the target's pool, out of the rest, and its pool holds the target's
//   tokens + max_num_reqs x (steps x top-k + draft tokens) + 100 (model_runner.py draft_runner_cache_size);
//   max_running_requests (so max_num_reqs) is 48 unless given, NGRAM too (arg_groups/speculative_hook.py).
// Hybrid recurrent models (Mamba2, Gated DeltaNet, KDA layers beside attention) first give the
//   state pool its share: max_mamba_cache_size request slots = the rest x r / (1 + r) (r =
//   --mamba-full-memory-ratio, 0.9) / one request's state (conv state in bf16, SSM state in
//   --mamba-ssm-dtype, float32 by default), unless --max-mamba-cache-size (or, with the radix cache
//   disabled, --max-running-requests) fixes the slots; the attention layers' pool gets what is left
//   (model_runner_kv_cache_mixin.py _handle_max_mamba_cache, configs/mamba_utils.py).
// DP attention (--enable-dp-attention --dp-size N): the tp ranks form N attention groups of tp / N
//   ranks, each with its own scheduler and token pool (one DP rank's figures are what this prints):
//   the pool's KV heads are split over the group's tp / N ranks (model_runner.py: head_num =
//   get_num_kv_heads(get_attention_tp_size())), the weights follow (sglang_weights.h), the chosen
//   mem_fraction_static keeps cuda_graph_max_bs x N x 3 MiB more out (x 4.5 above batch 300:
//   server_args.py, "DP attention needs more padding"), chunked_prefill_size is divided by N after
//   that choice (_handle_data_parallelism), and --max-running-requests is shared by the N pools
//   (max_running_requests // dp_size per DP rank).
// Before the weights each rank holds its CUDA context and, with more than one rank, the NCCL
//   communicators SGLang's model runner creates (init_torch_distributed); how much those take
//   depends on how the GPUs are joined (NCCL over NVLink opens many more channels than over
//   PCIe) and on the platform (ROCm's RCCL and aiter's custom all-reduce take more), and SGLang's
//   own custom all-reduce runs only where its rule allows it
//   (distributed/device_communicators/custom_all_reduce.py).
// A pure function: model + settings + card -> lines, pool size, max_total_num_tokens.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engines/serving_cpu_offload.h"
#include "engines/sglang_lora.h"
#include "estimate/estimate.h"
#include "model/model.h"
#include "plan/hardware.h"

namespace vc {

struct SglangSettings {
  uint64_t card_bytes = 0;                       // total memory of one GPU as torch reports it
  std::optional<double> mem_fraction_static;     // --mem-fraction-static; chosen when absent
  uint64_t tensor_parallel = 1;                  // --tp
  uint64_t pipeline_parallel = 1;                // --pp
  uint64_t attention_dp = 1;                     // --dp-size under --enable-dp-attention (1: off); divides --tp
  bool enable_dp_lm_head = false;                // --enable-dp-lm-head: the output head over the attention group
  uint64_t moe_dense_tp_size = 0;                // --moe-dense-tp-size (0: not given; SGLang accepts only 1): DeepSeek V2 dense MLPs whole
  GpuLink gpu_link = GpuLink::Unknown;           // how the ranks' GPUs are joined (the box's device)
  bool rocm = false;                             // AMD GPUs: SGLang's ROCm build (RCCL, aiter's all-reduce)
  bool disable_custom_all_reduce = false;        // --disable-custom-all-reduce
  std::string dtype = "auto";                    // --dtype: auto (16-bit), float16, bfloat16, float32
  std::string kv_cache_dtype = "auto";           // --kv-cache-dtype: auto, bf16, bfloat16, fp8_e4m3, fp8_e5m2
  uint64_t context_length = 0;                   // --context-length; 0: the model's maximum
  std::optional<uint64_t> max_running_requests;  // --max-running-requests
  std::optional<int64_t> chunked_prefill_size;   // --chunked-prefill-size (-1 disables chunking)
  std::optional<uint64_t> cuda_graph_max_bs;     // --cuda-graph-max-bs
  std::optional<uint64_t> max_total_tokens;      // --max-total-tokens: caps the pool
  uint64_t page_size = 1;                        // --page-size
  double swa_full_tokens_ratio = 0.8;            // --swa-full-tokens-ratio (window layers' pool / full pool)
  uint64_t weight_bytes = 0;                     // the whole checkpoint as loaded
  std::optional<uint64_t> free_before_weights;   // "Load weight begin. avail mem" when a log printed it
  std::optional<uint64_t> loaded_weights;        // "Load weight end. ... mem usage" when a log printed it
  // Hybrid recurrent models: the state pool.
  std::optional<uint64_t> max_mamba_cache_size;  // --max-mamba-cache-size: request slots
  double mamba_full_memory_ratio = 0.9;          // --mamba-full-memory-ratio
  std::string mamba_ssm_dtype = "float32";       // --mamba-ssm-dtype: float32 or bfloat16
  bool disable_radix_cache = false;              // --disable-radix-cache
  SglangLoraSettings lora;                       // --enable-lora / --lora-paths: the LoRA pool (sglang_lora.h)
  uint64_t cpu_offload_cap = 0;                  // --cpu-offload-gb as bytes, int(N x 1024**3) (serving_cpu_offload.h); 0: off
  // Speculative decoding, as sglang() fills it from the drafter (engines/serving_speculative.h).
  std::string speculative_algorithm;             // "": off; EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM
  uint64_t draft_weights = 0;                    // the drafter's weights on this GPU (0: in the target's, or none)
  std::vector<LayerConfig> drafter_layers;       // the drafter's attention layers (their count: eagle_draft_num_layers)
  uint64_t spec_steps = 0, spec_topk = 0, spec_draft_tokens = 0;
};

struct SglangProfile {
  double mem_fraction_static = 0;
  bool mem_fraction_chosen = false;   // true when SGLang would choose it (not given)
  uint64_t reserved_mib = 0;          // what the choice keeps out of the static share
  uint64_t chunked_prefill_size = 0;  // 0 when chunking is disabled (per DP rank under DP attention)
  uint64_t attention_tp = 1;          // ranks the attention (and the pool's KV heads) are split over: tp / attention_dp
  uint64_t cuda_graph_max_bs = 0;
  uint64_t runtime_before_weights = 0;  // CUDA context + communicators: card - free before the weights
  uint64_t cuda_context = 0;            // per rank, before init_torch_distributed
  uint64_t communicators = 0;           // NCCL (and custom all-reduce) buffers; 0 on one rank
  bool custom_all_reduce = false;       // whether SGLang's custom all-reduce runs (its rule)
  uint64_t free_before_weights = 0;     // "Load weight begin. avail mem"
  uint64_t weights = 0;                 // per GPU
  CpuOffload offload;                   // --cpu-offload-gb: what moved to pinned host memory (not in weights)
  LoraSlots lora;                       // the LoRA pool, allocated after the weights (0 B without LoRA)
  uint64_t token_bytes = 0;             // one token over this GPU's layers, as the pool allocates it
  uint64_t cell_bytes = 0;              // one token as SGLang's configurator prices it ("cell size"): token_bytes but
                                        // for DSA's packed fp8 latent, priced unpacked; a hybrid SWA model's full layers only
  uint64_t max_total_num_tokens = 0;    // "max_total_num_tokens=" / "KV Cache is allocated. #tokens:"
  uint64_t swa_tokens = 0;              // hybrid window models: the window layers' pool
  uint64_t state_bytes_per_request = 0; // hybrid recurrent models: conv + SSM state of one request on this GPU
  uint64_t state_slots = 0;             // max_mamba_cache_size
  uint64_t state_pool_bytes = 0;        // (slots + 1) x one request's state (slot 0 is the padding slot)
  uint64_t token_pool_bytes = 0;        // K + V (or latent) pool bytes
  uint64_t max_running_requests = 0;
  uint64_t dynamic_reserve = 0;         // free before weights x (1 - mem_fraction_static)
  uint64_t draft_pool_tokens = 0;       // speculative decoding: draft_runner_cache_size
  uint64_t draft_pool_bytes = 0;        // the draft's own token pool
  uint64_t draft_token_bytes = 0;       // one token over the drafter's layers on this GPU
  bool exact = true;
  std::vector<std::string> notes;
  std::vector<Line> lines;              // per GPU: runtime, weights, token pool, reserve; they sum to the card
};

// Bytes of one cached value at --kv-cache-dtype; InputError for a value SGLang refuses.
uint64_t sglang_kv_dtype_bytes(const std::string& kv_cache_dtype, const std::string& dtype);

SglangProfile sglang_profile(const Model& model, const SglangSettings& settings);

// The --max-running-requests with which each of `dp` DP-attention schedulers takes ceil(sequences /
// dp) requests (each takes max_running_requests // dp_size, model_runner.py): dp x ceil(sequences / dp).
uint64_t sglang_running_requests_for(uint64_t sequences, uint64_t dp);

}  // namespace vc
