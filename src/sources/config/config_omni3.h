#pragma once
// Qwen3-Omni (config.json model_type "qwen3_omni_moe", Qwen3OmniMoeForConditionalGeneration:
// Qwen3-Omni-30B-A3B-Instruct, -Thinking, -Captioner): one checkpoint holds the thinker
// (thinker_config: a Qwen3-MoE text model in text_config, a Qwen3-VL-style vision tower with
// DeepStack mergers in vision_config, the AuT audio encoder in audio_config), and, where
// enable_audio_output is on, the talker (talker_config: a Qwen3-MoE decoder of codec tokens with a
// shared expert, two resize MLPs from the thinker's width, and the code predictor of the residual
// codebooks) and code2wav (code2wav_config: a sliding-window transformer, ConvNeXt upsampling and a
// SnakeBeta ConvNet decoder). The served model is the thinker: vLLM's registry maps the architecture
// to Qwen3OmniMoeThinkerForConditionalGeneration, whose loader skips the "talker." and "code2wav."
// weights, and SGLang's Qwen3OmniMoeForConditionalGeneration keeps enable_talker False and skips
// them too. So the thinker is what the reader maps and counts (config_omni.h's thinker view, the
// towers in config_tower.h); the talker and code2wav are counted beside it (provenance
// "params.talker", "params.code2wav", Model::left_out), not in the loaded total.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sources/config/config_view.h"

namespace vc {

// Whether `config` is a Qwen3-Omni config whose thinker the reader maps.
bool is_qwen3_omni(const nlohmann::json& config);

// Qwen3OmniMoeTalkerForConditionalGeneration's parameters, term by term: the MoE decoder with its
// codec embedding, the two resize MLPs and the codec head, and the code predictor apart.
struct Qwen3TalkerSpec {
  uint64_t decoder = 0;         // model (codec_embedding, layers, norm), text_projection, hidden_projection, codec_head
  uint64_t code_predictor = 0;  // Qwen3OmniMoeTalkerCodePredictorModelForConditionalGeneration
  std::string formula;
  uint64_t params() const { return decoder + code_predictor; }
};
// From the config's talker_config (nullopt: none). InputError for a bad value; a size the config
// lacks takes transformers' default (Qwen3OmniMoeTalker*Config), named in the formula.
std::optional<Qwen3TalkerSpec> config_qwen3_talker(ConfigView& cfg);

// Qwen3OmniMoeCode2Wav's parameters, term by term.
struct Code2WavSpec {
  uint64_t params = 0;
  std::string formula;
};
// From the config's code2wav_config (nullopt: none); defaults as for the talker.
std::optional<Code2WavSpec> config_code2wav(ConfigView& cfg);

// After the mapper and the towers: records the talker's and code2wav's counts and what the
// estimate leaves out (Model::left_out, a warning starting kOmniSpeechPartsWarning), with which
// engine loads what; with enable_audio_output false, only that transformers builds neither.
void note_qwen3_omni_parts(ConfigView& cfg);

}  // namespace vc
