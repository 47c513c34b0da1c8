#pragma once
// vLLM's paged KV cache: how many tokens fit in the memory it has left for the cache, per GPU.
// Page rules from vllm/v1/kv_cache_interface.py (FullAttentionSpec, MLAAttentionSpec); docs/engines.md.
#include <cstdint>
#include <string>

#include "model/model.h"

namespace vc {

struct VllmSettings {
  uint64_t available_kv_bytes = 0;  // "Available KV cache memory" per GPU
  uint64_t block_size = 16;
  std::string kv_cache_dtype = "auto";  // --kv-cache-dtype: auto (= --dtype), bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, ...
  std::string dtype = "auto";           // --dtype: auto (16-bit), float16, bfloat16, float32
  uint64_t tensor_parallel = 1;
  uint64_t pipeline_parallel = 1;
  uint64_t pipeline_rank = 0;       // the stage whose layers hold this GPU's cache (vllm_pipeline.h)
  uint64_t max_model_len = 8192;
};

struct VllmKv {
  uint64_t bytes_per_token = 0;   // per GPU, over the layers that GPU holds
  uint64_t state_bytes_per_seq = 0;  // recurrent state per sequence on that GPU (hybrid models)
  uint64_t bytes_per_block = 0;
  uint64_t num_blocks = 0;
  uint64_t tokens = 0;            // "GPU KV cache size: N tokens"
  double max_concurrency = 0;     // "Maximum concurrency for N tokens per request: Xx"
  bool exact = true;              // false when a rule is uncertain (window layers, hybrids)
  std::string note;
};

VllmKv vllm_kv(const Model& model, const VllmSettings& settings);

// The scenario's --cache-dtype in vLLM's terms: f16/bf16 -> auto (the cache at --dtype), fp8
// variants as they are; InputError for a type vLLM cannot store (q8_0, f32, ...).
std::string vllm_cache_dtype_from_scenario(const std::string& cache_dtype);

// Bytes of one cached value at --kv-cache-dtype (CacheDType in vllm/config/cache.py); auto follows
// --dtype. InputError naming the flag for a value vLLM refuses.
uint64_t vllm_kv_dtype_bytes(const VllmSettings& settings);

}  // namespace vc
