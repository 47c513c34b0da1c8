#pragma once
// Decode and prefill speed from what a token reads and computes where (speed/token_reads.h):
//   decode  s/token = sum over memories of (weights + cache read there) / (bandwidth x share)
//                     + layers x fixed cost per layer + GPU<->CPU hand-offs x their cost
//                     (+ an all-reduce per layer under tensor parallelism); devices of a layer
//                     split take their layers in turn, so their times add.
//   prefill s/token = FLOPs per token / (peak x compute share) on each GPU, + the weights held in
//                     RAM crossing PCIe once per ubatch (llama.cpp computes big batches on the GPU),
//                     or FLOPs / the CPU's effective rate when the CPU computes.
// The shares and costs are data (speed/speed_data.h); the range is the spread measured runs show.
#include <string>
#include <vector>

#include "speed/speed_data.h"
#include "speed/token_reads.h"

namespace vc {

struct SpeedEstimate {
  double tok_s = 0;             // the estimate; 0 when a memory read has no known bandwidth
  double low = 0, high = 0;     // the range measured runs fall in around it
  double seconds = 0;           // per token
  std::string formula;          // the terms with their numbers
  std::string assumption;
  std::string source;
  bool offload = false;
};

SpeedEstimate decode_speed(const TokenReads& t, const SpeedData& data = SpeedData::builtin());
SpeedEstimate prefill_speed(const TokenReads& t, const SpeedData& data = SpeedData::builtin());

// "41.2 tok/s (estimate, likely 33-52)"; "unknown" when there is no estimate.
std::string speed_text(const SpeedEstimate& e, int decimals);

}  // namespace vc
