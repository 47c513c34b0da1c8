#include "model/layer_memory.h"

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"

namespace vc {

uint64_t AttentionSpec::values_per_token() const {
  switch (kind) {
    case AttentionKind::Full:
    case AttentionKind::SlidingWindow:
      return checked_mul(kv_heads, uint64_t{head_dim_k} + head_dim_v);
    case AttentionKind::Latent:
      return uint64_t{latent_rank} + rope_dim + index_key_dim;
    default:
      return 0;
  }
}

uint64_t TokenCacheBytes::total() const { return checked_add(checked_add(k, v), checked_add(latent, index)); }

TokenCacheBytes& TokenCacheBytes::operator+=(const TokenCacheBytes& o) {
  k = checked_add(k, o.k);
  v = checked_add(v, o.v);
  latent = checked_add(latent, o.latent);
  index = checked_add(index, o.index);
  return *this;
}

uint64_t StateBytes::total() const { return checked_add(matrix, conv); }

StateBytes& StateBytes::operator+=(const StateBytes& o) {
  matrix = checked_add(matrix, o.matrix);
  conv = checked_add(conv, o.conv);
  return *this;
}

const QuantFormat& cache_type(const std::string& name, const std::string& subject) {
  const QuantFormat* f = QuantTable::builtin().find_type(name);
  if (!f) throw InputError(subject, "'" + name + "' is not a storage type; accepted: " + QuantTable::builtin().names(false));
  return *f;
}

CacheLayout uniform_cache(const QuantFormat& type) { return CacheLayout{&type, &type, std::nullopt, 1}; }

std::array<const AttentionSpec*, 2> mixers(const LayerConfig& layer) {
  return {&layer.attention, layer.parallel_mixer ? &*layer.parallel_mixer : nullptr};
}

uint64_t kv_heads_per_rank(const AttentionSpec& a, uint64_t tensor_parallel) {
  return std::max<uint64_t>(1, a.kv_heads / std::max<uint64_t>(1, tensor_parallel));
}

TokenCacheBytes token_cache_bytes(const AttentionSpec& a, const CacheLayout& c) {
  TokenCacheBytes t;
  switch (a.kind) {
    case AttentionKind::Full:
    case AttentionKind::SlidingWindow: {  // K and V are separate rows of whole blocks
      const uint64_t heads = c.tensor_parallel > 1 ? kv_heads_per_rank(a, c.tensor_parallel) : a.kv_heads;
      t.k = c.k_type->row_bytes(checked_mul(heads, a.head_dim_k));
      t.v = c.v_type->row_bytes(checked_mul(heads, a.head_dim_v));
      break;
    }
    case AttentionKind::Latent:
      if (c.latent_values) {
        t.latent = c.k_type->row_bytes(*c.latent_values);
      } else {
        t.latent = c.k_type->row_bytes(uint64_t{a.latent_rank} + a.rope_dim);
        t.index = a.index_key_dim ? c.k_type->row_bytes(a.index_key_dim) : 0;
      }
      break;
    case AttentionKind::LinearState:
    case AttentionKind::None: break;
  }
  return t;
}

TokenCacheBytes token_cache_bytes(const LayerConfig& layer, const CacheLayout& c) {
  TokenCacheBytes t;
  for (const AttentionSpec* a : mixers(layer)) if (a) t += token_cache_bytes(*a, c);
  return t;
}

uint64_t state_matrix_element_bytes(StateLayout layout) { return layout == StateLayout::F16 ? 2 : 4; }
uint64_t state_conv_element_bytes(StateLayout layout) { return layout == StateLayout::F32 ? 4 : 2; }

StateBytes state_bytes(const AttentionSpec& a, StateLayout layout) {
  if (a.kind != AttentionKind::LinearState) return {};
  return {checked_mul(a.state_values, state_matrix_element_bytes(layout)), checked_mul(a.conv_values, state_conv_element_bytes(layout))};
}

StateBytes state_bytes(const LayerConfig& layer, StateLayout layout) {
  StateBytes s;
  for (const AttentionSpec* a : mixers(layer)) if (a) s += state_bytes(*a, layout);
  return s;
}

uint64_t cached_tokens(const AttentionSpec& a, uint64_t context) {
  return a.kind == AttentionKind::SlidingWindow ? std::min(context, a.window) : context;
}

}  // namespace vc
