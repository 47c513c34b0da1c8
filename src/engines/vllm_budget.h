#pragma once
// vLLM's memory budget per GPU (vllm/v1/worker/gpu_worker.py determine_available_memory): it may
// use gpu_memory_utilization x the card; from that it takes the weights on this rank, the peak
// activation of a profiling forward pass over max_num_batched_tokens, and the non-torch memory
// (CUDA context, NCCL buffers). What is left is the KV cache, turned into tokens by vllm_kv.
#include <cstdint>

#include "engines/vllm_profile.h"
#include "model/model.h"

namespace vc {

struct VllmBudgetSettings {
  uint64_t card_bytes = 0;                 // total GPU memory as vLLM reports it
  double gpu_memory_utilization = 0.9;     // --gpu-memory-utilization
  uint64_t weight_bytes = 0;               // the whole checkpoint
  uint64_t max_num_batched_tokens = 8192;  // --max-num-batched-tokens
  VllmSettings kv;                         // block size, dtype, tp, pp, max_model_len
};

struct VllmBudget {
  uint64_t requested = 0;        // "requested memory": utilization x card
  uint64_t weights = 0;          // per rank
  uint64_t activation = 0;       // torch peak increase of the profile run (estimated)
  uint64_t non_torch = 0;        // estimated
  uint64_t non_kv_total = 0;
  uint64_t available_kv = 0;     // 0 when the rest does not fit ("No available memory for the cache blocks")
  VllmKv kv;
};

VllmBudget vllm_budget(const Model& model, const VllmBudgetSettings& settings);

}  // namespace vc
