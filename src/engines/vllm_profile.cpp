#include "engines/vllm_profile.h"

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "model/layer_memory.h"

namespace vc {

VllmKv vllm_kv(const Model& model, const VllmSettings& s) {
  if (s.block_size == 0 || s.block_size > 4096) throw InputError("--block-size", "must be from 1 to 4096");
  if (s.tensor_parallel == 0 || s.tensor_parallel > 1024) throw InputError("-tp", "must be from 1 to 1024");
  if (s.pipeline_parallel == 0 || s.pipeline_parallel > model.layers.size()) throw InputError("-pp", "must be from 1 to the layer count");
  // "auto" stores the cache in the 16-bit model dtype; fp8 variants in one byte per value.
  const bool fp8 = s.kv_cache_dtype == "fp8" || s.kv_cache_dtype == "fp8_e4m3" || s.kv_cache_dtype == "fp8_e5m2";
  const QuantFormat& type = cache_type(fp8 ? "FP8_E4M3" : "BF16", "--kv-cache-dtype");
  CacheLayout layout = uniform_cache(type);
  layout.tensor_parallel = s.tensor_parallel;  // KV heads split across ranks (MLA latents whole on every rank)
  VllmKv kv;
  // Pipeline stages hold contiguous layer ranges; the first (largest) stage bounds the cache.
  const uint64_t stage_layers = std::min<uint64_t>(ceil_div(model.layers.size(), s.pipeline_parallel), model.layers.size());
  uint64_t per_token = 0;
  for (uint64_t i = 0; i < stage_layers; ++i) {
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
  for (uint64_t i = 0; i < stage_layers; ++i) {
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
