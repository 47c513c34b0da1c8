#pragma once
// What one layer keeps in memory, in one place: per cached token the bytes of K, V, the latent
// vector and the sparse-attention index keys at a cache type (whole ggml blocks per row), and per
// sequence the recurrent state (matrix and short-convolution) in a state layout. Both mixers of a
// hybrid-head layer (Falcon-H1's parallel_mixer) count. Every consumer (estimate, footprint, the
// engines) asks here; no other file multiplies heads by head widths. The idea follows llama.cpp's
// per-layer n_embd_k_gqa(il) / n_embd_v_gqa(il) and gemma.cpp's LayerConfig.
#include <array>
#include <cstdint>
#include <optional>

#include "model/model.h"
#include "model/quant.h"

namespace vc {

// How recurrent (linear-attention / Mamba) state is stored: the engines differ.
enum class StateLayout {
  F32,    // matrix and conv state in f32 (llama.cpp: type_r = type_s = F32)
  Mixed,  // matrix in f32, conv state in the 16-bit model dtype (vLLM's default for KDA/GDN)
  F16,    // both 16-bit (SGLang --mamba-ssm-dtype bfloat16)
};

// Bytes one cached token takes in one layer (both mixers of a hybrid-head layer summed).
struct TokenCacheBytes {
  uint64_t k = 0;       // Full / SlidingWindow keys
  uint64_t v = 0;       // Full / SlidingWindow values
  uint64_t latent = 0;  // Latent: latent + rope values (one shared vector, no separate V)
  uint64_t index = 0;   // Latent with a sparse-attention indexer: its keys
  uint64_t total() const;
  TokenCacheBytes& operator+=(const TokenCacheBytes& o);
};

// Bytes of one sequence's recurrent state in one layer.
struct StateBytes {
  uint64_t matrix = 0;
  uint64_t conv = 0;
  uint64_t total() const;
  StateBytes& operator+=(const StateBytes& o);
};

// How a cache is stored: K and V types (the same for most engines), an optional latent budget
// (--latent-values replaces latent + rope + index values), and the tensor-parallel degree that
// divides KV heads (each rank keeps at least one; latent caches are whole on every rank).
struct CacheLayout {
  const QuantFormat* k_type = nullptr;
  const QuantFormat* v_type = nullptr;
  std::optional<uint64_t> latent_values;
  uint64_t tensor_parallel = 1;
};

// The built-in storage type by name ("F16", "q8_0"); InputError(subject) naming the accepted types.
const QuantFormat& cache_type(const std::string& name, const std::string& subject);
// The same K and V type, no latent budget, one rank.
CacheLayout uniform_cache(const QuantFormat& type);

// A layer's mixers: its attention, then the parallel mixer when it has one (else nullptr).
std::array<const AttentionSpec*, 2> mixers(const LayerConfig& layer);

// KV heads one tensor-parallel rank keeps: kv_heads / tp, at least one (replicated below the degree).
uint64_t kv_heads_per_rank(const AttentionSpec& a, uint64_t tensor_parallel);

// Per mixer and per layer.
TokenCacheBytes token_cache_bytes(const AttentionSpec& a, const CacheLayout& c);
TokenCacheBytes token_cache_bytes(const LayerConfig& layer, const CacheLayout& c);
StateBytes state_bytes(const AttentionSpec& a, StateLayout layout);
StateBytes state_bytes(const LayerConfig& layer, StateLayout layout);
// Bytes per element of the matrix and of the conv state in a layout.
uint64_t state_matrix_element_bytes(StateLayout layout);
uint64_t state_conv_element_bytes(StateLayout layout);

// Tokens a layer's cache holds at `context`: the window for sliding-window layers, else all.
uint64_t cached_tokens(const AttentionSpec& a, uint64_t context);

}  // namespace vc
