#pragma once
// A model is data: a stack of layers (attention kind + feed-forward kind), embeddings, parameter
// counts with their sources, the native checkpoint and known builds, and what is confirmed or
// assumed about it. Every family is mapped into this one structure (src/sources/config/).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/checked.h"

namespace vc {

enum class AttentionKind { Full, SlidingWindow, Latent, LinearState, None };
const char* to_string(AttentionKind kind);

// Which recurrence a LinearState mixer runs (it sizes the state and its working set).
enum class StateFamily { Unknown, KDA, GatedDeltaNet, Mamba2, Mamba1 };
const char* to_string(StateFamily family);  // "KDA", "GatedDeltaNet", "Mamba2", "Mamba1", "linear"

// What one layer's token mixer keeps in memory. Only the fields of its kind are meaningful.
struct AttentionSpec {
  AttentionKind kind = AttentionKind::None;
  // Full and SlidingWindow: K and V per token are kv_heads * head_dim_k and kv_heads * head_dim_v.
  uint32_t kv_heads = 0;
  uint32_t query_heads = 0;  // attention heads (0: not read); sizes activations, not the cache
  uint32_t head_dim_k = 0;
  uint32_t head_dim_v = 0;
  uint64_t window = 0;  // SlidingWindow: tokens kept
  // Full and SlidingWindow: Q and K rotated by position (RoPE). False for position-free layers
  // (Granite 4.0 H and Nemotron-H attention): no positions input, no rotation in llama.cpp's graph.
  bool rotary = true;
  // Latent (MLA): one shared vector of latent_rank + rope_dim values per token, plus index keys
  // of index_key_dim values for sparse attention (DeepSeek-V3.2 style indexer).
  uint32_t latent_rank = 0;
  uint32_t rope_dim = 0;
  uint32_t index_key_dim = 0;
  uint32_t index_topk = 0;  // sparse selection: cuts compute, not storage
  // LinearState: a fixed state per sequence, independent of context.
  StateFamily state_family = StateFamily::Unknown;
  uint64_t state_values = 0;  // recurrent matrix values per sequence
  uint64_t conv_values = 0;   // short-convolution values per sequence
  // Latent (MLA) projections as config.json gives them, 0 where not read (GGUF): q_lora_rank (0 with
  // value_dim set: no query compression, a plain q_proj), qk_nope_head_dim and v_head_dim. Engines
  // that lay out the MLA tensors per rank read them (SGLang keeps the down-projections whole).
  uint32_t query_rank = 0;
  uint32_t nope_dim = 0;
  uint32_t value_dim = 0;
  uint32_t index_heads = 0;  // the sparse-attention indexer's query heads (index_n_heads), 0 where not read
  // Full: a sigmoid output gate that doubles q_proj (Qwen3-Next and Qwen3.5 attn_output_gate).
  bool output_gate = false;
  // LinearState: the mixer's projection geometry as config.json gives it (0 where not read: GGUF),
  // for engines that size buffers per projection (vLLM's LoRA slots, engines/vllm_lora.h).
  //   GatedDeltaNet: mixer_heads value heads of mixer_head_dim, mixer_key_heads key heads of mixer_key_dim
  //   Mamba2: mixer_heads heads of mixer_head_dim (d_inner), mixer_groups groups of mixer_state (B, C)
  //   Mamba1: mixer_heads 1 of mixer_head_dim (d_inner), mixer_state, mixer_dt_rank
  //   every family: conv_kernel, the short convolution's width
  uint32_t mixer_heads = 0, mixer_head_dim = 0, mixer_key_heads = 0, mixer_key_dim = 0;
  uint32_t mixer_groups = 0, mixer_state = 0, mixer_dt_rank = 0, conv_kernel = 0;

  // Cached values per token of context (K+V for full/window, latent+rope+index for latent);
  // bytes per token at a cache type: model/layer_memory.h.
  uint64_t values_per_token() const;
  bool operator==(const AttentionSpec&) const = default;
  bool grows_with_context() const { return kind == AttentionKind::Full || kind == AttentionKind::Latent; }
};

enum class FeedForwardKind { Dense, MoE, None };

struct FeedForwardSpec {
  FeedForwardKind kind = FeedForwardKind::None;
  uint64_t dense_width = 0;      // Dense: intermediate size
  uint32_t experts = 0;          // MoE: routed experts
  uint32_t experts_per_token = 0;
  uint64_t expert_width = 0;     // MoE: one routed expert's intermediate size
  uint64_t shared_width = 0;     // MoE: total width of the shared expert(s), 0 if none
  // Gated (SwiGLU / GeGLU: gate, up and down, three matrices) or not (up and down, two: fc1 / fc2
  // of Phi-1/1.5/2, Nemotron-H's squared-ReLU MLP and its experts). Dense MLP, routed and shared
  // experts of one layer alike; the mapper or reader says which.
  bool gated = true;
  // Rows of the first projection at `width`: gate and up fused (2 x width) when gated, up alone
  // (width) when not: vLLM's MergedColumnParallelLinear gate_up_proj vs ColumnParallelLinear fc1 /
  // up_proj, and the fused experts' w13 (FusedMoE create_weights: "2 * intermediate_size_per_partition
  // if is_act_and_mul else intermediate_size_per_partition").
  uint64_t up_rows(uint64_t width) const { return gated ? checked_mul(2, width) : width; }
  bool operator==(const FeedForwardSpec&) const = default;
};

enum class ParamClass { Embedding, OutputHead, Attention, DenseMlp, RoutedExperts, SharedExperts, Router, Norms, Vision, Mtp, Other };
const char* to_string(ParamClass c);

// One decoder layer. Canonical shape whatever the source (config.json or GGUF): `attention` is the
// layer's attention when it has one, and a hybrid-head layer's recurrent mixer is parallel_mixer.
struct LayerConfig {
  AttentionSpec attention;
  // Hybrid-head layers (Falcon-H1) run a second mixer in parallel: counted too.
  std::optional<AttentionSpec> parallel_mixer;
  FeedForwardSpec feed_forward;
  // This layer's weight parameters by class, as the mapper derived them from the geometry or the
  // reader summed them from the tensors (empty when the source gives none).
  std::map<ParamClass, uint64_t> params;
  // Stored bytes by class, where the tensors were read (GGUF); empty otherwise.
  std::map<ParamClass, uint64_t> stored_bytes;
  uint64_t param_count() const;
  bool operator==(const LayerConfig&) const = default;
};


struct StatedFigure {
  uint64_t value = 0;
  std::string source;
};

// Active-parameter convention (one for every entry; docs/accuracy.md): what one decoded token reads.
// Excludes the input embedding (a lookup of one row), MTP layers and vision towers; includes the
// output head (a tied head counts once, as the head: decode reads the whole matrix), attention,
// dense MLPs, shared experts, routers, norms, and k of n routed experts.
inline constexpr const char* kActiveConvention =
    "excludes the input embedding lookup, MTP layers and the vision tower; includes the output head (tied or not), "
    "attention, dense MLP, shared experts, router, norms and k-of-n routed experts";

struct Params {
  std::map<ParamClass, uint64_t> by_class;         // derived from geometry or tensors
  std::map<ParamClass, uint64_t> active_by_class;  // the parts of derived_active
  uint64_t derived_total = 0;               // language model + vision + MTP as shipped
  uint64_t derived_active = 0;              // per token, kActiveConvention
  // Parameters the checkpoint stores a second time and engines load once: a tied output head saved
  // again as lm_head.weight (Qwen3 0.6B/1.7B). In the download, not in derived_total (what is loaded).
  uint64_t stored_copies = 0;
  // Of by_class[Mtp]: the MTP layers' own embedding and output-head copies (DeepSeek-V3, GLM-4.5
  // store them; GLM-4.6 and GLM-5 do not). Kept at the checkpoint's 16-bit dtype beside FP8 layers.
  uint64_t mtp_copies = 0;
  std::string derived_source;               // "config.json geometry", "safetensors headers", ...
  std::optional<StatedFigure> stated_total;   // the vendor's word, shown beside the derived figure
  std::optional<StatedFigure> stated_active;
  std::string stated_convention;              // how the vendor's active figure differs, where it does
  std::string difference_note;                // why derived and stated differ by more than 1%, where they do
  // The figure the arithmetic uses: derived from the geometry or tensors (exact); the vendor's
  // rounded word only when nothing could be derived.
  uint64_t total() const { return derived_total ? derived_total : (stated_total ? stated_total->value : 0); }
  uint64_t active() const { return derived_active ? derived_active : (stated_active ? stated_active->value : 0); }
  std::string total_source() const { return derived_total || !stated_total ? derived_source : stated_total->source; }
  std::string active_source() const { return derived_active || !stated_active ? derived_source : stated_active->source; }
  // "1.026T (vendor: 1T)": the figure used with the vendor's word beside it, where stated.
  std::string total_text() const;
  std::string active_text() const;
  // The active figure by its parts: "output head 1.17B + attention 11.4B + routed experts 8 of 384 ...".
  std::string active_parts_text() const;
};

struct Checkpoint {
  std::string format;     // native tier name, e.g. "MXFP4", "BF16", "FP8"
  uint64_t bytes = 0;
  bool measured = false;  // summed from the real files, not derived from parameters
  std::string source;
  std::string note;       // e.g. "MXFP4 on routed experts only; bf16 elsewhere"
  // Bytes of Params::stored_copies: in the files, not loaded. `bytes` is what an engine loads;
  // download_bytes() what the repository holds.
  uint64_t copy_bytes = 0;
  uint64_t download_bytes() const;
  // Bytes per parameter class where known (summed tensors, or derived from quantization_config):
  // a mixed checkpoint keeps bf16 attention beside 4-bit experts, so a planner places by these.
  std::map<ParamClass, uint64_t> bytes_by_class;
};

struct Build {
  std::string name;       // "UD-IQ1_S"
  std::string format;     // "GGUF"
  uint64_t bytes = 0;
  std::string source;
  std::string note;
};

struct ConfirmedFact {
  std::string spec;
  std::string value;
  std::string whose_word;
};

struct OpenQuestion {
  std::string question;
  std::string what_we_can_say;
};

// One stored tensor by name (GGUF: llama.cpp's names), for engines that place tensors by name.
struct NamedTensor {
  std::string name;
  uint64_t bytes = 0;
  std::string type;          // GGUF storage type ("Q4_0"); empty when not read from a file
  std::vector<uint64_t> ne;  // GGUF shape in ggml order; empty when not read from a file
};

// Whether the weights exist to be downloaded: only released weights get engine command lines or
// a "fits" verdict; the others are estimated from what the vendor said, and every verb says why.
enum class ReleaseStatus { Released, Announced, Withdrawn };
const char* to_string(ReleaseStatus s);
// "announced, weights unavailable" / "withdrawn": the words a user reads.
std::string status_text(ReleaseStatus s);

// An audio encoder counted from config.json's audio_config, with the geometry an engine's profile
// run needs (src/sources/config/config_tower.cpp writes it; the vLLM profile reads it).
struct AudioEncoderSpec {
  std::string kind;          // "Qwen2-Audio", "Qwen2.5-Omni audio", "Qwen3-Omni audio"
  uint64_t hidden = 0;       // d_model
  uint64_t ffn = 0;          // encoder_ffn_dim
  uint64_t layers = 0;       // encoder_layers
  uint64_t mel_bins = 0;     // num_mel_bins
  uint64_t positions = 0;    // max_source_positions: the encoder's positions per 30 s clip (Whisper-style)
  uint64_t text_hidden = 0;  // the projector's output width
};

// A vision tower counted from config.json's vision_config, with the geometry an engine's profile
// run needs (config_tower.cpp writes it; vLLM's profile of the Qwen2-VL / Qwen2.5-VL / Qwen3-VL towers reads it).
struct VisionEncoderSpec {
  std::string kind;             // TowerSpec::kind: "Qwen2.5-VL", "Qwen2-VL", "SigLIP", ...
  uint64_t hidden = 0;          // the encoder's width
  uint64_t ffn = 0;             // its MLP's intermediate width
  uint64_t layers = 0;
  uint64_t patch = 0;           // patch side in pixels
  uint64_t channels = 0;        // input channels (3)
  uint64_t temporal_patch = 0;  // frames one patch spans (Qwen-VL: temporal_patch_size); 0 otherwise
  uint64_t spatial_merge = 0;   // Qwen-VL: patches per side merged into one token; 0 otherwise
  uint64_t text_hidden = 0;     // the projector's output width
  uint64_t deepstack = 0;       // Qwen3-VL: DeepStack mergers; the tower's output is (1 + deepstack) x text_hidden a token
};

// Rotary position embedding as config.json gives it (rope_scaling, or transformers v5's
// rope_parameters, and partial_rotary_factor), for engines that build a cos/sin table from it
// (vLLM's get_rope: engines/vllm_rope.h). Defaults: no scaling, every head dimension rotated.
struct RopeSpec {
  std::string type = "default";     // rope_type (or type): default, linear, dynamic, yarn, llama3, longrope, ...
  double factor = 1.0;              // the scaling factor, where the type has one
  uint64_t original_positions = 0;  // original_max_position_embeddings (0: not given)
  double partial_rotary_factor = 1.0;
  // Gemma 3: the sliding-window layers rotate with their own base (rope_local_base_freq) and no
  // scaling, so they need a table of their own beside the global layers'.
  bool sliding_own_table = false;
  // The config's max_position_embeddings where a catalogue entry states a shorter native context
  // in Model::max_context (Qwen3: 40,960 in the config, 32,768 on the card); 0: max_context is the
  // config's. The engines size their tables from the config (rope_positions below).
  uint64_t max_positions = 0;
};

struct Model {
  std::string id;            // catalogue id, "kimi-k3.1-pro"
  std::string name;          // "Kimi K3.1 Pro"
  std::string family;        // the mapper that read it, "kimi_linear"
  std::string architecture;  // config model_type / GGUF general.architecture
  std::vector<LayerConfig> layers;
  uint64_t vocab = 0;
  uint64_t hidden = 0;
  bool tied_embeddings = false;
  Params params;
  Checkpoint native;
  std::vector<Build> builds;
  uint64_t max_context = 0;  // max_position_embeddings (GGUF: context_length); a catalogue entry may state its native context
  RopeSpec rope;
  // The positions the engines' rotary tables are built for: the config's max_position_embeddings.
  uint64_t rope_positions() const { return rope.max_positions ? rope.max_positions : max_context; }
  std::vector<std::string> inputs;      // "text", "image"
  std::optional<AudioEncoderSpec> audio_encoder;  // counted from audio_config; nullopt: none
  std::optional<VisionEncoderSpec> vision_encoder;  // counted from vision_config; nullopt: none, or a tower a catalogue entry states
  std::string license;
  ReleaseStatus status = ReleaseStatus::Released;
  std::string status_note;  // why, with its source ("weights promised by Nov 4, 2026; repo returns 401")
  std::vector<ConfirmedFact> confirmed;
  std::vector<OpenQuestion> assumed;
  std::vector<std::string> left_out;    // what an estimate does not count (vision encoder, ...)
  std::vector<std::string> sources;     // URLs and documents the entry rests on
  std::map<std::string, std::string> provenance;  // input -> where it came from
  std::vector<std::string> warnings;    // fields guessed by a fallback reading
  std::vector<NamedTensor> tensors;     // GGUF only: every tensor, for llama.cpp placement
  std::vector<std::string> notes;

  uint64_t layer_count(AttentionKind kind) const;
  const Build* find_build(const std::string& name) const;
  bool weights_available() const { return status == ReleaseStatus::Released; }
};

}  // namespace vc
