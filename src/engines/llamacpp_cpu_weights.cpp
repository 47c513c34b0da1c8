#include "engines/llamacpp_cpu_weights.h"

#include <algorithm>
#include <cstdint>

#include "core/checked.h"

namespace vc {

bool llamacpp_repacks(const std::string& name, const std::string& type, const std::vector<uint64_t>& ne) {
  // ggml-cpu/repack.cpp ggml_repack_get_optimal_repack_type: the AVX2 layouts q4_0_8x8,
  // q4_K_8x8, iq4_nl_8x8 and mxfp4_8x8 need ne[1] % 8 == 0 (Q2_K needs AVX512, Q8_0 ARM).
  static const char* const kTypes[] = {"Q4_0", "Q4_K", "IQ4_NL", "MXFP4"};
  if (std::none_of(std::begin(kTypes), std::end(kTypes), [&](const char* k) { return type == k; })) return false;
  if (ne.size() < 2 || ne[1] % 8 != 0) return false;
  // extra_buffer_type::supports_op: MUL_MAT on a 2-D weight, MUL_MAT_ID on a 3-D expert stack.
  // The loader asks with the op the tensor is used in; embeddings are used by GET_ROWS.
  if (name.rfind("token_embd", 0) == 0 || name.find("per_layer_token_embd") != std::string::npos) return false;
  size_t dims = ne.size();
  while (dims > 2 && ne[dims - 1] == 1) --dims;
  if (dims == 2) return true;
  return dims == 3 && name.find("_exps.") != std::string::npos;
}

bool llamacpp_repacks(const GgufTensor& t) { return llamacpp_repacks(t.name, t.type_name, t.ne); }

namespace {

// ggml_backend_alloc_ctx_tensors_from_buft: each tensor padded to the CPU buffer's 32-byte alignment.
uint64_t repack_padded(uint64_t bytes) { return ceil_div(bytes, 32) * 32; }

}  // namespace

LlamaCppCpuWeights llamacpp_cpu_weights(const std::vector<GgufFile>& shards) {
  LlamaCppCpuWeights w;
  for (const auto& f : shards) {
    // llama_model_loader::get_mapping_range: per file, the smallest offset to the largest end of
    // the tensors left in the mapped buffer.
    uint64_t first = UINT64_MAX, last = 0;
    for (const auto& t : f.tensors) {
      if (llamacpp_repacks(t)) {
        w.repack_bytes = checked_add(w.repack_bytes, repack_padded(t.bytes));
        ++w.repacked_tensors;
        continue;
      }
      first = std::min(first, t.offset);
      last = std::max(last, checked_add(t.offset, t.bytes));
    }
    if (last > first) w.mapped_bytes = checked_add(w.mapped_bytes, last - first);
  }
  return w;
}

namespace {

// llama-quant.cpp use_more_bits: the layers whose attn_v / ffn_down Q4_K_M raises to Q6_K.
bool use_more_bits(uint64_t il, uint64_t n) { return il < n / 8 || il >= 7 * n / 8 || (il - n / 8) % 3 == 2; }

// Shares of a layer's attention matrices (Q, K, V, O), which the synthesized "attn.weight" sums:
// Q and O are query_heads x head_dim rows or columns, K and V kv_heads x head_dim.
struct AttentionShares {
  double v = 0, o = 0;
};
AttentionShares attention_shares(const AttentionSpec& a) {
  if (a.kind != AttentionKind::Full && a.kind != AttentionKind::SlidingWindow) return {};
  const double q = static_cast<double>(a.query_heads) * a.head_dim_k, k = static_cast<double>(a.kv_heads) * a.head_dim_k;
  const double v = static_cast<double>(a.kv_heads) * a.head_dim_v, o = static_cast<double>(a.query_heads) * a.head_dim_v;
  const double all = q + k + v + o;
  return all > 0 ? AttentionShares{v / all, o / all} : AttentionShares{};
}

// Tiers whose recipe is modelled below; tiers whose recipe stores nothing in a repacked type (their
// base and raised types are all 5 bits or more, or Q4_1); any other tier is not estimated.
enum class Recipe { Modelled, NothingRepacked, NotModelled };
Recipe recipe_kind(const std::string& recipe) {
  static const char* const kModelled[] = {"Q4_0", "IQ4_NL", "Q4_K_M", "Q4_K_S", "MXFP4"};
  static const char* const kNothing[] = {"F32", "F16", "BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q5_0", "Q5_1", "Q4_1"};
  auto in = [&](const auto& list) { return std::any_of(std::begin(list), std::end(list), [&](const char* k) { return recipe == k; }); };
  return in(kModelled) ? Recipe::Modelled : in(kNothing) ? Recipe::NothingRepacked : Recipe::NotModelled;
}

// The share of one synthesized tensor a modelled recipe stores in a repacked type
// (llama_tensor_get_type with llama-quantize's defaults: no imatrix, no overrides).
double recipe_share(const std::string& recipe, const HostTensor& t, const Model& m) {
  const std::string part = t.part;
  if (!t.layer || *t.layer >= m.layers.size()) return 0;  // embeddings (row lookups), the output layer (Q6_K), the final norm
  if (part.find("norm") != std::string::npos || part.find("ffn_gate_inp") != std::string::npos || part == "other.weight") return 0;  // F32, or not modelled
  const bool experts = part.find("_exps.") != std::string::npos;
  if (recipe == "MXFP4") return experts ? 1 : 0;  // MXFP4_MOE: routed experts MXFP4, the rest Q8_0
  const uint64_t il = *t.layer, n = m.layers.size();
  const LayerConfig& layer = m.layers[il];
  const bool eight_experts = layer.feed_forward.kind == FeedForwardKind::MoE && layer.feed_forward.experts == 8;
  const AttentionSpec& a = layer.attention;
  const bool gqa4 = a.kv_heads > 0 && a.query_heads >= 4 * a.kv_heads;
  bool raise_down = false, raise_v = eight_experts, raise_o = false;
  if (recipe == "Q4_K_M") {
    raise_down = use_more_bits(il, n);
    raise_v = raise_v || use_more_bits(il, n);
    raise_o = eight_experts;
  } else if (recipe == "Q4_K_S") {
    raise_down = il < n / 8;
    raise_v = raise_v || il < 4;
    raise_o = eight_experts;
  } else if (recipe == "IQ4_NL") {
    raise_down = il < n / 8;
    raise_v = raise_v || gqa4;
    raise_o = eight_experts;
  }
  if (part == "attn.weight") {
    const AttentionShares s = attention_shares(a);
    return 1 - (raise_v ? s.v : 0) - (raise_o ? s.o : 0);
  }
  if (part == "ffn_down_exps.weight") return raise_down ? 0 : 1;
  // A dense or shared MLP synthesized as one tensor holds gate, up and down in equal parts.
  if (part == "ffn_up.weight" || part == "ffn_up_shexp.weight") return raise_down ? 2.0 / 3.0 : 1;
  return 1;  // the routed experts' up and gate
}

}  // namespace

HostRepack llamacpp_host_repack(const Model& model, const std::vector<HostTensor>& host_tensors, const std::string& tier) {
  HostRepack r;
  // "native MXFP4" and "build Q4_K_M" follow the recipe of the format they name.
  std::string recipe = tier;
  for (const char* prefix : {"native ", "build "}) {
    if (recipe.rfind(prefix, 0) == 0) recipe = recipe.substr(std::string(prefix).size());
  }
  const Recipe kind = recipe_kind(recipe);
  for (const auto& t : host_tensors) {
    if (t.gguf_index) {
      const NamedTensor& g = model.tensors.at(*t.gguf_index);
      if (!llamacpp_repacks(*t.part ? std::string(t.part) : g.name, g.type, g.ne)) continue;
      r.bytes = checked_add(r.bytes, repack_padded(t.bytes));
      r.source_bytes = checked_add(r.source_bytes, t.bytes);
      ++r.tensors;
      continue;
    }
    if (kind != Recipe::Modelled) {
      r.unknown_recipe = r.unknown_recipe || (kind == Recipe::NotModelled && t.layer.has_value());
      continue;
    }
    const double share = recipe_share(recipe, t, model);
    if (share <= 0) continue;
    r.from_recipe = true;
    const auto repacked = static_cast<uint64_t>(static_cast<double>(t.bytes) * share);
    r.bytes = checked_add(r.bytes, repack_padded(repacked));
    r.source_bytes = checked_add(r.source_bytes, repacked);
    ++r.tensors;
  }
  return r;
}

}  // namespace vc
