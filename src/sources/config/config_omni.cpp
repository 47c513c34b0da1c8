#include "sources/config/config_omni.h"

#include <fmt/format.h>

#include <vector>

#include "core/checked.h"
#include "core/units.h"
#include "sources/config/config_omni3.h"
#include "sources/config/limits.h"
#include "sources/config/param_terms.h"
#include "sources/config/sub_config.h"

namespace vc {
namespace {

constexpr const char* kOmniModeling =
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen2_5_omni/modeling_qwen2_5_omni.py";

using Sub = census::SubConfig;
using census::conv;
using census::linear;
using census::Terms;

// Qwen2_5OmniToken2WavDiTModel: time_embed (DiTTimestepEmbedding: 256 -> H -> H), text_embed (the
// codec's num_embeds + 1 rows of emb_dim), input_embed (proj from mel + enc_dim + enc_emb_dim +
// emb_dim to H, and the ECAPA_TimeDelayNet speaker encoder), the DiTDecoderLayer blocks
// (AdaLayerNormZero's H x 6H linear, to_q/k/v/out with biases, an affine-free LayerNorm, a
// two-matrix GELU MLP of H x ff_mult H), norm_out (H x 2H) and proj_out (H x mel); the rotary
// table is an unsaved buffer.
uint64_t dit_params(ConfigView& cfg, Sub& d, std::string& text) {
  const uint64_t h = d.get({"hidden_size", "dim"}, limits::kHidden, 1024);
  const uint64_t layers = d.get({"num_hidden_layers", "depth"}, limits::kLayers, 22);
  const uint64_t heads = d.get({"num_attention_heads", "heads"}, limits::kHeads, 16);
  const uint64_t head_dim = d.get({"head_dim"}, limits::kHeadDim, 64);
  const uint64_t ff_mult = d.get({"ff_mult"}, 64, 2);
  const uint64_t emb_dim = d.get({"emb_dim"}, limits::kHidden, 512);
  const uint64_t num_embeds = d.get({"num_embeds"}, limits::kVocab, 8193);
  const uint64_t mel = d.get({"mel_dim"}, 4096, 80);
  const uint64_t enc_emb_dim = d.get({"enc_emb_dim"}, limits::kHidden, 192);
  const uint64_t enc_dim = d.get({"enc_dim"}, limits::kHidden, 128);
  const std::vector<uint64_t> ch = d.list("enc_channels", {256, 256, 256, 256, 768});
  const std::vector<uint64_t> ks = d.list("enc_kernel_sizes", {5, 3, 3, 3, 1});
  const uint64_t attention_ch = d.get({"enc_attention_channels"}, limits::kWidth, 64);
  const uint64_t scale = d.get({"enc_res2net_scale"}, 64, 2);
  const uint64_t se = d.get({"enc_se_channels"}, limits::kWidth, 64);
  if (ch.size() < 2 || ch.size() != ks.size()) cfg.fail(d.path() + ".enc_channels", "must have two or more entries, as many as enc_kernel_sizes");
  // ECAPA_TimeDelayNet: a TDNN conv from mel, SE-Res2Net blocks (tdnn1 1x1, scale - 1 convs over
  // one scale-th of the channels, tdnn2 1x1, squeeze-excitation 1x1 down to se and back), the
  // aggregating TDNN, attentive statistics pooling (3C -> attention -> C) and fc (2C -> enc_dim).
  uint64_t ecapa = conv(mel, ch[0], ks[0]);
  for (std::size_t i = 1; i + 1 < ch.size(); ++i) {
    const uint64_t c = ch[i], part = ch[i] / scale;
    ecapa = checked_add(ecapa, checked_add(checked_add(conv(ch[i - 1], c, 1), checked_mul(scale - 1, conv(part, part, ks[i]))),
                                           checked_add(conv(c, c, 1), checked_add(conv(c, se, 1), conv(se, c, 1)))));
  }
  const uint64_t last = ch.back();
  ecapa = checked_add(ecapa, checked_add(checked_add(conv(last, last, ks.back()), conv(checked_mul(3, last), attention_ch, 1)),
                                         checked_add(conv(attention_ch, last, 1), conv(checked_mul(2, last), enc_dim, 1))));
  const uint64_t inner = checked_mul(heads, head_dim), ff = checked_mul(h, ff_mult);
  const uint64_t block = checked_add(checked_add(linear(h, checked_mul(6, h), true), checked_add(checked_mul(3, linear(h, inner, true)), linear(inner, h, true))),
                                     checked_add(linear(h, ff, true), linear(ff, h, true)));
  Terms t;
  t.add(fmt::format("time_embed 256 x {} + {} x {} with biases", h, h, h), checked_add(linear(256, h, true), linear(h, h, true)));
  t.add(fmt::format("codec embedding {} x {}", num_embeds + 1, emb_dim), checked_mul(num_embeds + 1, emb_dim));
  t.add(fmt::format("input proj {} x {} + bias", mel + enc_dim + enc_emb_dim + emb_dim, h), linear(checked_add(checked_add(mel, enc_dim), checked_add(enc_emb_dim, emb_dim)), h, true));
  t.add("ECAPA-TDNN speaker encoder", ecapa);
  t.add(fmt::format("{} blocks x {} (AdaLayerNormZero {} x {}, q/k/v/out {} x {} with biases, MLP {} x {} with biases)", layers, format_count(block), h, 6 * h, h, inner, h, ff),
        checked_mul(layers, block));
  t.add(fmt::format("norm_out {} x {} + bias, proj_out {} x {} + bias", h, 2 * h, h, mel), checked_add(linear(h, checked_mul(2, h), true), linear(h, mel, true)));
  text = fmt::format("DiT: {}; DiT total {}{}", t.text, format_count(t.sum), d.defaults_text());
  return t.sum;
}

// Qwen2_5OmniToken2WavBigVGANModel: conv_pre (mel -> C, kernel 7, bias), per upsample stage i a
// ConvTranspose1d C/2^i -> C/2^(i+1) of upsample_kernel_sizes[i] with bias and one AMPBlock per
// resblock kernel (three dilated and three plain convs of that kernel with biases, six SnakeBeta
// activations of alpha and beta per channel; their anti-aliasing filters are unsaved buffers),
// activation_post (a SnakeBeta) and conv_post (-> 1 channel, kernel 7, no bias).
uint64_t bigvgan_params(ConfigView& cfg, Sub& b, std::string& text) {
  const uint64_t mel = b.get({"mel_dim"}, 4096, 80);
  const uint64_t c0 = b.get({"upsample_initial_channel"}, limits::kWidth, 1536);
  const std::vector<uint64_t> kernels = b.list("resblock_kernel_sizes", {3, 7, 11});
  const std::vector<uint64_t> rates = b.list("upsample_rates", {5, 3, 2, 2, 2, 2});
  const std::vector<uint64_t> up_kernels = b.list("upsample_kernel_sizes", {11, 7, 4, 4, 4, 4});
  if (rates.size() != up_kernels.size() || rates.empty()) cfg.fail(b.path() + ".upsample_rates", "must be as many as upsample_kernel_sizes, at least one");
  if (rates.size() >= 64 || (c0 >> rates.size()) == 0) cfg.fail(b.path() + ".upsample_initial_channel", "must stay at least 1 after halving once per upsample stage");
  Terms t;
  t.add(fmt::format("conv_pre {} x {} x 7 + bias", mel, c0), conv(mel, c0, 7));
  uint64_t ups = 0, resblocks = 0;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const uint64_t in = c0 >> i, out = c0 >> (i + 1);
    ups = checked_add(ups, conv(in, out, up_kernels[i]));
    for (uint64_t k : kernels) resblocks = checked_add(resblocks, checked_add(checked_mul(6, conv(out, out, k)), checked_mul(12, out)));
  }
  const uint64_t last = c0 >> rates.size();
  t.add(fmt::format("{} upsampling ConvTranspose1d with biases", rates.size()), ups);
  t.add(fmt::format("{} AMPBlocks (6 convs with biases, 6 SnakeBeta alpha and beta)", checked_mul(rates.size(), kernels.size())), resblocks);
  t.add(fmt::format("activation_post 2 x {}, conv_post {} x 7", last, last), checked_add(checked_mul(2, last), checked_mul(last, 7)));
  text = fmt::format("BigVGAN: {}; BigVGAN total {}{}", t.text, format_count(t.sum), b.defaults_text());
  return t.sum;
}

}  // namespace

bool is_qwen25_omni(const nlohmann::json& config) {
  const auto type = config.find("model_type");
  const auto thinker = config.find("thinker_config");
  return type != config.end() && type->is_string() && type->get<std::string>() == "qwen2_5_omni" && thinker != config.end() && thinker->is_object();
}

bool is_qwen_omni(const nlohmann::json& config) { return is_qwen25_omni(config) || is_qwen3_omni(config); }

nlohmann::json omni_thinker_view(const nlohmann::json& config) {
  nlohmann::json view = config.at("thinker_config");
  for (const auto& [key, value] : config.items()) {
    if (key != "thinker_config" && !view.contains(key)) view[key] = value;
  }
  view["model_type"] = config.at("model_type");
  return view;
}

std::optional<TalkerSpec> config_talker(ConfigView& cfg) {
  const auto it = cfg.root().find("talker_config");
  if (it == cfg.root().end() || !it->is_object()) return std::nullopt;
  Sub t(cfg, *it, "talker_config");
  const uint64_t hidden = t.get({"hidden_size"}, limits::kHidden);
  const uint64_t layers = t.get({"num_hidden_layers"}, limits::kLayers);
  const uint64_t heads = t.get({"num_attention_heads"}, limits::kHeads);
  const uint64_t kv_heads = t.get({"num_key_value_heads"}, limits::kHeads, 4);  // Qwen2_5OmniTalkerConfig's defaults
  const uint64_t head_dim = t.get({"head_dim"}, limits::kHeadDim, 128);
  const uint64_t ffn = t.get({"intermediate_size"}, limits::kWidth);
  const uint64_t vocab = t.get({"vocab_size"}, limits::kVocab);
  // embedding_size: the thinker's width, which the talker's embedding and input projection take.
  const uint64_t embedding = t.get({"embedding_size"}, limits::kHidden);
  const uint64_t q = checked_mul(heads, head_dim), kv = checked_mul(kv_heads, head_dim);
  // Qwen2_5OmniDecoderLayer: q/k/v with biases, o without; the gated Qwen2MLP without biases; two RMSNorms.
  const uint64_t attention = checked_add(checked_add(linear(hidden, q, true), checked_mul(2, linear(hidden, kv, true))), linear(q, hidden, false));
  const uint64_t mlp = checked_mul(3, checked_mul(hidden, ffn));
  const uint64_t layer = checked_add(checked_add(attention, mlp), checked_mul(2, hidden));
  TalkerSpec s;
  const uint64_t proj = linear(embedding, hidden, true), embed = checked_mul(vocab, embedding), head = checked_mul(hidden, vocab);
  s.params = checked_add(checked_add(checked_add(proj, embed), checked_mul(layers, layer)), checked_add(hidden, head));
  s.formula = fmt::format(
      "thinker_to_talker_proj {} x {} + bias = {}; embed_tokens {} x {} = {}; {} layers x {} (q {} x {} + bias, k/v {} x {} + bias, o {} x {}, "
      "gated MLP 3 x {} x {}, 2 RMSNorms) = {}; final RMSNorm {}; codec_head {} x {} = {}; total {}; layout: {} "
      "(Qwen2_5OmniTalkerForConditionalGeneration)",
      embedding, hidden, format_count(proj), vocab, embedding, format_count(embed), layers, format_count(layer), hidden, q, hidden, kv, q, hidden, hidden, ffn,
      format_count(checked_mul(layers, layer)), hidden, hidden, vocab, format_count(head), format_count(s.params), kOmniModeling);
  s.formula += t.defaults_text();
  return s;
}

std::optional<Token2WavSpec> config_token2wav(ConfigView& cfg) {
  const auto it = cfg.root().find("token2wav_config");
  if (it == cfg.root().end() || !it->is_object()) return std::nullopt;
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const auto dit = it->find("dit_config"), bigvgan = it->find("bigvgan_config");
  Sub d(cfg, dit != it->end() && dit->is_object() ? *dit : kEmpty, "token2wav_config.dit_config");
  Sub b(cfg, bigvgan != it->end() && bigvgan->is_object() ? *bigvgan : kEmpty, "token2wav_config.bigvgan_config");
  Token2WavSpec s;
  std::string dit_text, bigvgan_text;
  s.dit = dit_params(cfg, d, dit_text);
  s.bigvgan = bigvgan_params(cfg, b, bigvgan_text);
  s.formula = fmt::format("{}; {}; total {}; layout: {} (Qwen2_5OmniToken2WavModel)", dit_text, bigvgan_text, format_count(s.params()), kOmniModeling);
  return s;
}

void note_qwen25_omni_parts(ConfigView& cfg) {
  Model& m = cfg.model();
  const std::optional<TalkerSpec> talker = config_talker(cfg);
  const std::optional<Token2WavSpec> token2wav = config_token2wav(cfg);
  std::string parts;
  if (talker) {
    m.provenance["params.talker"] = fmt::format("{} talker_config: {}", cfg.label(), talker->formula);
    parts = fmt::format("the talker ({} params)", format_params(talker->params));
  }
  if (token2wav) {
    m.provenance["params.token2wav"] = fmt::format("{} token2wav_config: {}", cfg.label(), token2wav->formula);
    parts += fmt::format("{}token2wav ({} params: DiT {} + BigVGAN {}; transformers runs it in float32, {})", parts.empty() ? "" : " and ",
                         format_params(token2wav->params()), format_params(token2wav->dit), format_params(token2wav->bigvgan),
                         format_bytes(checked_mul(4, token2wav->params())));
  }
  if (parts.empty()) return;
  const std::string loads =
      "vLLM serves the thinker only (Qwen2_5OmniThinkerForConditionalGeneration skips the talker. and token2wav. weights), "
      "llama.cpp the text model and an mmproj with the vision and audio encoders; transformers' Qwen2_5OmniForConditionalGeneration "
      "loads them too when it speaks (enable_audio_output)";
  m.left_out.push_back(fmt::format("speech output: {} ship in the checkpoint, outside the weights counted here: {}", parts, loads));
  cfg.warn(std::string(kOmniSpeechPartsWarning) + parts + " ship in the checkpoint beside the thinker; the weights count the thinker alone: " + loads);
}

}  // namespace vc
