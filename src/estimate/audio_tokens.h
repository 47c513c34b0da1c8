#pragma once
// The tokens a stretch of audio adds to the context of a model with an audio encoder
// (Qwen2-Audio, Qwen2.5-Omni: config.json's audio_config, counted in sources/config/config_tower.h).
// Their processors (transformers' processing_qwen2_audio.py, processing_qwen2_5_omni.py) take
// WhisperFeatureExtractor's log-mel frames, one per 160 samples of 16 kHz audio (100 a second),
// at most 3,000 (30 s) per clip with padding="max_length" (longer audio is cut there, so a longer
// recording goes in as several clips), and replace the clip's audio token with
//   (((frames - 1) / 2 + 1) - 2) / 2 + 1
// tokens (the encoder's stride-2 convolution, then its stride-2 pooling): 25 a second, 750 for
// a full clip.
// Qwen3-Omni's AuT encoder (audio_config qwen3_omni_moe_audio_encoder) takes the same 100 frames a
// second, but its processor (processing_qwen3_omni_moe.py: audio_kwargs padding True, truncation
// False) keeps the whole recording as one clip, and its _get_feat_extract_output_lengths gives
// 13 tokens per whole 100-frame chunk, plus for the r frames left over
//   (((r - 1) // 2 + 1 - 1) // 2 + 1 - 1) // 2 + 1     (0 for r = 0, Python's floor division)
// so 13 a second.
#include <cstdint>
#include <string>

namespace vc {

struct AudioTokens {
  uint64_t seconds = 0;
  uint64_t clips = 0;     // 30-second clips, the last one shorter
  uint64_t tokens = 0;    // audio tokens in the context
  std::string formula;    // the arithmetic, clip by clip
};

// Audio tokens for one clip of `frames` log-mel frames (at most 3,000).
uint64_t audio_clip_tokens(uint64_t frames);

// `seconds` of audio (whole seconds) in clips of at most 30 s.
AudioTokens audio_tokens(uint64_t seconds);

// Qwen3-Omni (AuT): tokens for `frames` log-mel frames, and for `seconds` of audio in one clip.
uint64_t aut_audio_tokens_for_frames(uint64_t frames);
AudioTokens aut_audio_tokens(uint64_t seconds);

}  // namespace vc
