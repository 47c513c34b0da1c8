#include "engines/vllm_profile.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "engines/serving_dtype.h"
#include "engines/vllm_pipeline.h"
#include "model/layer_memory.h"

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
  // vLLM's cache dtype (--kv-cache-dtype, or --dtype for "auto"): 1, 2 or 4 bytes a value.
  const uint64_t dtype_bytes = vllm_kv_dtype_bytes(s);
  const QuantFormat& type = cache_type(dtype_bytes == 1 ? "FP8_E4M3" : dtype_bytes == 4 ? "F32" : "BF16", "--kv-cache-dtype");
  CacheLayout layout = uniform_cache(type);
  layout.tensor_parallel = s.tensor_parallel;  // KV heads split across ranks (MLA latents whole on every rank)
  VllmKv kv;
  // Pipeline stages hold contiguous layer ranges (vllm_pipeline.h); this GPU's is pipeline_rank's.
  if (s.pipeline_rank >= s.pipeline_parallel) throw InputError("pipeline rank", "must be below the pipeline size");
  const VllmStage stage = vllm_pipeline_stages(model.layers.size(), s.pipeline_parallel)[s.pipeline_rank];
  uint64_t per_token = 0;
  for (uint64_t i = stage.first_layer; i < stage.first_layer + stage.layers; ++i) {
    const LayerConfig& layer = model.layers[i];
    per_token = checked_add(per_token, token_cache_bytes(layer, layout).total());
    kv.state_bytes_per_seq = checked_add(kv.state_bytes_per_seq, state_bytes(layer, StateLayout::Mixed).total());
    for (const AttentionSpec* a : mixers(layer)) {
      if (a && a->kind == AttentionKind::SlidingWindow) {
        kv.exact = false;
        kv.note = "window layers counted as full attention (vLLM without the hybrid allocator); with it, window layers hold fewer blocks";
      }
    }
  }
  if (kv.state_bytes_per_seq) {
    kv.exact = false;
    kv.note = "hybrid model: vLLM pads attention pages to the state page size; tokens are approximate, and each sequence also holds its recurrent state";
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
  for (uint64_t i = stage.first_layer; i < stage.first_layer + stage.layers; ++i) {
    const LayerConfig& layer = model.layers[i];
    const AttentionSpec& a = layer.attention;
    if (layer.parallel_mixer || (a.kind != AttentionKind::Full && a.kind != AttentionKind::SlidingWindow)) { ++other; continue; }
    const uint64_t page = token_cache_bytes(a, layout).total();
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
  // A request of max_model_len tokens takes that many token slots (and, in a hybrid, its state).
  const u128 per_request = static_cast<u128>(kv.bytes_per_token) * s.max_model_len + kv.state_bytes_per_seq;
  kv.max_concurrency = s.max_model_len == 0 ? 0
                       : kv.state_bytes_per_seq ? static_cast<double>(s.available_kv_bytes) / static_cast<double>(per_request)
                                                : static_cast<double>(kv.tokens) / static_cast<double>(s.max_model_len);
  return kv;
}

}  // namespace vc
