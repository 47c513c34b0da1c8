#pragma once
// Decode speed when the active weights stream from a slower tier each token: the plain
// bytes-over-bandwidth arithmetic of the seeds (a full offload planner with a hot-expert cache
// belongs to `plan`). tok/s = bandwidth / (active params x bits / 8).
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace vc {

struct StreamRate {
  uint64_t bandwidth_bytes_per_s = 0;
  double tokens_per_s = 0;
};

struct StreamEstimate {
  uint64_t active_params = 0;
  double bits_per_weight = 0;
  uint64_t bytes_per_token = 0;
  std::vector<StreamRate> rates;
};

// `bits_milli` is bits per weight x 1000 (1.7 bits -> 1700), kept integral so bytes stay exact.
StreamEstimate stream_estimate(const Model& model, uint64_t bits_milli, const std::vector<uint64_t>& bandwidths);

}  // namespace vc
