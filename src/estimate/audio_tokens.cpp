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

uint64_t aut_audio_tokens_for_frames(uint64_t frames) {
  // The remainder's three stride-2 halvings; Python's (0 - 1) // 2 + 1 is 0, so r = 0 adds none.
  const uint64_t rest = frames % kFramesPerSecond;
  const uint64_t feat = rest == 0 ? 0 : (rest - 1) / 2 + 1;
  const uint64_t tail = feat == 0 ? 0 : ((feat - 1) / 2) / 2 + 1;
  return checked_add(checked_mul(frames / kFramesPerSecond, 13), tail);
}

AudioTokens aut_audio_tokens(uint64_t seconds) {
  AudioTokens t;
  t.seconds = seconds;
  t.clips = seconds ? 1 : 0;
  const uint64_t frames = checked_mul(seconds, kFramesPerSecond);
  t.tokens = aut_audio_tokens_for_frames(frames);
  t.formula = fmt::format("{} s of 16 kHz audio as one clip (no 30 s cap: truncation False): {} log-mel frames = {} chunks of 100 x 13 tokens = {} tokens",
                          format_count(seconds), format_count(frames), format_count(frames / kFramesPerSecond), format_count(t.tokens));
  return t;
}

}  // namespace vc
