#pragma once
// The verify step of speculative decoding on an MoE model: the k + 1 positions checked in one pass
// each pick their own routed experts, so the pass reads the union of their choices, not one
// token's k of n. With routing taken as uniform and independent (an upper bound: consecutive
// tokens share experts more often), the expected distinct experts of a layer are
//   n x (1 - (1 - k/n)^positions)
// and the routed part of the step grows by that over k; dense weights are read once.
#include <cstdint>

#include "plan/footprint.h"
#include "speed/speed_estimate.h"
#include "speed/token_reads.h"

namespace vc {

// `target` with its seconds (and formula) for a verify pass over `positions` tokens; tok_s stays
// the plain step's, so speculative_decode's gain is measured against plain decode.
SpeedEstimate verify_step(const SpeedEstimate& target, const Footprint& f, const TokenReads& reads, uint32_t positions);

}  // namespace vc
