#include "speed/speed_bound.h"

namespace vc {

double bandwidth_bound_tok_s(const TokenReads& t) {
  double seconds = 0;
  for (const auto& m : t.memories) {
    const uint64_t read = m.weights_read + m.cache_read;
    if (!read) continue;
    if (!m.bandwidth) return 0;
    seconds += static_cast<double>(read) / static_cast<double>(m.bandwidth);
  }
  return seconds > 0 ? 1.0 / seconds : 0;
}

double compute_bound_tok_s(const TokenReads& t) {
  if (t.offload) return 0;
  double seconds = 0;
  for (const auto& m : t.memories) {
    if (m.prefill_flops <= 0) continue;
    if (!m.is_gpu() || m.tflops <= 0) return 0;
    seconds += m.prefill_flops / (m.tflops * 1e12);
  }
  return seconds > 0 ? 1.0 / seconds : 0;
}

}  // namespace vc
