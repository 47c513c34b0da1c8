#pragma once
// Blocks that many families share: reading grouped-query attention geometry, embeddings, the
// expert count and top-k under their various key names, and tallying a routed-expert layer. Each
// family file still says which blocks it has and where; these only keep the arithmetic in one place.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/param_tally.h"
#include "sources/config/config_view.h"

namespace vc::families {

struct GqaGeometry {
  uint64_t heads = 0;
  uint64_t kv_heads = 0;
  uint64_t head_dim = 0;
};

// num_attention_heads, num_key_value_heads (absent => heads, i.e. MHA, the transformers default),
// head_dim (absent => hidden / heads, the transformers and llama.cpp default). `head_dim_key`
// names the key a family uses (Nemotron-H: attention_head_dim).
GqaGeometry read_gqa(ConfigView& cfg, uint64_t hidden, const std::string& head_dim_key = "head_dim");
// The same for a family whose transformers config class has defaults of its own (Gemma 3: 8 heads,
// 4 KV heads, head_dim 256, which google/gemma-3-4b-it's published config.json leaves out): an
// absent key takes its value from `defaults`, and the answer says so with `why`.
GqaGeometry read_gqa_or(ConfigView& cfg, const GqaGeometry& defaults, const std::string& why);

AttentionSpec full_attention(const GqaGeometry& g);
// Multi-head latent attention (DeepSeek-V2/V3, Kimi-Linear's full layers) from config.json's
// num_attention_heads, q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
// the index keys of a sparse indexer are the caller's.
AttentionSpec latent_attention(uint64_t heads, uint64_t q_lora, uint64_t kv_lora, uint64_t nope, uint64_t rope, uint64_t v_dim);
AttentionSpec window_attention(const GqaGeometry& g, uint64_t window);

// The output head: stored (untied) or the embedding read again (tied: active, not stored twice).
void tally_output_head(ParamTally& tally, const Model& m);
// Reads vocab_size, hidden_size, tie_word_embeddings into the model; tallies the input embedding
// (0 active: a lookup), the output head (tally_output_head), and the final norm.
void read_embeddings(ConfigView& cfg, ParamTally& tally, bool tied_default = false);

// The first present key among `keys`, required; the message names them all when none is.
uint64_t first_u64(ConfigView& cfg, const std::vector<std::string>& keys, uint64_t max);

struct MoeGeometry {
  uint64_t experts = 0;
  uint64_t top_k = 0;
  uint64_t expert_width = 0;
  uint64_t shared_width = 0;  // total width of the shared expert(s), 0 if none
};

// Checks top_k <= experts (naming `top_k_key`).
void check_moe(ConfigView& cfg, const MoeGeometry& g, const std::string& top_k_key);
FeedForwardSpec moe_spec(const MoeGeometry& g);
FeedForwardSpec dense_spec(uint64_t width);

// The layers of a plain decoder with a non-gated MLP (Phi, GPT-2, GPT-NeoX, StarCoder2, Falcon):
// `layers` alike, each full attention of `g` (rotary or not) and a two-matrix MLP of `width` (up,
// activation, down: FeedForwardSpec::gated false), with each layer's parameters given whole.
struct NonGatedLayer {
  uint64_t attention = 0;  // q, k, v, o and their biases
  uint64_t mlp = 0;        // up and down and their biases
  uint64_t norms = 0;      // the layer's norms
  bool rotary = true;      // false: learned absolute positions (GPT-2) or ALiBi (some Falcons)
};
// The layers of a plain decoder with a gated (GLU) dense MLP of `width` (Cohere, OLMo 2): each full
// attention of `g` with `attention` parameters and `norms` of its own.
void add_dense_glu_layers(ParamTally& tally, Model& m, uint64_t layers, const GqaGeometry& g, uint64_t width, uint64_t attention, uint64_t norms);
void add_non_gated_layers(ParamTally& tally, Model& m, uint64_t layers, const GqaGeometry& g, uint64_t width, const NonGatedLayer& each);

// A gated (SwiGLU) MoE layer: all experts in the total, k of them active; shared experts and the
// router (n x hidden, + n when `router_bias`) always active.
void tally_glu_moe(ParamTally& tally, uint64_t hidden, const MoeGeometry& g, bool router_bias);

// A gated feed-forward: the routed-expert layer of `moe` when `sparse`, else a dense GLU of
// `dense_width`. Tallies its parameters and returns its spec.
FeedForwardSpec glu_feed_forward(ParamTally& tally, uint64_t hidden, bool sparse, const MoeGeometry& moe, uint64_t dense_width,
                                 bool router_bias);

// MTP / next-token-prediction modules: each is one more decoder layer (`decoder_layer(tally, i)` tallies the i-th)
// plus a 2h -> h projection and `norms` norms of width hidden. Shipped in the checkpoint, unused by
// plain decoding: counted as ParamClass::Mtp with nothing active, and kept out of the layer stack.
// `copied_vocab` > 0: the checkpoint stores the module's own embedding and output-head copies
// (vocab x hidden each; DeepSeek-V3 and GLM-4.5 ship model.layers.N.embed_tokens and shared_head.head).
void tally_mtp_layers(ParamTally& tally, uint64_t count, uint64_t hidden, uint64_t norms,
                      const std::function<void(ParamTally&, uint64_t)>& decoder_layer, uint64_t copied_vocab = 0);
// Whether the `count` MTP layers keep their own embedding and output-head copies, which config.json
// does not say: the entry's stated fact (cfg.stored()), else `family_default` for the reason `why`.
// Records the answer and its source (provenance "params.mtp copies") and the copies' count
// (Params::mtp_copies); returns the vocab rows for tally_mtp_layers (0: not stored).
uint64_t mtp_copied_vocab(ConfigView& cfg, uint64_t count, bool family_default, const std::string& why);

// Which model layers are MoE in Qwen-style configs: not in mlp_only_layers, and
// (i + 1) % decoder_sparse_step == 0.
std::vector<bool> qwen_moe_layers(ConfigView& cfg, uint64_t layers);

// Layer kinds from a list of `count` strings under `key` (layer_types unless named); each must be one
// of `accepted`.
std::vector<std::string> read_layer_types(ConfigView& cfg, uint64_t count, const std::vector<std::string>& accepted,
                                          const std::string& key = "layer_types");

}  // namespace vc::families
