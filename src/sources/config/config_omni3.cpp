#include "sources/config/config_omni3.h"

#include <fmt/format.h>

#include <vector>

#include "core/checked.h"
#include "core/units.h"
#include "sources/config/config_omni.h"
#include "sources/config/limits.h"
#include "sources/config/param_terms.h"
#include "sources/config/sub_config.h"

namespace vc {
namespace {

constexpr const char* kModeling =
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen3_omni_moe/modeling_qwen3_omni_moe.py";

using Sub = census::SubConfig;
using census::conv;
using census::linear;
using census::Terms;

// q (heads x head_dim), k and v (kv_heads x head_dim) and o back to h, biases per attention_bias:
// the talker's Qwen3OmniMoeThinkerTextAttention, the code predictor's and code2wav's attention.
uint64_t attention(uint64_t h, uint64_t heads, uint64_t kv_heads, uint64_t head_dim, bool bias) {
  const uint64_t q = checked_mul(heads, head_dim), kv = checked_mul(kv_heads, head_dim);
  return checked_add(checked_add(linear(h, q, bias), checked_mul(2, linear(h, kv, bias))), linear(q, h, bias));
}

// Qwen3OmniMoeTalkerCodePredictorModelForConditionalGeneration: layers of q/k/v/o with q_norm and
// k_norm over head_dim, a gated MLP (Qwen3OmniMoeMLP, no biases) and two RMSNorms, a final norm,
// and num_code_groups - 1 codec embeddings and as many lm_heads (one per residual codebook).
uint64_t code_predictor(Sub& p, std::string& text) {
  // Qwen3OmniMoeTalkerCodePredictorConfig's defaults.
  const uint64_t h = p.get({"hidden_size"}, limits::kHidden, 1024);
  const uint64_t layers = p.get({"num_hidden_layers"}, limits::kLayers, 5);
  const uint64_t heads = p.get({"num_attention_heads"}, limits::kHeads, 16);
  const uint64_t kv_heads = p.get({"num_key_value_heads"}, limits::kHeads, 8);
  const uint64_t head_dim = p.get({"head_dim"}, limits::kHeadDim, 128);
  const uint64_t ffn = p.get({"intermediate_size"}, limits::kWidth, 3072);
  const uint64_t vocab = p.get({"vocab_size"}, limits::kVocab, 2048);
  const uint64_t groups = p.get({"num_code_groups"}, 1024, 32);
  const bool bias = p.flag("attention_bias", false);
  const uint64_t layer = checked_add(checked_add(attention(h, heads, kv_heads, head_dim, bias), 2 * head_dim),
                                     checked_add(checked_mul(3, checked_mul(h, ffn)), checked_mul(2, h)));
  Terms t;
  t.add(fmt::format("{} layers x {} (q {} x {}, k/v {} x {}, o, q/k norms {}, gated MLP 3 x {} x {}, 2 RMSNorms)", layers, format_count(layer), h,
                    heads * head_dim, h, kv_heads * head_dim, head_dim, h, ffn),
        checked_mul(layers, layer));
  t.add("final RMSNorm", h);
  t.add(fmt::format("{} codec embeddings and {} lm_heads of {} x {}", groups - 1, groups - 1, vocab, h),
        checked_product({2, groups - 1, vocab, h}));
  text = fmt::format("code predictor: {}; code predictor total {}{}", t.text, format_count(t.sum), p.defaults_text());
  return t.sum;
}

// Qwen3OmniMoeCode2Wav's SnakeBeta decoder after the conv from hidden to decoder_dim: per
// upsample_rates entry i a block of SnakeBeta (alpha, beta) over decoder_dim / 2^i channels, a
// ConvTranspose1d to half of them of kernel 2 x rate with bias, and three residual units (dilations
// 1, 3, 9: SnakeBeta, kernel-7 conv, SnakeBeta, kernel-1 conv, convs with biases); then SnakeBeta
// and a kernel-7 conv to one channel with bias.
uint64_t code2wav_decoder(ConfigView& cfg, Sub& c, uint64_t hidden, std::string& text) {
  const uint64_t dim = c.get({"decoder_dim"}, limits::kWidth, 1536);
  const std::vector<uint64_t> rates = c.list("upsample_rates", {8, 5, 4, 3});
  if (rates.size() >= 64 || (dim >> rates.size()) == 0) cfg.fail(c.path() + ".decoder_dim", "must stay at least 1 after halving once per upsample_rates entry");
  uint64_t blocks = 0;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const uint64_t in = dim >> i, out = dim >> (i + 1);
    const uint64_t unit = checked_add(checked_mul(4, out), checked_add(conv(out, out, 7), conv(out, out, 1)));
    blocks = checked_add(blocks, checked_add(checked_add(checked_mul(2, in), conv(in, out, checked_mul(2, rates[i]))), checked_mul(3, unit)));
  }
  const uint64_t last = dim >> rates.size();
  Terms t;
  t.add(fmt::format("conv {} x {} x 7 + bias", hidden, dim), conv(hidden, dim, 7));
  t.add(fmt::format("{} decoder blocks (SnakeBeta, ConvTranspose1d of kernel 2 x rate, 3 residual units)", rates.size()), blocks);
  t.add(fmt::format("SnakeBeta 2 x {}, conv {} x 1 x 7 + bias", last, last), checked_add(checked_mul(2, last), conv(last, 1, 7)));
  text = fmt::format("decoder: {}; decoder total {}", t.text, format_count(t.sum));
  return t.sum;
}

}  // namespace

bool is_qwen3_omni(const nlohmann::json& config) {
  const auto type = config.find("model_type");
  const auto thinker = config.find("thinker_config");
  return type != config.end() && type->is_string() && type->get<std::string>() == "qwen3_omni_moe" && thinker != config.end() && thinker->is_object();
}

std::optional<Qwen3TalkerSpec> config_qwen3_talker(ConfigView& cfg) {
  const auto it = cfg.root().find("talker_config");
  if (it == cfg.root().end() || !it->is_object()) return std::nullopt;
  Sub t(cfg, *it, "talker_config");
  Sub x(cfg, t.object("text_config"), "talker_config.text_config");
  Sub p(cfg, t.object("code_predictor_config"), "talker_config.code_predictor_config");
  const uint64_t h = x.get({"hidden_size"}, limits::kHidden);
  const uint64_t layers = x.get({"num_hidden_layers"}, limits::kLayers);
  const uint64_t heads = x.get({"num_attention_heads"}, limits::kHeads);
  const uint64_t kv_heads = x.get({"num_key_value_heads"}, limits::kHeads, 2);  // Qwen3OmniMoeTalkerTextConfig's default
  const uint64_t head_dim = x.get({"head_dim"}, limits::kHeadDim, h / heads);  // the attention's getattr(config, "head_dim", hidden // heads)
  // transformers 5 writes num_experts as num_local_experts (Qwen3OmniMoeTalkerTextConfig.attribute_map).
  const uint64_t experts = x.get({"num_experts", "num_local_experts"}, limits::kExperts);
  const uint64_t expert_width = x.get({"moe_intermediate_size"}, limits::kWidth);
  const uint64_t shared_width = x.get({"shared_expert_intermediate_size"}, limits::kWidth);
  const uint64_t vocab = x.get({"vocab_size"}, limits::kVocab);
  const uint64_t resize = x.get({"intermediate_size"}, limits::kWidth, 2048);  // the resize MLPs' width; Qwen3OmniMoeTalkerTextConfig's default
  const bool bias = x.flag("attention_bias", false);
  const uint64_t thinker_hidden = t.get({"thinker_hidden_size"}, limits::kHidden, 2048);  // Qwen3OmniMoeTalkerConfig's default
  // Qwen3OmniMoeTalkerDecoderLayer: every layer sparse (its mlp is always the
  // Qwen3OmniMoeTalkerTextSparseMoeBlock): router E x H, experts E x 3 x H x F (gate_up, down), a
  // gated shared expert 3 x H x S and its 1 x H gate; q/k norms over head_dim; two RMSNorms.
  const uint64_t moe = checked_add(checked_add(checked_mul(experts, h), checked_product({experts, 3, h, expert_width})),
                                   checked_add(checked_product({3, h, shared_width}), h));
  const uint64_t layer = checked_add(checked_add(attention(h, heads, kv_heads, head_dim, bias), 2 * head_dim), checked_add(moe, checked_mul(2, h)));
  const uint64_t projection = checked_add(linear(thinker_hidden, resize, true), linear(resize, h, true));
  Terms d;
  d.add(fmt::format("codec_embedding {} x {}", vocab, h), checked_mul(vocab, h));
  d.add(fmt::format("{} layers x {} (q {} x {}, k/v {} x {}, o, q/k norms {}, router {} x {}, {} experts x 3 x {} x {}, shared expert 3 x {} x {} and "
                    "its gate {}, 2 RMSNorms)",
                    layers, format_count(layer), h, heads * head_dim, h, kv_heads * head_dim, head_dim, experts, h, experts, h, expert_width, h,
                    shared_width, h),
        checked_mul(layers, layer));
  d.add("final RMSNorm", h);
  d.add(fmt::format("text_projection and hidden_projection, each {} x {} + bias, {} x {} + bias", thinker_hidden, resize, resize, h),
        checked_mul(2, projection));
  d.add(fmt::format("codec_head {} x {}", h, vocab), checked_mul(h, vocab));
  Qwen3TalkerSpec s;
  s.decoder = d.sum;
  std::string predictor_text;
  s.code_predictor = code_predictor(p, predictor_text);
  s.formula = fmt::format("decoder: {}; decoder total {}{}{}; {}; total {}; layout: {} (Qwen3OmniMoeTalkerForConditionalGeneration)", d.text,
                          format_count(d.sum), x.defaults_text(), t.defaults_text(), predictor_text, format_count(s.params()), kModeling);
  return s;
}

std::optional<Code2WavSpec> config_code2wav(ConfigView& cfg) {
  const auto it = cfg.root().find("code2wav_config");
  if (it == cfg.root().end() || !it->is_object()) return std::nullopt;
  Sub c(cfg, *it, "code2wav_config");
  // Qwen3OmniMoeCode2WavConfig's defaults.
  const uint64_t h = c.get({"hidden_size"}, limits::kHidden, 1024);
  const uint64_t layers = c.get({"num_hidden_layers"}, limits::kLayers, 8);
  const uint64_t heads = c.get({"num_attention_heads"}, limits::kHeads, 16);
  const uint64_t kv_heads = c.get({"num_key_value_heads"}, limits::kHeads, 16);
  const uint64_t head_dim = c.get({"head_dim"}, limits::kHeadDim, h / heads);  // getattr(config, "head_dim", hidden // heads)
  const uint64_t ffn = c.get({"intermediate_size"}, limits::kWidth, 3072);
  const uint64_t codebook = c.get({"codebook_size"}, limits::kVocab, 2048);
  const uint64_t quantizers = c.get({"num_quantizers"}, 1024, 16);
  const bool bias = c.flag("attention_bias", false);
  const std::vector<uint64_t> ratios = c.list("upsampling_ratios", {2, 2});
  // Qwen3OmniMoeCode2WavTransformerLayer: attention (identity q/k norms), a gated MLP, two RMSNorms
  // and two layer scales of H each.
  const uint64_t layer = checked_add(checked_add(attention(h, heads, kv_heads, head_dim, bias), checked_product({3, h, ffn})), checked_mul(4, h));
  // Per upsampling_ratios entry r: ConvTranspose1d H -> H of kernel r with bias, then a ConvNeXt
  // block (depthwise kernel-7 conv with bias, LayerNorm, H x 4H and 4H x H with biases, gamma H).
  uint64_t upsample = 0;
  for (uint64_t r : ratios) {
    // depthwise conv 7H + H, LayerNorm 2H, gamma H, then the two pointwise linears.
    const uint64_t convnext = checked_add(checked_mul(11, h), checked_add(linear(h, checked_mul(4, h), true), linear(checked_mul(4, h), h, true)));
    upsample = checked_add(upsample, checked_add(conv(h, h, r), convnext));
  }
  Terms t;
  t.add(fmt::format("code_embedding {} x {} x {}", codebook, quantizers, h), checked_product({codebook, quantizers, h}));
  t.add(fmt::format("pre_transformer {} layers x {} (q {} x {}, k/v {} x {}, o, gated MLP 3 x {} x {}, 2 RMSNorms, 2 layer scales) + final RMSNorm {}", layers,
                    format_count(layer), h, heads * head_dim, h, kv_heads * head_dim, h, ffn, h),
        checked_add(checked_mul(layers, layer), h));
  t.add(fmt::format("{} upsampling stages (ConvTranspose1d {} x {} x ratio + bias, ConvNeXt block)", ratios.size(), h, h), upsample);
  std::string decoder_text;
  const uint64_t decoder = code2wav_decoder(cfg, c, h, decoder_text);
  Code2WavSpec s;
  s.params = checked_add(t.sum, decoder);
  s.formula = fmt::format("{}; {}; total {}{}; layout: {} (Qwen3OmniMoeCode2Wav)", t.text, decoder_text, format_count(s.params), c.defaults_text(), kModeling);
  return s;
}

void note_qwen3_omni_parts(ConfigView& cfg) {
  Model& m = cfg.model();
  const auto output = cfg.root().find("enable_audio_output");
  if (output != cfg.root().end() && output->is_boolean() && !output->get<bool>()) {
    m.provenance["speech_output"] = fmt::format(
        "{}: enable_audio_output false: Qwen3OmniMoeForConditionalGeneration builds no talker and no code2wav (enable_talker is not called); none counted",
        cfg.label());
    return;
  }
  const std::optional<Qwen3TalkerSpec> talker = config_qwen3_talker(cfg);
  const std::optional<Code2WavSpec> code2wav = config_code2wav(cfg);
  std::string parts;
  if (talker) {
    m.provenance["params.talker"] = fmt::format("{} talker_config: {}", cfg.label(), talker->formula);
    parts = fmt::format("the talker ({} params: decoder {} + code predictor {})", format_params(talker->params()), format_params(talker->decoder),
                        format_params(talker->code_predictor));
  }
  if (code2wav) {
    m.provenance["params.code2wav"] = fmt::format("{} code2wav_config: {}", cfg.label(), code2wav->formula);
    parts += fmt::format("{}code2wav ({} params)", parts.empty() ? "" : " and ", format_params(code2wav->params));
  }
  if (parts.empty()) return;
  const std::string loads =
      "vLLM serves the thinker only (Qwen3OmniMoeThinkerForConditionalGeneration skips the talker. and code2wav. weights), SGLang too "
      "(its Qwen3OmniMoeForConditionalGeneration keeps enable_talker False and skips them); transformers' Qwen3OmniMoeForConditionalGeneration "
      "loads them when enable_audio_output is set (enable_talker)";
  m.left_out.push_back(fmt::format("speech output: {} ship in the checkpoint, outside the weights counted here: {}", parts, loads));
  cfg.warn(std::string(kOmniSpeechPartsWarning) + parts + " ship in the checkpoint beside the thinker; the weights count the thinker alone: " + loads);
}

}  // namespace vc
