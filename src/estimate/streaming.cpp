#include "estimate/streaming.h"

#include "core/checked.h"
#include "core/error.h"

namespace vc {

StreamEstimate stream_estimate(const Model& model, uint64_t bits_milli, const std::vector<uint64_t>& bandwidths) {
  if (bits_milli == 0 || bits_milli > 64000) throw InputError("--bpw", "must be above 0 and at most 64 bits per weight");
  if (bandwidths.empty() || bandwidths.size() > 32) throw InputError("--gbps", "give 1 to 32 bandwidths, such as 5,19");
  StreamEstimate s;
  s.active_params = model.params.active();
  s.bits_per_weight = static_cast<double>(bits_milli) / 1000.0;
  s.bytes_per_token = mul_div_round(s.active_params, bits_milli, 8000);
  for (uint64_t bw : bandwidths) {
    if (bw == 0) throw InputError("--gbps", "a bandwidth of 0 never delivers a token");
    s.rates.push_back({bw, static_cast<double>(bw) / static_cast<double>(s.bytes_per_token)});
  }
  return s;
}

}  // namespace vc
