#pragma once
// When VRAM is short: what lives on the GPUs, in system RAM and on SSD, and how fast decode is.
// Placement order (docs/plan.md): cache and recurrent state first (GPU, then RAM: they are read
// and written every token), then the always-active weights (attention, dense MLP, shared experts,
// router, norms, output head), then routed experts hottest first, then the cold tensors
// (embeddings: a lookup; vision; MTP). Each goes to the fastest tier with room.
//
// Hot-expert model: expert popularity within a layer is Zipf with skew s (p_i ~ 1 / i^s over the
// n experts ranked by use). With h experts per layer in a tier, that tier serves
// H(h, s) / H(n, s) of routed reads (H the generalized harmonic number). s = 0 is uniform
// routing, which is also what "hot cache off" means: experts land in tiers in no particular
// order, so a tier serves the share of experts it holds. Off is the default: llama.cpp (whole
// expert tensors by -ot / --n-cpu-moe), vLLM and SGLang keep no hot-expert cache; on is for the
// SSD-streaming engines that keep the hot experts in VRAM and RAM.
//
// Decode: seconds per token = sum over tiers of bytes read from that tier / its bandwidth (the
// pure upper bound), times 1 / efficiency for the expected figure.
#include <cstdint>
#include <string>
#include <vector>

#include "plan/footprint.h"
#include "plan/hardware.h"

namespace vc {

struct OffloadOptions {
  double skew = 1.0;             // Zipf exponent of expert popularity
  bool hot_cache = false;        // place experts hottest first (false, the default: as if s = 0)
  uint64_t per_device_fixed = 0; // per-process context on each GPU
  uint32_t efficiency_bp = 6000; // achieved share of peak bandwidth for the expected tok/s
  // Whether weights may be read from SSD at all: llama.cpp (and the rule) mmap the file, so the
  // page cache can stream what RAM does not hold; vLLM and SGLang hold every weight in GPU or
  // pinned host memory (--cpu-offload-gb), so for them there is no SSD tier.
  bool ssd_streaming = true;
  std::string no_ssd_engine;     // the engine that cannot stream, named in the why ("vLLM")
};

struct TierUse {
  std::string tier;          // "GPU", "RAM", "SSD"
  uint64_t capacity = 0;     // usable bytes (GPU: after overhead and per-device context)
  uint64_t bandwidth = 0;    // bytes per second
  uint64_t cache = 0;        // cache + recurrent state held here
  uint64_t weights = 0;      // weights held here (always-active + cold)
  uint64_t experts = 0;      // routed expert bytes held here
  uint64_t experts_per_layer = 0;
  double hit_rate = 0;       // share of routed reads served here
  uint64_t read_weights = 0; // weight bytes read from here per token
  uint64_t read_cache = 0;   // cache + state bytes read from here per token (one sequence)
  double seconds = 0;        // read / bandwidth
};

struct OffloadPlan {
  std::vector<TierUse> tiers;  // GPU, RAM, SSD (only tiers that exist)
  bool fits = true;
  std::string why;             // when it does not fit
  uint64_t experts = 0;        // routed experts per MoE layer
  uint64_t expert_slot = 0;    // bytes of one expert index across all MoE layers
  double skew = 0;
  bool hot_cache = false;
  double weights_seconds = 0;  // weights only: the plain bytes-over-bandwidth arithmetic
  double seconds = 0;          // weights + cache reads, per token
  double upper_tok_s = 0;
  double expected_tok_s = 0;
  uint32_t efficiency_bp = 0;
  bool speed_unknown = false;  // a GPU without a known bandwidth holds part of what is read
  std::string formula;
};

// Share of routed reads the `hot` most popular of `n` experts serve under Zipf skew `s`.
double zipf_mass(uint64_t hot, uint64_t n, double s);

OffloadPlan offload_plan(const Footprint& f, const Box& box, const OffloadOptions& o, uint64_t context, uint64_t sequences);

}  // namespace vc
