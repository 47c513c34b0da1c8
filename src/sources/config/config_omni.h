#pragma once
// Qwen2.5-Omni (config.json model_type "qwen2_5_omni", Qwen2_5OmniForConditionalGeneration): one
// checkpoint holds the thinker (thinker_config: a Qwen2 text model in text_config, a Qwen2.5-VL
// vision tower in vision_config, an audio encoder in audio_config), the talker (talker_config: a
// Qwen2-shaped decoder of speech codec tokens) and token2wav (token2wav_config: a DiT and a
// BigVGAN vocoder). The served model is the thinker: vLLM's registry maps the architecture to
// Qwen2_5OmniThinkerForConditionalGeneration, whose loader skips the "talker." and "token2wav."
// weights; llama.cpp loads the text model from its GGUF and the vision and audio encoders from
// one mmproj (projector type qwen2.5o). So the thinker is what the reader maps and counts; the
// talker and token2wav are counted beside it (provenance "params.talker", "params.token2wav",
// Model::left_out), not in the loaded total.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sources/config/config_view.h"

namespace vc {

// Whether `config` is a Qwen2.5-Omni config whose thinker the reader maps.
bool is_qwen25_omni(const nlohmann::json& config);

// Whether `config` is a Qwen2.5-Omni or a Qwen3-Omni (config_omni3.h) config: a thinker_config
// the reader maps as the model, speech-output parts beside it.
bool is_qwen_omni(const nlohmann::json& config);

// The thinker's config as the mapper reads it: thinker_config, with the top level's other keys
// (torch_dtype, quantization_config, talker_config, token2wav_config or code2wav_config) beside it
// where the thinker has none, and the top level's model_type (the architecture's name).
nlohmann::json omni_thinker_view(const nlohmann::json& config);

// The talker's parameters (Qwen2_5OmniTalkerForConditionalGeneration), term by term.
struct TalkerSpec {
  uint64_t params = 0;
  std::string formula;
};
// From the config's talker_config (nullopt: none). InputError for a bad value.
std::optional<TalkerSpec> config_talker(ConfigView& cfg);

// token2wav's parameters (Qwen2_5OmniToken2WavModel): the DiT of dit_config (with its ECAPA-TDNN
// speaker encoder) and the BigVGAN vocoder of bigvgan_config, term by term. transformers runs it
// in float32 (enable_talker: self.token2wav.float()).
struct Token2WavSpec {
  uint64_t dit = 0, bigvgan = 0;
  std::string formula;
  uint64_t params() const { return dit + bigvgan; }
};
// From the config's token2wav_config (nullopt: none); a size the config lacks takes transformers'
// default (Qwen2_5OmniDiTConfig, Qwen2_5OmniBigVGANConfig), named in the formula.
std::optional<Token2WavSpec> config_token2wav(ConfigView& cfg);

// After the mapper and the towers: records the talker's and token2wav's counts and
// what the estimate leaves out (Model::left_out, a warning), with which engine loads what.
void note_qwen25_omni_parts(ConfigView& cfg);

// Prefix of the warning that the talker and token2wav are not in the loaded weights.
inline constexpr const char* kOmniSpeechPartsWarning = "speech output not counted: ";

}  // namespace vc
