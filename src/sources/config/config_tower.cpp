#include "sources/config/config_tower.h"

#include <fmt/format.h>

#include "core/checked.h"
#include "core/units.h"
#include "sources/config/limits.h"
#include "sources/config/param_terms.h"

namespace vc {
namespace {

constexpr const char* kTransformers = "https://github.com/huggingface/transformers/blob/main/src/transformers/models/";

// Bounded reads from one nested object (vision_config), recorded as "vision_config.KEY" so they
// never overwrite the text model's provenance of the same key.
class Keys {
 public:
  Keys(ConfigView& cfg, const nlohmann::json& obj, std::string path) : cfg_(cfg), obj_(obj), path_(std::move(path)) {}
  bool has(const char* key) const { return obj_.contains(key) && !obj_[key].is_null(); }
  uint64_t need(const char* key, uint64_t max) {
    if (!has(key)) cfg_.fail(path_ + "." + key, "missing; this vision tower needs it");
    return read(key, max);
  }
  uint64_t get_or(const char* key, uint64_t fallback, uint64_t max) { return has(key) ? read(key, max) : fallback; }
  bool flag(const char* key) const { return has(key) && obj_[key].is_boolean() && obj_[key].get<bool>(); }
  std::string text(const char* key) const {
    return has(key) && obj_[key].is_string() ? obj_[key].get<std::string>() : std::string();
  }
  [[noreturn]] void fail(const char* key, const std::string& message) const { cfg_.fail(path_ + "." + key, message); }
  // A list of whole numbers (deepstack_visual_indexes, merge_kernel_size), bounded.
  std::vector<uint64_t> list(const char* key, uint64_t max_len) {
    if (!has(key)) return {};
    return cfg_.u64_list(obj_[key], path_ + "." + key, max_len, limits::kLayers);
  }

 private:
  uint64_t read(const char* key, uint64_t max) {
    const nlohmann::json& v = obj_[key];
    const std::string where = path_ + "." + key;
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) cfg_.fail(where, fmt::format("is {}; a whole number is expected", v.dump()));
    const uint64_t n = v.get<uint64_t>();
    if (n == 0 || n > max) cfg_.fail(where, fmt::format("is {}; accepted: 1 to {}", n, max));
    cfg_.note_source(where, where);
    return n;
  }
  ConfigView& cfg_;
  const nlohmann::json& obj_;
  std::string path_;
};

using census::linear;
using census::Terms;


// A pre-norm ViT block: two norms (LayerNorm: weight and bias; RMSNorm: weight), fused or separate
// q/k/v and the output projection, and a two-matrix or gated MLP.
struct BlockLayout {
  bool layer_norm = true;  // else RMSNorm
  bool attn_bias = true;
  bool gated_mlp = false;
  bool mlp_bias = true;
};
uint64_t block_params(uint64_t h, uint64_t attn_width, uint64_t ffn, const BlockLayout& b) {
  const uint64_t norms = checked_mul(b.layer_norm ? 4 : 2, h);
  const uint64_t attn = checked_add(linear(h, checked_mul(3, attn_width), b.attn_bias), linear(attn_width, h, b.attn_bias));
  const uint64_t mlp = b.gated_mlp ? checked_add(checked_mul(2, linear(h, ffn, b.mlp_bias)), linear(ffn, h, b.mlp_bias))
                                   : checked_add(linear(h, ffn, b.mlp_bias), linear(ffn, h, b.mlp_bias));
  return checked_add(checked_add(norms, attn), mlp);
}
std::string block_words(const BlockLayout& b, uint64_t h, uint64_t ffn) {
  return fmt::format("2 {}, q/k/v/o{}, {} MLP {} x {}{}", b.layer_norm ? "LayerNorms" : "RMSNorms", b.attn_bias ? " with biases" : "",
                     b.gated_mlp ? "gated" : "two-matrix", h, ffn, b.mlp_bias ? " with biases" : "");
}

void add_blocks(Terms& t, uint64_t layers, uint64_t h, uint64_t attn_width, uint64_t ffn, const BlockLayout& b) {
  const uint64_t one = block_params(h, attn_width, ffn, b);
  t.add(fmt::format("{} blocks x {} ({})", layers, format_count(one), block_words(b, h, ffn)), checked_mul(layers, one));
}

// The encoder geometry every layout has, under the layout's key names.
struct GeometryKeys {
  const char* hidden = "hidden_size";
  const char* ffn = "intermediate_size";
  const char* layers = "num_hidden_layers";
  const char* heads = "num_attention_heads";
  const char* patch = "patch_size";  // nullptr: an audio encoder has none
};
TowerSpec read_geometry(Keys& k, const char* kind, uint64_t text_hidden, const GeometryKeys& names) {
  TowerSpec t;
  t.kind = kind;
  t.text_hidden = text_hidden;
  t.hidden = k.need(names.hidden, limits::kHidden);
  t.ffn = k.need(names.ffn, limits::kWidth);
  t.layers = k.need(names.layers, limits::kLayers);
  t.heads = k.need(names.heads, limits::kHeads);
  if (names.patch) t.patch = k.need(names.patch, 4096);
  return t;
}

// The counted terms into the spec, with the module layout they follow.
TowerSpec finish(TowerSpec t, const Terms& encoder, const Terms& projector, std::string source) {
  t.encoder_params = encoder.sum;
  t.projector_params = projector.sum;
  t.formula = encoder.text + "; " + projector.text;
  t.source = std::move(source);
  return t;
}

// Gemma 3: SigLIP without its pooling head, then an RMS-normed linear map into the text width
// (Gemma3MultiModalProjector: mm_soft_emb_norm, mm_input_projection_weight). One image is a fixed
// image_size square of (image_size / patch)^2 patches, pooled to mm_tokens_per_image tokens.
TowerSpec siglip(ConfigView& cfg, Keys& k, uint64_t text_hidden) {
  TowerSpec t = read_geometry(k, "SigLIP", text_hidden, {});
  t.image_size = k.need("image_size", 65536);
  t.channels = k.get_or("num_channels", 3, 64);
  if (t.image_size < t.patch) cfg.fail("vision_config.image_size", "is smaller than patch_size");
  const uint64_t side = t.image_size / t.patch;
  Terms enc, proj;
  enc.add(fmt::format("patch embedding {} x {}^2 x {} + {}", t.channels, t.patch, t.hidden, t.hidden),
          checked_add(checked_product({t.channels, t.patch, t.patch, t.hidden}), t.hidden));
  enc.add(fmt::format("{} positions x {}", format_count(side * side), t.hidden), checked_product({side, side, t.hidden}));
  add_blocks(enc, t.layers, t.hidden, t.hidden, t.ffn, {});
  enc.add("post LayerNorm", 2 * t.hidden);
  proj.add(fmt::format("projector {} x {} + RMSNorm {}", t.hidden, t.text_hidden, t.hidden), checked_add(checked_mul(t.hidden, t.text_hidden), t.hidden));
  const auto tokens = cfg.root().find("mm_tokens_per_image");
  t.tokens_per_image = tokens != cfg.root().end() && tokens->is_number_unsigned() ? tokens->get<uint64_t>() : 256;  // Gemma3Config default
  return finish(t, enc, proj, std::string(kTransformers) + "gemma3/modeling_gemma3.py (SiglipVisionModel without its head, Gemma3MultiModalProjector)");
}

// Mistral 3 (Pixtral encoder): patch convolution without bias, ln_pre, RMS-normed blocks without
// biases and a gated MLP; the projector norms, merges spatial_merge_size^2 patches
// (Mistral3PatchMerger) and maps through two linears (biases per multimodal_projector_bias).
TowerSpec pixtral(ConfigView& cfg, Keys& k, uint64_t text_hidden) {
  TowerSpec t = read_geometry(k, "Pixtral", text_hidden, {});
  t.channels = k.get_or("num_channels", 3, 64);
  const uint64_t head_dim = k.get_or("head_dim", t.hidden / t.heads, limits::kHeadDim);
  const auto& root = cfg.root();
  const uint64_t merge = root.contains("spatial_merge_size") && root["spatial_merge_size"].is_number_unsigned() ? root["spatial_merge_size"].get<uint64_t>() : 2;
  if (merge == 0 || merge > 64) cfg.fail("spatial_merge_size", "must be from 1 to 64");
  const bool bias = root.contains("multimodal_projector_bias") && root["multimodal_projector_bias"].is_boolean() ? root["multimodal_projector_bias"].get<bool>() : true;
  Terms enc, proj;
  enc.add(fmt::format("patch convolution {} x {}^2 x {}", t.channels, t.patch, t.hidden), checked_product({t.channels, t.patch, t.patch, t.hidden}));
  enc.add("ln_pre RMSNorm", t.hidden);
  add_blocks(enc, t.layers, t.hidden, checked_mul(t.heads, head_dim), t.ffn, {.layer_norm = false, .attn_bias = false, .gated_mlp = true, .mlp_bias = false});
  proj.add("projector RMSNorm", t.hidden);
  proj.add(fmt::format("patch merger {} x {}", merge * merge * t.hidden, t.hidden), checked_product({merge, merge, t.hidden, t.hidden}));
  proj.add(fmt::format("linear_1 {} x {}{}", t.hidden, t.text_hidden, bias ? " + bias" : ""), linear(t.hidden, t.text_hidden, bias));
  proj.add(fmt::format("linear_2 {} x {}{}", t.text_hidden, t.text_hidden, bias ? " + bias" : ""), linear(t.text_hidden, t.text_hidden, bias));
  return finish(t, enc, proj, std::string(kTransformers) + "mistral3/modeling_mistral3.py (PixtralVisionModel, Mistral3MultiModalProjector)");
}

// Qwen2.5-VL and Qwen3-VL / Qwen3.5: a Conv3d patch embedding over temporal_patch_size frames,
// blocks of fused qkv with biases, and a merger that concatenates spatial_merge_size^2 patches
// through two linears. Qwen2.5-VL: RMSNorms, a gated MLP, no learned positions, no conv bias.
// Qwen3-VL: LayerNorms, a two-matrix MLP, num_position_embeddings learned positions, a conv bias,
// and one more merger per deepstack_visual_indexes entry (its norm over the merged width).
TowerSpec qwen_vl(Keys& k, uint64_t text_hidden, bool qwen3) {
  TowerSpec t = read_geometry(k, qwen3 ? "Qwen3-VL" : "Qwen2.5-VL", text_hidden, {.layers = "depth", .heads = "num_heads"});
  t.channels = k.has("in_channels") ? k.need("in_channels", 64) : k.get_or("in_chans", 3, 64);
  t.text_hidden = k.get_or("out_hidden_size", t.text_hidden, limits::kHidden);
  const uint64_t frames = k.get_or("temporal_patch_size", 2, 64);
  const uint64_t merge = k.get_or("spatial_merge_size", 2, 64);
  t.spatial_merge = merge;
  t.temporal_patch = frames;
  const uint64_t merged = checked_product({merge, merge, t.hidden});
  Terms enc, proj;
  const uint64_t conv = checked_product({t.channels, frames, t.patch, t.patch, t.hidden});
  enc.add(fmt::format("patch embedding {} x {} x {}^2 x {}{}", t.channels, frames, t.patch, t.hidden, qwen3 ? " + bias" : ""),
          qwen3 ? checked_add(conv, t.hidden) : conv);
  if (qwen3) {
    // A vision_config that names image_size but not num_position_embeddings (Qwen3-Omni's): a grid of
    // (image_size / patch_size)^2 learned positions, as vLLM's Qwen3Omni_VisionTransformer builds
    // pos_embed (qwen3_omni_moe_thinker.py; 768 / 16 gives transformers' default 2304).
    const bool grid = !k.has("num_position_embeddings") && k.has("image_size");
    const uint64_t side = grid ? k.need("image_size", 65536) / t.patch : 0;
    if (grid && side == 0) k.fail("image_size", "is smaller than patch_size");
    const uint64_t positions = grid ? checked_mul(side, side) : k.need("num_position_embeddings", uint64_t{1} << 20);
    enc.add(fmt::format("{} positions x {}", format_count(positions), t.hidden), checked_mul(positions, t.hidden));
  }
  add_blocks(enc, t.layers, t.hidden, t.hidden, t.ffn, {.layer_norm = qwen3, .attn_bias = true, .gated_mlp = !qwen3, .mlp_bias = true});
  const uint64_t merger_linears = checked_add(linear(merged, merged, true), linear(merged, t.text_hidden, true));
  proj.add(fmt::format("merger: {} {}, {} x {} + bias, {} x {} + bias", qwen3 ? "LayerNorm" : "RMSNorm", t.hidden, merged, merged, merged, t.text_hidden),
           checked_add(merger_linears, qwen3 ? 2 * t.hidden : t.hidden));
  const uint64_t deepstack = qwen3 ? k.list("deepstack_visual_indexes", limits::kLayers).size() : 0;
  t.deepstack = deepstack;
  if (deepstack) {
    proj.add(fmt::format("{} DeepStack mergers x (LayerNorm {} + the same linears)", deepstack, merged),
             checked_mul(deepstack, checked_add(merger_linears, 2 * merged)));
  }
  return finish(t, enc, proj,
                std::string(kTransformers) + (qwen3 ? "qwen3_vl/modeling_qwen3_vl.py (Qwen3VLVisionModel)"
                                                    : "qwen2_5_vl/modeling_qwen2_5_vl.py (Qwen2_5_VisionTransformerPretrainedModel)"));
}

// Qwen2-VL (Qwen2VisionTransformerPretrainedModel): the Conv3d patch embedding without bias over
// temporal_patch_size frames, blocks of LayerNorms, fused qkv and proj with biases and a
// two-matrix MLP of embed_dim x mlp_ratio with biases, then the PatchMerger (LayerNorm over
// embed_dim, two linears with biases over spatial_merge_size^2 patches). Its vision_config names
// the encoder width embed_dim and the output width hidden_size.
TowerSpec qwen2_vl(Keys& k, uint64_t text_hidden) {
  TowerSpec t;
  t.kind = "Qwen2-VL";
  t.hidden = k.need("embed_dim", limits::kHidden);
  t.ffn = checked_mul(t.hidden, k.get_or("mlp_ratio", 4, 64));
  t.layers = k.need("depth", limits::kLayers);
  t.heads = k.need("num_heads", limits::kHeads);
  t.patch = k.need("patch_size", 4096);
  t.channels = k.get_or("in_chans", 3, 64);
  t.text_hidden = k.get_or("hidden_size", text_hidden, limits::kHidden);
  const uint64_t frames = k.get_or("temporal_patch_size", 2, 64);
  const uint64_t merge = k.get_or("spatial_merge_size", 2, 64);
  t.spatial_merge = merge;
  t.temporal_patch = frames;
  const uint64_t merged = checked_product({merge, merge, t.hidden});
  Terms enc, proj;
  enc.add(fmt::format("patch embedding {} x {} x {}^2 x {}", t.channels, frames, t.patch, t.hidden), checked_product({t.channels, frames, t.patch, t.patch, t.hidden}));
  add_blocks(enc, t.layers, t.hidden, t.hidden, t.ffn, {});
  proj.add(fmt::format("merger: LayerNorm {}, {} x {} + bias, {} x {} + bias", t.hidden, merged, merged, merged, t.text_hidden),
           checked_add(2 * t.hidden, checked_add(linear(merged, merged, true), linear(merged, t.text_hidden, true))));
  return finish(t, enc, proj, std::string(kTransformers) + "qwen2_vl/modeling_qwen2_vl.py (Qwen2VisionTransformerPretrainedModel, PatchMerger)");
}

// The vt_-prefixed names of Kimi K2.5's and K3's vision_config.
const GeometryKeys kMoonVit3dKeys = {"vt_hidden_size", "vt_intermediate_size", "vt_num_hidden_layers", "vt_num_attention_heads", "patch_size"};

// What every MoonViT has before its blocks: the patch convolution (3 x P^2 x H, + H with
// `conv_bias`) and the init_pos_emb_height x width grid of learned positions, into `enc`; returns
// the width of the merge_kernel_size patches the projector takes as one.
uint64_t moonvit_front(ConfigView& cfg, Keys& k, const TowerSpec& t, bool conv_bias, Terms& enc) {
  const uint64_t grid_h = k.need("init_pos_emb_height", 4096), grid_w = k.need("init_pos_emb_width", 4096);
  const std::vector<uint64_t> kernel = k.list("merge_kernel_size", 2);
  if (kernel.size() != 2 || kernel[0] == 0 || kernel[1] == 0) cfg.fail("vision_config.merge_kernel_size", "must be two positive numbers, e.g. [2, 2]");
  enc.add(fmt::format("patch embedding 3 x {}^2 x {}{}", t.patch, t.hidden, conv_bias ? fmt::format(" + {}", t.hidden) : ""),
          linear(checked_product({3, t.patch, t.patch}), t.hidden, conv_bias));
  enc.add(fmt::format("{} x {} positions x {}", grid_h, grid_w, t.hidden), checked_product({grid_h, grid_w, t.hidden}));
  return checked_product({kernel[0], kernel[1], t.hidden});
}

// Kimi K2.5 (MoonViT): a SigLIP-sized encoder with an init_pos_emb_height x width grid of learned
// positions (interpolated per image) and a "patchmerger" projector: LayerNorm, then two linears
// over merge_kernel_size patches.
TowerSpec moonvit(ConfigView& cfg, Keys& k, uint64_t text_hidden, bool kimi_vl) {
  // Kimi-VL's vision_config (model_type moonvit) names the geometry plainly; Kimi K2.5's with vt_.
  TowerSpec t = read_geometry(k, "MoonViT", text_hidden, kimi_vl ? GeometryKeys{} : kMoonVit3dKeys);
  t.text_hidden = k.get_or("text_hidden_size", t.text_hidden, limits::kHidden);
  Terms enc, proj;
  const uint64_t merged = moonvit_front(cfg, k, t, true, enc);
  add_blocks(enc, t.layers, t.hidden, t.hidden, t.ffn, {});
  enc.add("final LayerNorm", 2 * t.hidden);
  proj.add(fmt::format("patchmerger: LayerNorm {}, {} x {} + bias, {} x {} + bias", t.hidden, merged, merged, merged, t.text_hidden),
           checked_add(2 * t.hidden, checked_add(linear(merged, merged, true), linear(merged, t.text_hidden, true))));
  return finish(t, enc, proj, kimi_vl ? "https://huggingface.co/moonshotai/Kimi-VL-A3B-Instruct/blob/main/modeling_kimi_vl.py (MoonVitPretrainedModel, KimiVLMultiModalProjector)"
                                     : "https://huggingface.co/moonshotai/Kimi-K2.5/blob/main/modeling_kimi_k25.py (MoonViT3dPretrainedModel, the patchmerger projector)");
}

// Kimi K3 (MoonViT3d with the "patchmergerv2" projector): the K2.5 encoder's plan with its attention
// width set apart (qkv_hidden_size: wqkv hidden x 3 x qkv, wo qkv x hidden), RMSNorms, and the
// biases the config switches off (patch_embed_proj_bias, attn_bias, linear_bias); the positions are
// an init_pos_emb_height x width grid of learned vectors (the time positions, a fixed sinusoid, are a
// buffer, not weights); the projector maps merge_kernel_size patches of mm_hidden_size through
// linear_1 (square) and linear_2 into the text width without biases, then an RMSNorm there. Not
// counted: rot_proj, a text-width square linear one implementation loads only when a checkpoint
// carries it.
TowerSpec moonvit_v2(ConfigView& cfg, Keys& k, uint64_t text_hidden) {
  TowerSpec t = read_geometry(k, "MoonViT3d", text_hidden, kMoonVit3dKeys);
  t.text_hidden = k.get_or("text_hidden_size", t.text_hidden, limits::kHidden);
  const uint64_t attn_width = k.get_or("qkv_hidden_size", t.hidden, limits::kWidth);
  const uint64_t mm_hidden = k.get_or("mm_hidden_size", t.hidden, limits::kHidden);
  if (mm_hidden != t.hidden) cfg.fail("vision_config.mm_hidden_size", fmt::format("is {}; the projector reads the encoder's output, so it must equal vt_hidden_size {}", mm_hidden, t.hidden));
  const std::string norm = k.text("norm_type");
  if (!norm.empty() && norm != "rmsnorm" && norm != "layernorm") cfg.fail("vision_config.norm_type", fmt::format("is \"{}\"; accepted: rmsnorm, layernorm", norm));
  const bool layer_norm = norm == "layernorm";
  const bool attn_bias = k.flag("attn_bias"), mlp_bias = k.flag("linear_bias");
  const uint64_t norm_params = layer_norm ? 2 * t.hidden : t.hidden;
  Terms enc, proj;
  const uint64_t merged = moonvit_front(cfg, k, t, k.flag("patch_embed_proj_bias"), enc);
  add_blocks(enc, t.layers, t.hidden, attn_width, t.ffn, {.layer_norm = layer_norm, .attn_bias = attn_bias, .gated_mlp = false, .mlp_bias = mlp_bias});
  enc.add(fmt::format("final {}", layer_norm ? "LayerNorm" : "RMSNorm"), norm_params);
  proj.add(fmt::format("patchmergerv2: linear_1 {} x {}, linear_2 {} x {}, RMSNorm {}", merged, merged, merged, t.text_hidden, t.text_hidden),
           checked_add(checked_add(checked_mul(merged, merged), checked_mul(merged, t.text_hidden)), t.text_hidden));
  return finish(t, enc, proj,
                "https://huggingface.co/moonshotai/Kimi-K3 config.json vision_config; module layout as the xLLM engine builds it "
                "(https://github.com/jd-opensource/xllm: KimiK3VisionTower, KimiK3VisionEncoderLayer, KimiK3MultiModalProjector)");
}

// Llama 4 (Llama4VisionModel): an unfolded patch linear without bias, a class token, learned
// positions for (image_size / patch)^2 + 1 tokens, LayerNorms before and after, blocks with biases
// everywhere and a two-matrix MLP; then the pixel-shuffle adapter (Llama4VisionMLP2: fc1 from
// intermediate_size, the pixel-shuffled width, to projector_input_dim, fc2 to
// projector_output_dim, no biases) and the multimodal projector (linear_1, vision_output_dim into
// the text width, no bias).
TowerSpec llama4_vision(Keys& k, uint64_t text_hidden) {
  TowerSpec t = read_geometry(k, "Llama 4", text_hidden, {});
  t.image_size = k.need("image_size", 65536);
  t.channels = k.get_or("num_channels", 3, 64);
  const uint64_t side = t.image_size / t.patch;
  const uint64_t positions = checked_add(checked_mul(side, side), 1);
  const uint64_t adapter_in = k.need("projector_input_dim", limits::kWidth), adapter_out = k.need("projector_output_dim", limits::kWidth);
  const uint64_t output = k.need("vision_output_dim", limits::kWidth);
  Terms enc, proj;
  enc.add(fmt::format("patch linear {} x {}^2 x {}", t.channels, t.patch, t.hidden), checked_product({t.channels, t.patch, t.patch, t.hidden}));
  enc.add("class embedding", t.hidden);
  enc.add(fmt::format("{} positions x {}", format_count(positions), t.hidden), checked_mul(positions, t.hidden));
  enc.add("LayerNorms pre and post", 4 * t.hidden);
  add_blocks(enc, t.layers, t.hidden, t.hidden, t.ffn, {});
  proj.add(fmt::format("pixel-shuffle adapter fc1 {} x {}, fc2 {} x {}", t.ffn, adapter_in, adapter_out, adapter_out),
           checked_add(checked_mul(t.ffn, adapter_in), checked_mul(adapter_out, adapter_out)));
  proj.add(fmt::format("projector linear_1 {} x {}", output, t.text_hidden), checked_mul(output, t.text_hidden));
  return finish(t, enc, proj, std::string(kTransformers) + "llama4/modeling_llama4.py (Llama4VisionModel, Llama4VisionPixelShuffleMLP, Llama4MultiModalProjector)");
}

// Qwen2.5-Omni's audio encoder (Qwen2_5OmniAudioEncoder): Qwen2-Audio's Whisper-style blocks
// (Qwen2_5OmniAudioEncoderLayer: LayerNorms, q/v/o with biases and k without, a two-matrix MLP with
// biases) behind conv1 and conv2 with biases, but its positions are sinusoids in a buffer that is
// not saved (SinusoidsPositionEmbedding, persistent=False: no parameters); two learned
// audio_bos_eos_token rows of output_dim; after the blocks the avg_pooler (no parameters), ln_post
// (LayerNorm) and proj, a linear with bias into output_dim, the thinker's width.
TowerSpec qwen25_omni_audio(Keys& k, uint64_t text_hidden) {
  TowerSpec t = read_geometry(k, "Qwen2.5-Omni audio", text_hidden, {"d_model", "encoder_ffn_dim", "encoder_layers", "encoder_attention_heads", nullptr});
  t.channels = k.need("num_mel_bins", 4096);
  t.text_hidden = k.get_or("output_dim", text_hidden, limits::kHidden);
  const uint64_t h = t.hidden;
  Terms enc, proj;
  enc.add(fmt::format("conv1 {} x {} x 3 + bias, conv2 {} x {} x 3 + bias", t.channels, h, h, h),
          checked_add(linear(checked_mul(t.channels, 3), h, true), linear(checked_mul(h, 3), h, true)));
  enc.add("sinusoidal positions (an unsaved buffer)", 0);
  const uint64_t block = checked_add(checked_add(checked_mul(4, h), checked_add(checked_mul(4, checked_mul(h, h)), 3 * h)),
                                     checked_add(linear(h, t.ffn, true), linear(t.ffn, h, true)));
  enc.add(fmt::format("{} blocks x {} (2 LayerNorms, q/v/o with biases and k without, two-matrix MLP {} x {} with biases)", t.layers, format_count(block), h, t.ffn),
          checked_mul(t.layers, block));
  enc.add("ln_post LayerNorm", 2 * h);
  proj.add(fmt::format("audio_bos_eos_token 2 x {}", t.text_hidden), checked_mul(2, t.text_hidden));
  proj.add(fmt::format("proj {} x {} + bias", h, t.text_hidden), linear(h, t.text_hidden, true));
  t = finish(t, enc, proj, std::string(kTransformers) + "qwen2_5_omni/modeling_qwen2_5_omni.py (Qwen2_5OmniAudioEncoder)");
  t.formula += fmt::format("; total {}", format_count(t.params()));
  return t;
}

// Qwen3-Omni's AuT audio encoder (Qwen3OmniMoeAudioEncoder): three Conv2d of kernel 3 x 3 with
// biases over the mel spectrogram as one channel (1 -> downsample_hidden_size -> D -> D, stride 2
// each), conv_out, a linear without bias from D x the thrice-halved mel bins
// (((mel + 1) / 2 + 1) / 2 + 1) / 2 to d_model; sinusoidal positions in an unsaved buffer; blocks of
// LayerNorms, q/k/v/o all with biases (Qwen3OmniMoeAudioAttention) and a two-matrix MLP with
// biases; ln_post; then proj1 (d_model x d_model + bias) and proj2 (d_model x output_dim + bias)
// into the thinker's width.
TowerSpec qwen3_omni_audio(Keys& k, uint64_t text_hidden) {
  TowerSpec t = read_geometry(k, "Qwen3-Omni audio", text_hidden, {"d_model", "encoder_ffn_dim", "encoder_layers", "encoder_attention_heads", nullptr});
  t.channels = k.need("num_mel_bins", 4096);
  t.text_hidden = k.get_or("output_dim", text_hidden, limits::kHidden);
  const uint64_t d = k.need("downsample_hidden_size", limits::kWidth);
  const uint64_t bins = (((t.channels + 1) / 2 + 1) / 2 + 1) / 2;
  const uint64_t h = t.hidden;
  Terms enc, proj;
  enc.add(fmt::format("conv2d1 1 x {} x 3 x 3 + bias, conv2d2 and conv2d3 {} x {} x 3 x 3 + bias", d, d, d),
          checked_add(linear(9, d, true), checked_mul(2, linear(checked_mul(9, d), d, true))));
  enc.add(fmt::format("conv_out {} x {} ({} x {} mel bins after three halvings)", checked_mul(d, bins), h, d, bins), checked_product({d, bins, h}));
  enc.add("sinusoidal positions (an unsaved buffer)", 0);
  const uint64_t block = checked_add(checked_add(checked_mul(4, h), checked_mul(4, linear(h, h, true))), checked_add(linear(h, t.ffn, true), linear(t.ffn, h, true)));
  enc.add(fmt::format("{} blocks x {} (2 LayerNorms, q/k/v/o with biases, two-matrix MLP {} x {} with biases)", t.layers, format_count(block), h, t.ffn),
          checked_mul(t.layers, block));
  enc.add("ln_post LayerNorm", 2 * h);
  proj.add(fmt::format("proj1 {} x {} + bias, proj2 {} x {} + bias", h, h, h, t.text_hidden), checked_add(linear(h, h, true), linear(h, t.text_hidden, true)));
  t = finish(t, enc, proj, std::string(kTransformers) + "qwen3_omni_moe/modeling_qwen3_omni_moe.py (Qwen3OmniMoeAudioEncoder)");
  t.formula += fmt::format("; total {}", format_count(t.params()));
  return t;
}

}  // namespace

std::optional<TowerSpec> config_audio_tower(ConfigView& cfg, uint64_t text_hidden) {
  const nlohmann::json& root = cfg.root();
  const auto it = root.find("audio_config");
  if (it == root.end() || !it->is_object()) return std::nullopt;
  Keys k(cfg, *it, "audio_config");
  const std::string type = k.has("model_type") ? k.text("model_type") : root.value("model_type", "");
  if (type == "qwen2_5_omni_audio_encoder" || type == "qwen2_5_omni") return qwen25_omni_audio(k, text_hidden);
  if (type == "qwen3_omni_moe_audio_encoder" || type == "qwen3_omni_moe") return qwen3_omni_audio(k, text_hidden);
  if (type != "qwen2_audio_encoder") return std::nullopt;
  // Qwen2-Audio (Qwen2AudioEncoder, Whisper's encoder): two Conv1d of kernel 3 with biases over
  // num_mel_bins, max_source_positions learned positions, blocks of LayerNorms, q/v/o with biases
  // and k without, a two-matrix MLP with biases, a final LayerNorm; the projector is one linear
  // with bias into the text width (Qwen2AudioMultiModalProjector).
  TowerSpec t = read_geometry(k, "Qwen2-Audio", text_hidden, {"d_model", "encoder_ffn_dim", "encoder_layers", "encoder_attention_heads", nullptr});
  t.channels = k.need("num_mel_bins", 4096);
  const uint64_t positions = k.need("max_source_positions", uint64_t{1} << 20);
  t.positions = positions;
  const uint64_t h = t.hidden;
  Terms enc, proj;
  enc.add(fmt::format("conv1 {} x {} x 3 + bias, conv2 {} x {} x 3 + bias", t.channels, h, h, h),
          checked_add(linear(checked_mul(t.channels, 3), h, true), linear(checked_mul(h, 3), h, true)));
  enc.add(fmt::format("{} positions x {}", format_count(positions), h), checked_mul(positions, h));
  const uint64_t block = checked_add(checked_add(checked_mul(4, h), checked_add(checked_mul(4, checked_mul(h, h)), 3 * h)),
                                     checked_add(linear(h, t.ffn, true), linear(t.ffn, h, true)));
  enc.add(fmt::format("{} blocks x {} (2 LayerNorms, q/v/o with biases and k without, two-matrix MLP {} x {} with biases)", t.layers, format_count(block), h, t.ffn),
          checked_mul(t.layers, block));
  enc.add("final LayerNorm", 2 * h);
  proj.add(fmt::format("projector {} x {} + bias", h, t.text_hidden), linear(h, t.text_hidden, true));
  t = finish(t, enc, proj, std::string(kTransformers) + "qwen2_audio/modeling_qwen2_audio.py (Qwen2AudioEncoder, Qwen2AudioMultiModalProjector)");
  t.formula += fmt::format("; total {}", format_count(t.params()));
  return t;
}

std::optional<TowerSpec> config_tower(ConfigView& cfg, uint64_t text_hidden) {
  const nlohmann::json& root = cfg.root();
  const auto it = root.find("vision_config");
  if (it == root.end() || !it->is_object()) return std::nullopt;
  Keys k(cfg, *it, "vision_config");
  // The tower's own model_type; Qwen2.5-VL's published vision_config has none: its model's then.
  const std::string type = k.has("model_type") ? k.text("model_type") : root.value("model_type", "");
  const std::string projector = k.text("mm_projector_type");
  const bool siglip_head = it->contains("vision_use_head") && (*it)["vision_use_head"].is_boolean() && (*it)["vision_use_head"].get<bool>();
  std::optional<TowerSpec> t;
  if (type == "siglip_vision_model" && !siglip_head && root.value("model_type", "").rfind("gemma3", 0) == 0) t = siglip(cfg, k, text_hidden);
  else if (type == "pixtral") t = pixtral(cfg, k, text_hidden);
  else if (type == "qwen2_vl") t = qwen2_vl(k, text_hidden);
  else if (type == "qwen2_5_vl" || type == "qwen2_5_omni_vision_encoder" || type == "qwen2_5_omni") t = qwen_vl(k, text_hidden, false);  // Omni: Qwen2.5-VL's ViT
  else if (type == "qwen3_vl" || type == "qwen3_vl_moe" || type == "qwen3_5" || type == "qwen3_5_moe") t = qwen_vl(k, text_hidden, true);
  else if (type == "qwen3_omni_moe_vision_encoder" || type == "qwen3_omni_moe") {  // Qwen3-Omni: Qwen3-VL's ViT with DeepStack mergers
    t = qwen_vl(k, text_hidden, true);
    t->kind = "Qwen3-Omni vision";
    t->source = std::string(kTransformers) + "qwen3_omni_moe/modeling_qwen3_omni_moe.py (Qwen3OmniMoeVisionEncoder)";
  }
  else if (k.has("vt_hidden_size") && projector == "patchmerger") t = moonvit(cfg, k, text_hidden, false);
  else if (k.has("vt_hidden_size") && projector == "patchmergerv2") t = moonvit_v2(cfg, k, text_hidden);
  else if (type == "moonvit" && root.value("model_type", "") == "kimi_vl") t = moonvit(cfg, k, text_hidden, true);  // its projector is Kimi-VL's
  else if (type == "llama4_vision_model") t = llama4_vision(k, text_hidden);
  if (t) t->formula += fmt::format("; total {}", format_count(t->params()));
  return t;
}

void count_config_tower(ConfigView& cfg) {
  Model& m = cfg.model();
  const nlohmann::json& root = cfg.root();
  if (root.contains("audio_config") && root["audio_config"].is_object()) {
    if (const std::optional<TowerSpec> a = config_audio_tower(cfg, m.hidden)) {
      // An audio encoder loads like a vision tower: beside the text weights, not active per token.
      m.params.by_class[ParamClass::Vision] = checked_add(m.params.by_class[ParamClass::Vision], a->params());
      m.params.derived_total = checked_add(m.params.derived_total, a->params());
      m.provenance["params.audio"] = fmt::format("{} audio_config ({}): {}; layout: {}", cfg.label(), a->kind, a->formula, a->source);
      m.audio_encoder = AudioEncoderSpec{a->kind, a->hidden, a->ffn, a->layers, a->channels, a->positions, a->text_hidden};
    } else {
      cfg.warn(std::string(kTowerNotCountedWarning) + "this audio_config's layout is not modelled (counted: Qwen2-Audio's and Qwen2.5-Omni's Whisper-style encoders, Qwen3-Omni's AuT); the parameters leave it out");
    }
  }
  if (!root.contains("vision_config") || !root["vision_config"].is_object()) return;
  const std::optional<TowerSpec> t = config_tower(cfg, m.hidden);
  if (!t) {
    cfg.warn(std::string(kTowerNotCountedWarning) +
             "this vision_config's layout is not modelled (counted: Gemma 3 SigLIP, Pixtral, Qwen2-VL, Qwen2.5-VL, Qwen3-VL / Qwen3.5 / Qwen3-Omni, Kimi K2.5 and Kimi-VL MoonViT, "
             "Kimi K3 MoonViT3d, Llama 4); "
             "the parameters leave it out");
    return;
  }
  m.params.by_class[ParamClass::Vision] = checked_add(m.params.by_class[ParamClass::Vision], t->params());
  m.params.derived_total = checked_add(m.params.derived_total, t->params());
  m.vision_encoder = VisionEncoderSpec{t->kind, t->hidden, t->ffn, t->layers, t->patch, t->channels, t->temporal_patch, t->spatial_merge, t->text_hidden,
                                       t->deepstack};
  m.provenance["vision_config"] = fmt::format("{} vision_config: {} encoder, {} layers, and its projector", cfg.label(), t->kind, t->layers);
  m.provenance["params.vision"] = fmt::format("{} vision_config ({}): {}; layout: {}", cfg.label(), t->kind, t->formula, t->source);
}

bool tower_from_config(const Model& model) { return model.provenance.count("vision_config") > 0; }

}  // namespace vc
