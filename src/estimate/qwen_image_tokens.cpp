#include "estimate/qwen_image_tokens.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/checked.h"
#include "core/error.h"

namespace vc {
namespace {

constexpr uint64_t kMaxSide = 65536;

uint64_t side(const std::string& text, const std::string& whole, const std::string& flag) {
  uint64_t v = 0;
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos || (v = std::stoull(text)) == 0 || v > kMaxSide)
    throw InputError(flag, fmt::format("'{}' is not an image size: give WIDTHxHEIGHT in pixels (e.g. 1280x720) or one side for a square, each 1 to {}", whole, kMaxSide));
  return v;
}

// Python's round() of a / b: halves go to the even neighbour.
uint64_t round_half_even(uint64_t a, uint64_t b) {
  const uint64_t q = a / b, r = a % b;
  if (2 * r > b || (2 * r == b && q % 2 == 1)) return q + 1;
  return q;
}

}  // namespace

ImageSize parse_image_size(const std::string& text, const std::string& flag) {
  ImageSize s;
  const auto x = text.find_first_of("xX");
  if (x == std::string::npos) {
    s.width = s.height = side(text, text, flag);
  } else {
    s.width = side(text.substr(0, x), text, flag);
    s.height = side(text.substr(x + 1), text, flag);
  }
  if (std::max(s.width, s.height) > 200 * std::min(s.width, s.height))
    throw InputError(flag, fmt::format("'{}': the aspect ratio is above 200, which the Qwen image processor refuses", text));
  return s;
}

QwenImageProcessor qwen_image_processor(const std::string& family, uint64_t patch, uint64_t merge) {
  QwenImageProcessor p;
  p.family = family;
  p.patch = patch;
  p.merge = merge;
  if (family == "Qwen3-VL") {
    // size: {shortest_edge: 65,536, longest_edge: 16,777,216} (256^2 to 4,096^2 pixels)
    p.min_pixels = 65536;
    p.max_pixels = 16777216;
    p.source = "https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct/blob/main/preprocessor_config.json (size.shortest_edge, size.longest_edge)";
    // video size: {shortest_edge: 4,096, longest_edge: 25,165,824 = 24,576 x 32^2}, frames x h x w
    p.video_max_pixels = 25165824;
    p.video_source = "https://huggingface.co/Qwen/Qwen3-VL-8B-Instruct/blob/main/video_preprocessor_config.json (size.longest_edge)";
  } else {
    // Qwen2-VL and Qwen2.5-VL: min_pixels 56^2, max_pixels 12,845,056
    p.min_pixels = 3136;
    p.max_pixels = 12845056;
    p.source = "https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/preprocessor_config.json (min_pixels, max_pixels)";
  }
  return p;
}

QwenImageTokens qwen_image_tokens(const QwenImageProcessor& p, const ImageSize& image) {
  const uint64_t f = checked_mul(p.patch, p.merge);
  if (f == 0) throw std::logic_error("qwen_image_tokens: no patch or merge size");
  const uint64_t H = image.height, W = image.width;
  uint64_t h = std::max(f, round_half_even(H, f) * f), w = std::max(f, round_half_even(W, f) * f);
  std::string clamp = "within the pixel bounds";
  const double area = static_cast<double>(H) * static_cast<double>(W), fd = static_cast<double>(f);
  if (checked_mul(h, w) > p.max_pixels) {
    const double beta = std::sqrt(area / static_cast<double>(p.max_pixels));
    h = std::max(f, static_cast<uint64_t>(std::floor(static_cast<double>(H) / beta / fd)) * f);
    w = std::max(f, static_cast<uint64_t>(std::floor(static_cast<double>(W) / beta / fd)) * f);
    clamp = fmt::format("scaled down by {:.4f} to stay within max_pixels {}", beta, p.max_pixels);
  } else if (checked_mul(h, w) < p.min_pixels) {
    const double beta = std::sqrt(static_cast<double>(p.min_pixels) / area);
    h = static_cast<uint64_t>(std::ceil(static_cast<double>(H) * beta / fd)) * f;
    w = static_cast<uint64_t>(std::ceil(static_cast<double>(W) * beta / fd)) * f;
    clamp = fmt::format("scaled up by {:.4f} to reach min_pixels {}", beta, p.min_pixels);
  }
  QwenImageTokens t;
  t.resized_width = w;
  t.resized_height = h;
  t.patches = checked_mul(h / p.patch, w / p.patch);
  t.tokens = checked_mul(h / f, w / f);
  t.formula = fmt::format("{} x {} px resized to {} x {} (multiples of patch {} x merge {} = {}; {}): ({} / {}) x ({} / {}) = {} tokens", W, H, w, h, p.patch,
                          p.merge, f, clamp, w, f, h, f, t.tokens);
  return t;
}

}  // namespace vc
