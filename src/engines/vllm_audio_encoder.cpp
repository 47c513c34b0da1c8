#include "engines/vllm_audio_encoder.h"

#include <fmt/format.h>

#include "core/checked.h"
#include "core/units.h"
#include "estimate/audio_tokens.h"

namespace vc {

VllmEncoderProfile vllm_audio_encoder_profile(const AudioEncoderSpec& a, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                              uint64_t tp, uint64_t value_bytes, uint64_t limit_per_prompt) {
  VllmEncoderProfile p;
  if (a.kind != "Qwen2-Audio" || a.positions == 0 || a.hidden == 0 || a.mel_bins == 0 || a.text_hidden == 0 || tp == 0) {
    p.note = fmt::format("vLLM also profiles the {} encoder on a dummy batch of audio clips; modelled for Qwen2-Audio's Whisper-style encoder, so that "
                         "term is left out",
                         a.kind);
    return p;
  }
  // Qwen2AudioWhisperEncoder.forward adds embed_positions.weight whole to conv2's output, so a
  // clip is 2 x max_source_positions log-mel frames (3,000: 30 s at 100 frames a second).
  const uint64_t frames = checked_mul(2, a.positions);
  p.tokens_per_item = audio_clip_tokens(frames);
  const VllmEncoderItems n = vllm_encoder_items(p.tokens_per_item, max_num_batched_tokens, max_num_seqs, max_model_len, limit_per_prompt);
  p.items = n.items;
  // input_features (items, num_mel_bins, frames), cast to --dtype with the processor's outputs
  // (the int feature_attention_mask, items x frames, is left out: under 1% of the features).
  p.pixel_bytes = checked_product({p.items, a.mel_bins, frames, value_bytes});
  p.output_bytes = checked_product({p.items, p.tokens_per_item, a.text_hidden, value_bytes});
  // One Whisper layer over every clip's positions (fc1's output and its GELU the MLP's two
  // intermediates); conv1's output and its GELU (2 x frames x d_model a clip) are smaller.
  const uint64_t positions = checked_mul(p.items, a.positions);
  p.encoder_peak = vllm_encoder_pass_peak(p.pixel_bytes, positions, a.hidden, a.ffn, tp, value_bytes);
  p.formula = fmt::format("{} dummy 30 s audio clips (min(max({}, {}) / {} tokens, {} seqs x {} a prompt)) held: log-mel features {} x {} bins x {} "
                          "frames x {} B = {} B + encoder outputs {} x {} tokens x {} x {} B = {} B; encoding: {} positions x (2 x {} + 2 x {}) x {} B "
                          "+ features = {} B",
                          p.items, max_num_batched_tokens, p.tokens_per_item, p.tokens_per_item, max_num_seqs, n.per_prompt, p.items, a.mel_bins, frames,
                          value_bytes, format_count(p.pixel_bytes), p.items, p.tokens_per_item, a.text_hidden, value_bytes, format_count(p.output_bytes),
                          format_count(positions), a.hidden, a.ffn / tp, value_bytes, format_count(p.encoder_peak));
  p.source = std::string(kVllmEncoderBudgetSource) +
             "; https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_audio.py (Qwen2AudioDummyInputsBuilder, "
             "Qwen2AudioWhisperEncoder); https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/whisper.py (WhisperEncoderLayer)";
  return p;
}

}  // namespace vc
