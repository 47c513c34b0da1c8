#include "sources/gguf/gguf_model.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

#include "core/checked.h"
#include "core/error.h"
#include "core/printable.h"
#include "sources/config/limits.h"
#include "sources/gguf/ggml_types.h"
#include "sources/tensor_classes.h"

namespace vc {
namespace {

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// ARCH.* metadata lookups, bounded, recorded in the model's provenance.
class Meta {
 public:
  Meta(const GgufFile& f, std::string arch, Model& m) : f_(f), arch_(std::move(arch)), m_(m) {}

  const std::string& arch() const { return arch_; }
  bool has(const std::string& key) const { return f_.find(arch_ + "." + key) != nullptr; }

  std::optional<uint64_t> opt(const std::string& key, uint64_t max) {
    const std::string full = arch_ + "." + key;
    const GgufValue* v = f_.find(full);
    if (!v) return std::nullopt;
    if (v->is_array()) return at(*v, full, 0, max);
    return check(*v, full, max);
  }

  uint64_t req(const std::string& key, uint64_t max) {
    auto v = opt(key, max);
    if (!v) throw InputError(f_.label + ": " + arch_ + "." + key, "is missing; a " + arch_ + " GGUF must carry it");
    return *v;
  }

  // A value that may be one number for every layer or an array with one per layer.
  std::optional<uint64_t> per_layer(const std::string& key, uint64_t il, uint64_t layers, uint64_t max) {
    const std::string full = arch_ + "." + key;
    const GgufValue* v = f_.find(full);
    if (!v) return std::nullopt;
    if (!v->is_array()) return check(*v, full, max);
    if (v->count != layers || v->items.size() != layers) {
      throw InputError(f_.label + ": " + full, fmt::format("has {} entries; one per layer ({}) is required", v->count, layers));
    }
    return at(*v, full, il, max);
  }

  const GgufValue* raw(const std::string& key) const { return f_.find(arch_ + "." + key); }

 private:
  uint64_t check(const GgufValue& v, const std::string& full, uint64_t max) {
    auto n = v.as_u64();
    if (!n) throw InputError(f_.label + ": " + full, std::string("is a ") + to_string(v.type) + "; a non-negative integer is required");
    if (*n > max) throw InputError(f_.label + ": " + full, fmt::format("is {}; at most {} is accepted", *n, max));
    m_.provenance[full] = "GGUF metadata, " + f_.label;
    return *n;
  }
  uint64_t at(const GgufValue& v, const std::string& full, uint64_t il, uint64_t max) {
    if (il >= v.items.size()) throw InputError(f_.label + ": " + full, "is an empty or truncated array");
    return check(v.items[il], full, max);
  }

  const GgufFile& f_;
  std::string arch_;
  Model& m_;
};

// Tensors of one block, by the name after "blk.N.".
using BlockTensors = std::map<std::string, const GgufTensor*>;

const GgufTensor* find_prefix(const BlockTensors& b, const char* prefix) {
  for (const auto& [name, t] : b) if (starts(name, prefix)) return t;
  return nullptr;
}

bool has_attention_tensors(const BlockTensors& b) {
  for (const char* p : {"attn_q", "attn_k", "attn_v", "attn_qkv", "attn_kv_a", "attn_output", "attn_out"}) {
    if (find_prefix(b, p)) return true;
  }
  return false;
}

// Local/global layer patterns of the families whose GGUF omits sliding_window_pattern:
// llama.cpp set_swa_pattern(n) per architecture (src/llama-model.cpp); layer il is
// sliding iff il % n < n - 1.
uint64_t default_swa_pattern(const std::string& arch) {
  static const std::map<std::string, uint64_t> patterns = {{"gemma2", 2}, {"gemma3", 6}, {"gpt-oss", 2}, {"cohere2", 4}, {"llama4", 4}};
  auto it = patterns.find(arch);
  return it == patterns.end() ? 0 : it->second;
}

// The window llama.cpp assumes when a GGUF has no sliding_window key (load_arch_hparams in
// src/models/llama4.cpp and gemma2.cpp): Llama 4's chunked attention over 8,192-token chunks
// (convert_hf_to_gguf writes the key only as 0, to turn it off; the chunked layers' cache is
// sized as a window's, llama-model.cpp create_memory), and Gemma 2's 4,096-token window.
uint64_t default_sliding_window(const std::string& arch) {
  if (arch == "llama4") return 8192;
  if (arch == "gemma2") return 4096;
  return 0;
}

// Whether layer il keeps its own sparse-attention indexer (weights and cached index keys); the
// others reuse an earlier layer's top-k. attention.indexer.types when the GGUF has it; else
// llama.cpp's default for glm-dsa models trained to 1M tokens or more (GLM-5.2: layers 0 and 1 and
// every 4th from 2; src/models/glm-dsa.cpp GLM_5_2_DEFAULT_INDEXER_TYPES); else every layer.
bool indexer_is_full(const Meta& meta, const std::string& arch, uint64_t il, uint64_t trained_context) {
  if (const GgufValue* types = meta.raw("attention.indexer.types"); types && types->is_array()) {
    if (il >= types->items.size()) throw InputError(arch + ".attention.indexer.types", "has fewer entries than layers");
    return types->items[il].as_u64().value_or(0) != 0;
  }
  if (arch == "glm-dsa" && trained_context >= 1048576) return il < 2 || il % 4 == 2;
  return true;
}

// Whether attention layers rotate Q and K. The Granite family reads rope.scaling.finetuned as
// that switch, true when absent (llama-model.cpp load_hparams: "Granite uses rope_finetuned as a
// switch for rope, so default to true"; convert_hf_to_gguf writes false for the Mamba-2 hybrids);
// Nemotron-H's and Jamba's attention have no RoPE.
bool rotary_attention(const Meta& meta) {
  const std::string& arch = meta.arch();
  if (arch == "nemotron_h" || arch == "jamba") return false;  // no RoPE (nemotron-h.cpp; jamba.cpp: "No RoPE :)")
  if (arch == "granite" || arch == "granitemoe" || arch == "granitehybrid") {
    const GgufValue* v = meta.raw("rope.scaling.finetuned");
    return !v || v->as_u64().value_or(1) != 0;
  }
  return true;
}

StateFamily state_family(const std::string& arch) {
  if (arch == "kimi-linear" || arch == "kimi-k3") return StateFamily::KDA;
  if (starts(arch, "qwen3next") || starts(arch, "qwen35")) return StateFamily::GatedDeltaNet;
  if (arch == "mamba" || arch == "jamba") return StateFamily::Mamba1;
  return StateFamily::Mamba2;
}

}  // namespace

TensorTally tally_gguf(const std::vector<GgufFile>& shards) {
  TensorTally tally;
  for (const auto& f : shards) {
    for (const auto& t : f.tensors) tally.add(classify_gguf_tensor(t.name), t.type_name, t.elements, t.bytes);
  }
  return tally;
}

Model model_from_gguf(const std::vector<GgufFile>& shards) {
  if (shards.empty()) throw std::logic_error("model_from_gguf: no files");
  const GgufFile& f = shards.front();
  // A split set must be whole and in order.
  for (size_t i = 0; i < shards.size(); ++i) {
    const GgufValue* count = shards[i].find("split.count");
    const GgufValue* no = shards[i].find("split.no");
    const uint64_t n = count && count->as_u64() ? *count->as_u64() : 1;
    const uint64_t k = no && no->as_u64() ? *no->as_u64() : 0;
    if (n != shards.size() || k != i) {
      throw InputError(shards[i].label, fmt::format("is split part {} of {} by its metadata, but was read as part {} of {}; give the first file of a complete set",
                                                    k + 1, n, i + 1, shards.size()));
    }
  }

  Model m;
  const GgufValue* arch_v = f.find("general.architecture");
  if (!arch_v || arch_v->type != GgufType::String || arch_v->s.empty()) {
    throw InputError(f.label + ": general.architecture", "is missing; every GGUF model names its architecture there");
  }
  const std::string arch = arch_v->s;
  if (arch == "clip") throw InputError(f.label, "is a vision/audio projector (mmproj, architecture clip), not a language model");
  Meta meta(f, arch, m);

  std::map<uint64_t, BlockTensors> blocks;
  std::map<std::string, const GgufTensor*> globals;
  for (const auto& s : shards) {
    for (const auto& t : s.tensors) {
      auto il = tensor_layer_index(t.name);
      if (il && starts(t.name, "blk.")) blocks[*il][t.name.substr(t.name.find('.', 4) + 1)] = &t;
      else globals[t.name] = &t;
    }
  }

  const uint64_t n_block = meta.req("block_count", limits::kLayers);
  const uint64_t nextn = meta.opt("nextn_predict_layers", limits::kLayers).value_or(0);
  if (nextn > n_block) throw InputError(f.label + ": " + arch + ".nextn_predict_layers", "exceeds block_count");
  const uint64_t n_layer = n_block - nextn;  // MTP blocks are not part of the decoder stack
  m.hidden = meta.req("embedding_length", limits::kHidden);
  const uint64_t heads0 = meta.per_layer("attention.head_count", 0, n_block, limits::kHeads).value_or(0);
  m.max_context = meta.opt("context_length", uint64_t{1} << 34).value_or(0);

  if (auto v = meta.opt("vocab_size", limits::kVocab)) m.vocab = *v;
  else if (const GgufValue* toks = f.find("tokenizer.ggml.tokens"); toks && toks->is_array()) m.vocab = toks->count;
  else if (auto it = globals.find("token_embd.weight"); it != globals.end() && it->second->ne.size() >= 2) m.vocab = it->second->ne[1];
  m.tied_embeddings = globals.find("output.weight") == globals.end();

  const uint64_t kv_lora = meta.opt("attention.kv_lora_rank", limits::kHeadDim).value_or(0);
  // llama.cpp caches the compressed latent only when both MLA head widths are present (is_mla). A
  // file converted before that carries neither, and its key_length is the decompressed per-head
  // width (nope + rope, DeepSeek's 192), below kv_lora_rank, rather than the latent row
  // (kv_lora + rope, 576).
  const bool mla_keys = meta.opt("attention.key_length_mla", limits::kHeadDim).value_or(0) != 0 &&
                        meta.opt("attention.value_length_mla", limits::kHeadDim).value_or(0) != 0;
  const auto legacy_key = meta.opt("attention.key_length", limits::kHeadDim);
  const bool mla_cache = mla_keys || !legacy_key || *legacy_key >= kv_lora;
  const uint64_t window = meta.raw("attention.sliding_window") ? meta.opt("attention.sliding_window", limits::kWindow).value_or(0)
                                                               : default_sliding_window(arch);
  const GgufValue* pattern_v = meta.raw("attention.sliding_window_pattern");
  const uint64_t pattern = pattern_v && !pattern_v->is_array() ? meta.opt("attention.sliding_window_pattern", limits::kLayers).value_or(0)
                                                               : default_swa_pattern(arch);
  if (window && !pattern_v && !pattern) {
    m.warnings.push_back(arch + ".attention.sliding_window is set but this architecture has no known local/global pattern; every layer is counted as full attention");
  }
  const uint64_t experts = meta.opt("expert_count", limits::kExperts).value_or(0);
  const uint64_t used = meta.opt("expert_used_count", limits::kExperts).value_or(0);
  if (used > experts) throw InputError(f.label + ": " + arch + ".expert_used_count", fmt::format("is {} but expert_count is {}", used, experts));

  for (uint64_t il = 0; il < n_layer; ++il) {
    static const BlockTensors kEmpty;
    auto bit = blocks.find(il);
    const BlockTensors& b = bit == blocks.end() ? kEmpty : bit->second;
    LayerConfig layer;
    const bool recurrent = find_prefix(b, "ssm_") != nullptr || arch == "mamba" || arch == "mamba2";
    const uint64_t heads = meta.per_layer("attention.head_count", il, n_block, limits::kHeads).value_or(heads0);

    AttentionSpec attn;
    attn.query_heads = static_cast<uint32_t>(heads);
    if (has_attention_tensors(b) || (!recurrent && b.empty())) {
      if (kv_lora && !mla_cache) {
        // Converted before llama.cpp's MLA (no key_length_mla / value_length_mla, a whole
        // attn_kv_b): llama.cpp decompresses K and V per head and caches them as plain attention,
        // head_count_kv x (key_length + value_length) a token (src/models/deepseek2.cpp, is_mla).
        const uint64_t kv = meta.per_layer("attention.head_count_kv", il, n_block, limits::kHeads).value_or(heads);
        if (kv == 0 || kv > heads) {
          throw InputError(f.label + ": " + arch + ".attention.head_count_kv",
                           fmt::format("is {} for layer {}, which has attention tensors; 1 to head_count ({}) accepted", kv, il, heads));
        }
        attn.kind = AttentionKind::Full;
        attn.kv_heads = static_cast<uint32_t>(kv);
        attn.head_dim_k = static_cast<uint32_t>(meta.req("attention.key_length", limits::kHeadDim));
        attn.head_dim_v = static_cast<uint32_t>(meta.req("attention.value_length", limits::kHeadDim));
      } else if (kv_lora) {
        attn.kind = AttentionKind::Latent;
        attn.latent_rank = static_cast<uint32_t>(kv_lora);
        auto rope = meta.opt("rope.dimension_count", limits::kHeadDim);
        if (!rope) {
          const uint64_t key_len = meta.req("attention.key_length", limits::kHeadDim);
          if (key_len < kv_lora) throw InputError(f.label + ": " + arch + ".attention.key_length", "is smaller than kv_lora_rank");
          rope = key_len - kv_lora;
        }
        attn.rope_dim = static_cast<uint32_t>(*rope);
        // The per-head query/key and value widths before absorption into the latent space: they
        // size llama.cpp's compute graph, not the cache.
        attn.head_dim_k = static_cast<uint32_t>(meta.opt("attention.key_length_mla", limits::kHeadDim).value_or(0));
        attn.head_dim_v = static_cast<uint32_t>(meta.opt("attention.value_length_mla", limits::kHeadDim).value_or(0));
        // The projections' widths as config.json names them, for engines that lay out the MLA
        // tensors per rank: q_lora_rank (absent: a plain q_proj), qk_nope = key_length_mla - rope,
        // v_head_dim = value_length_mla.
        attn.query_rank = static_cast<uint32_t>(meta.opt("attention.q_lora_rank", limits::kHidden).value_or(0));
        if (attn.head_dim_k > attn.rope_dim) attn.nope_dim = attn.head_dim_k - attn.rope_dim;
        attn.value_dim = attn.head_dim_v;
        attn.index_key_dim = static_cast<uint32_t>(meta.opt("attention.indexer.key_length", limits::kHeadDim).value_or(0));
        if (attn.index_key_dim && !indexer_is_full(meta, arch, il, m.max_context)) attn.index_key_dim = 0;
        attn.index_topk = static_cast<uint32_t>(meta.opt("attention.indexer.top_k", limits::kWindow).value_or(0));
      } else {
        if (heads == 0) throw InputError(f.label + ": " + arch + ".attention.head_count", fmt::format("is 0 for layer {}, which has attention tensors", il));
        const uint64_t kv = meta.per_layer("attention.head_count_kv", il, n_block, limits::kHeads).value_or(heads);
        // Hybrids keep 0 for their recurrent layers; a layer with attention tensors has 1 to
        // head_count KV heads (grouped-query attention shares each KV head among query heads).
        if (kv == 0 || kv > heads) {
          throw InputError(f.label + ": " + arch + ".attention.head_count_kv",
                           fmt::format("is {} for layer {}, which has attention tensors; 1 to head_count ({}) accepted", kv, il, heads));
        }
        const uint64_t key_len = meta.opt("attention.key_length", limits::kHeadDim).value_or(m.hidden / heads);
        attn.kind = AttentionKind::Full;
        attn.rotary = rotary_attention(meta);
        attn.kv_heads = static_cast<uint32_t>(kv);
        attn.head_dim_k = static_cast<uint32_t>(key_len);
        attn.head_dim_v = static_cast<uint32_t>(meta.opt("attention.value_length", limits::kHeadDim).value_or(key_len));
        bool sliding = false;
        if (window) {
          if (pattern_v && pattern_v->is_array()) {
            if (il >= pattern_v->items.size()) throw InputError(f.label + ": " + arch + ".attention.sliding_window_pattern", "has fewer entries than layers");
            sliding = pattern_v->items[il].as_u64().value_or(0) != 0;
          } else if (pattern) {
            sliding = il % pattern < pattern - 1;
          }
        }
        if (sliding) {
          attn.kind = AttentionKind::SlidingWindow;
          attn.window = window;
        }
      }
    }

    if (recurrent) {
      AttentionSpec state;
      state.kind = AttentionKind::LinearState;
      state.state_family = state_family(arch);
      const uint64_t conv = meta.req("ssm.conv_kernel", 64);
      if (conv == 0) throw InputError(f.label + ": " + arch + ".ssm.conv_kernel", "is 0; a short convolution has at least 1 tap");
      if (state.state_family == StateFamily::KDA) {  // reference/architectures.md section 5
        const uint64_t d = meta.req("kda.head_dim", limits::kStateDim);
        state.state_values = checked_product({heads, d, d});
        state.conv_values = checked_product({3, conv - 1, heads, d});
      } else {  // Mamba2 / Gated DeltaNet mapped on Mamba fields, Mamba1 with no groups: section 6-7
        const uint64_t d_inner = meta.req("ssm.inner_size", limits::kWidth);
        const uint64_t d_state = meta.req("ssm.state_size", limits::kStateDim);
        const uint64_t groups = meta.opt("ssm.group_count", limits::kHeads).value_or(0);
        state.state_values = checked_mul(d_inner, d_state);
        state.conv_values = checked_mul(conv - 1, checked_add(d_inner, checked_product({2, groups, d_state})));
      }
      if (attn.kind != AttentionKind::None && arch == "falcon-h1") {
        layer.attention = attn;  // the canonical hybrid-head shape, as the config.json mapper gives it
        layer.parallel_mixer = state;
      } else {
        layer.attention = state;
      }
    } else {
      layer.attention = attn;
    }

    FeedForwardSpec& ff = layer.feed_forward;
    if (const GgufTensor* up = find_prefix(b, "ffn_up_exps") ? find_prefix(b, "ffn_up_exps") : find_prefix(b, "ffn_down_exps")) {
      ff.kind = FeedForwardKind::MoE;
      if (experts == 0) throw InputError(f.label + ": " + arch + ".expert_count", fmt::format("is missing or 0 but layer {} holds expert tensors", il));
      ff.experts = static_cast<uint32_t>(experts);
      ff.experts_per_token = static_cast<uint32_t>(used);
      const bool is_down = starts(up->name.substr(up->name.find('.', 4) + 1), "ffn_down");
      ff.expert_width = meta.opt("expert_feed_forward_length", limits::kWidth).value_or(up->ne.size() >= 2 ? (is_down ? up->ne[0] : up->ne[1]) : 0);
      if (const GgufTensor* sh = find_prefix(b, "ffn_down_shexp")) ff.shared_width = sh->ne.empty() ? 0 : sh->ne[0];
      // Experts without a gate (nemotron_h_moe: up and down, build_moe_ffn with gate_exps NULL).
      ff.gated = find_prefix(b, "ffn_gate_exps") || find_prefix(b, "ffn_gate_up_exps") || !find_prefix(b, "ffn_up_exps");
    } else if (const GgufTensor* down = find_prefix(b, "ffn_down")) {
      ff.kind = FeedForwardKind::Dense;
      ff.dense_width = down->ne.empty() ? 0 : down->ne[0];
      // A dense MLP without ffn_gate is two matrices (phi2, gpt2, starcoder2, nemotron_h: build_ffn
      // with gate NULL) unless its ffn_up holds gate and up fused, 2 x the width rows (phi3, chatglm:
      // LLM_FFN_SWIGLU on one up tensor).
      const GgufTensor* dense_up = find_prefix(b, "ffn_up.");
      const bool fused = dense_up && dense_up->ne.size() >= 2 && dense_up->ne[1] == checked_mul(2, ff.dense_width);
      ff.gated = find_prefix(b, "ffn_gate.") || fused || !dense_up;
    }
    for (const auto& [name, t] : b) {  // the layer's parameters and bytes, from its tensors
      const ParamClass c = classify_gguf_tensor(t->name);
      layer.params[c] = checked_add(layer.params[c], t->elements);
      layer.stored_bytes[c] = checked_add(layer.stored_bytes[c], t->bytes);
    }
    m.layers.push_back(std::move(layer));
  }
  if (m.layers.empty()) throw InputError(f.label, "has no layers (block_count is 0)");

  TensorTally tally = tally_gguf(shards);
  // Blocks past the decoder stack are the multi-token-prediction head.
  if (nextn) {
    for (const auto& s : shards) {
      for (const auto& t : s.tensors) {
        auto il = tensor_layer_index(t.name);
        if (!il || !starts(t.name, "blk.") || *il < n_layer) continue;
        ParamClass c = classify_gguf_tensor(t.name);
        tally.params_by_class[c] -= t.elements;
        tally.bytes_by_class[c] -= t.bytes;
        tally.params_by_class[ParamClass::Mtp] = checked_add(tally.params_by_class[ParamClass::Mtp], t.elements);
        tally.bytes_by_class[ParamClass::Mtp] = checked_add(tally.bytes_by_class[ParamClass::Mtp], t.bytes);
      }
    }
  }
  std::string files = shards.size() == 1 ? f.label : fmt::format("{} and {} more split files", f.label, shards.size() - 1);
  tally.write_params(m.params, experts, used, "GGUF tensors (" + files + ")");

  m.id = f.label;
  const GgufValue* name = f.find("general.name");
  m.name = printable(name && name->type == GgufType::String && !name->s.empty() ? name->s : std::filesystem::path(f.label).filename().string());
  m.family = "gguf";
  m.architecture = arch;
  m.inputs = {"text"};
  // The recipe name when the file states one (so --quant Q4_K_M picks these exact bytes), else
  // the storage type holding most bytes.
  const GgufValue* ftype = f.find("general.file_type");
  const std::string recipe = ftype && ftype->as_u64() ? gguf_file_type_name(*ftype->as_u64()) : "";
  m.native.format = recipe.empty() ? tally.dominant_dtype() : recipe;
  m.native.bytes = tally.bytes;
  m.native.measured = true;
  m.native.bytes_by_class = tally.bytes_by_class;
  m.native.source = fmt::format("sum of the {} tensors' exact bytes in {}", tally.tensors, files);
  m.native.note = "GGUF " + tally.dtype_summary();
  for (const auto& s : shards) m.sources.push_back(s.label);
  for (const auto& s : shards) {
    for (const auto& t : s.tensors) m.tensors.push_back({t.name, t.bytes, t.type_name, t.ne});
  }
  if (nextn) m.left_out.push_back(fmt::format("{} multi-token-prediction block(s): counted in the weights, not in the layer stack", nextn));
  return m;
}

}  // namespace vc
