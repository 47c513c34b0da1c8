#include "engines/vllm_profile.h"

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "engines/serving_dtype.h"

namespace vc {

uint64_t vllm_kv_dtype_bytes(const VllmSettings& s) {
  const std::string& d = s.kv_cache_dtype;
  if (d == "auto") return serving_dtype_bytes(s.dtype);
  if (d == "float16" || d == "bfloat16") return 2;
  if (d == "fp8" || d == "fp8_e4m3" || d == "fp8_e5m2" || d == "fp8_inc" || d == "int8") return 1;
  if (d == "fp8_ds_mla") throw InputError("--kv-cache-dtype", "fp8_ds_mla (DeepSeek V3.2's packed sparse-MLA cache) is not modelled; use auto or fp8");
  throw InputError("--kv-cache-dtype", "'" + d + "' is not a vLLM cache dtype; accepted: auto, float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, int8");
}

std::string vllm_cache_dtype_from_scenario(const std::string& cache_dtype) {
  std::string d;
  for (char c : cache_dtype) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (d == "f16" || d == "bf16" || d == "float16" || d == "bfloat16") return "auto";
  if (d == "fp8" || d == "fp8_e4m3" || d == "fp8_e5m2") return d;
  throw InputError("--cache-dtype", "'" + cache_dtype + "' is not a cache type vLLM or SGLang stores; accepted with --engine vllm|sglang: f16, bf16 (the cache at the model's dtype), fp8, fp8_e4m3, fp8_e5m2");
}

VllmKv vllm_kv(const Model& model, const VllmSettings& s) {
  if (s.block_size == 0 || s.block_size > 4096) throw InputError("--block-size", "must be from 1 to 4096");
  if (s.tensor_parallel == 0 || s.tensor_parallel > 1024) throw InputError("-tp", "must be from 1 to 1024");
  if (s.pipeline_parallel == 0 || s.pipeline_parallel > model.layers.size()) throw InputError("-pp", "must be from 1 to the layer count");
  const uint64_t dtype_bytes = vllm_kv_dtype_bytes(s);
  VllmKv kv;
  // Pipeline stages hold contiguous layer ranges; the first (largest) stage bounds the cache.
  const uint64_t layers_per_stage = ceil_div(model.layers.size(), s.pipeline_parallel);
  uint64_t per_token = 0;
  for (uint64_t i = 0; i < std::min<uint64_t>(layers_per_stage, model.layers.size()); ++i) {
    const AttentionSpec& a = model.layers[i].attention;
    switch (a.kind) {
      case AttentionKind::Full:
      case AttentionKind::SlidingWindow: {
        // KV heads are split across TP ranks, and replicated when fewer than the TP degree.
        uint64_t heads = std::max<uint64_t>(1, a.kv_heads / s.tensor_parallel);
        per_token = checked_add(per_token, checked_product({heads, uint64_t{a.head_dim_k} + a.head_dim_v, dtype_bytes}));
        if (a.kind == AttentionKind::SlidingWindow) {
          kv.exact = false;
          kv.note = "window layers counted as full attention (vLLM without the hybrid allocator); with it, window layers hold fewer blocks";
        }
        break;
      }
      case AttentionKind::Latent:
        // MLAAttentionSpec: one latent+rope vector, replicated on every TP rank.
        per_token = checked_add(per_token, checked_mul(uint64_t{a.latent_rank} + a.rope_dim, dtype_bytes));
        break;
      case AttentionKind::LinearState:
        kv.exact = false;
        kv.note = "hybrid model: vLLM pads attention pages to the state page size; tokens are approximate";
        break;
      case AttentionKind::None: break;
    }
  }
  if (per_token == 0) throw InputError("MODEL", "has no attention layers with a per-token cache for vLLM's paged KV");
  kv.bytes_per_token = per_token;
  kv.bytes_per_block = checked_mul(per_token, s.block_size);
  kv.num_blocks = s.available_kv_bytes / kv.bytes_per_block;
  kv.tokens = kv.num_blocks * s.block_size;

  // Hybrid allocator (full + sliding-window layers with one page size): layers form groups of
  // `group_size` (the smaller layer count of the two kinds); all groups share one block pool whose
  // block spans group_size layers, and the logged capacity is blocks / groups x block_size.
  // (vllm/v1/core/kv_cache_utils.py: uniform-page-size grouping; "GPU KV cache size" line.)
  uint64_t full = 0, window = 0, other = 0, page_layer = 0;
  bool uniform = true;
  for (uint64_t i = 0; i < std::min<uint64_t>(layers_per_stage, model.layers.size()); ++i) {
    const AttentionSpec& a = model.layers[i].attention;
    if (a.kind != AttentionKind::Full && a.kind != AttentionKind::SlidingWindow) { ++other; continue; }
    uint64_t heads = std::max<uint64_t>(1, a.kv_heads / s.tensor_parallel);
    uint64_t page = heads * (uint64_t{a.head_dim_k} + a.head_dim_v) * dtype_bytes;
    if (page_layer && page != page_layer) uniform = false;
    page_layer = page;
    (a.kind == AttentionKind::Full ? full : window)++;
  }
  if (full && window && !other && uniform) {
    const uint64_t group_size = std::min(full, window);
    const uint64_t groups = ceil_div(full, group_size) + ceil_div(window, group_size);
    kv.bytes_per_block = checked_product({page_layer, group_size, s.block_size});
    kv.num_blocks = s.available_kv_bytes / kv.bytes_per_block;
    kv.tokens = kv.num_blocks / groups * s.block_size;
    kv.exact = true;
    kv.note = "";
  }
  kv.max_concurrency = s.max_model_len ? static_cast<double>(kv.tokens) / static_cast<double>(s.max_model_len) : 0;
  return kv;
}

}  // namespace vc
