#pragma once
// Decode speed when the active weights stream from a slower tier each token: the plain
// bytes-over-bandwidth arithmetic of the seeds (a full offload planner with a hot-expert cache
// belongs to `plan`). tok/s = bandwidth / (active params x bits / 8).
#include <cstdint>
#include <optional>
#include <string>
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
  std::string formula = "tok/s = bandwidth / (active params × bits / 8)";  // how bytes_per_token was found
};

// `bits_milli` is bits per weight x 1000 (1.7 bits -> 1700), kept integral so bytes stay exact.
StreamEstimate stream_estimate(const Model& model, uint64_t bits_milli, const std::vector<uint64_t>& bandwidths);

// What one token reads of the native checkpoint when its classes differ in precision (Kimi K3:
// bf16 attention and shared parts, MXFP4 experts): every always-active class in full and k of n
// routed experts, at each class's own bytes, scaled to the checkpoint's size. Empty (0, 0) when the
// checkpoint has no bytes per class.
struct NativeReads {
  uint64_t per_token = 0;  // all weights one token reads
  uint64_t routed = 0;     // of which routed experts
};
NativeReads native_reads_per_token(const Model& model);

// The native checkpoint streamed with its per-class reads (falls back to the uniform arithmetic
// when bytes per class are unknown).
StreamEstimate stream_native(const Model& model, const std::vector<uint64_t>& bandwidths);

// What `stream` answers: an explicit bits per weight (x 1000) when given, else the tier or build
// `quant` at its effective bits, else (no quant, "native") the native checkpoint's per-class reads.
StreamEstimate stream_for(const Model& model, const std::string& quant, std::optional<uint64_t> bits_milli,
                          const std::vector<uint64_t>& bandwidths);

}  // namespace vc
