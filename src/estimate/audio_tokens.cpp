#include "estimate/audio_tokens.h"

#include <fmt/format.h>

#include "core/checked.h"
#include "core/units.h"

namespace vc {
namespace {
constexpr uint64_t kFramesPerSecond = 100;  // 16,000 samples a second / hop_length 160
constexpr uint64_t kClipSeconds = 30;       // WhisperFeatureExtractor's chunk_length: 3,000 frames
}  // namespace

uint64_t audio_clip_tokens(uint64_t frames) {
  if (frames == 0) return 0;
  const uint64_t after_conv = (frames - 1) / 2 + 1;
  return after_conv < 2 ? 0 : (after_conv - 2) / 2 + 1;  // Python's (1 - 2) // 2 + 1 is 0
}

AudioTokens audio_tokens(uint64_t seconds) {
  AudioTokens t;
  t.seconds = seconds;
  const uint64_t full = seconds / kClipSeconds, rest = seconds % kClipSeconds;
  const uint64_t per_full = audio_clip_tokens(kClipSeconds * kFramesPerSecond);
  const uint64_t last = audio_clip_tokens(rest * kFramesPerSecond);
  t.clips = full + (rest ? 1 : 0);
  t.tokens = checked_add(checked_mul(full, per_full), last);
  std::string parts;
  if (full) parts = fmt::format("{} clip{} of 30 s x {} tokens", format_count(full), full == 1 ? "" : "s", per_full);
  if (rest) {
    const uint64_t frames = rest * kFramesPerSecond, after_conv = (frames - 1) / 2 + 1;
    parts += fmt::format("{}one of {} s: {} frames -> ({} - 1) / 2 + 1 = {} -> ({} - 2) / 2 + 1 = {} tokens", parts.empty() ? "" : " + ", rest, frames,
                         frames, after_conv, after_conv, last);
  }
  t.formula = fmt::format("{} s of 16 kHz audio in clips of at most 30 s (3,000 log-mel frames, 100 a second): {} = {} tokens", format_count(seconds), parts,
                          format_count(t.tokens));
  return t;
}

}  // namespace vc
