#pragma once
// Decode speed with speculative decoding: a cheap drafter proposes k tokens, the target checks all
// of them in one pass (it reads its weights once for the k + 1 positions, so the verify step costs
// about one plain decode step), and keeps the accepted prefix plus one token of its own.
//
//   tokens per step  E = (1 - a^(k+1)) / (1 - a)        (a = acceptance per drafted token;
//                                                         Leviathan et al., ICML 2023, eq. 1)
//   seconds per step T = k x drafter step + target step
//   decode tok/s       = E / T
//
// Drafters: "mtp" (the model's own next-token head: DeepSeek/GLM/Qwen MTP, SGLang NEXTN, llama.cpp
// --spec-type draft-mtp, vLLM method "mtp") and "eagle" (an EAGLE head) cost one decoder layer plus
// the output head per drafted token; "draft" (a separate model: llama.cpp -md, vLLM "model") costs
// that model's own decode step.
#include <cstdint>
#include <optional>
#include <string>

#include "estimate/estimate.h"
#include "speed/speed_estimate.h"
#include "speed/token_reads.h"

namespace vc {

struct SpeculativeSettings {
  std::string method;                // mtp, eagle, draft
  uint32_t tokens = 0;               // k: tokens drafted per verification step
  std::optional<double> acceptance;  // per drafted token, as given; else the method's published default
  std::string draft_model;           // method draft: the draft model's catalogue id
};

// The accepted methods, for messages.
inline constexpr const char* kSpeculativeMethods = "mtp, eagle, draft";

// E above; a in (0, 1], k >= 1.
double tokens_per_step(double acceptance, uint32_t k);

// The acceptance used and where it comes from: the user's, or the method's published default (mtp:
// DeepSeek-V3's measured 85-90%, low end). Throws InputError for eagle and draft without one.
std::pair<double, std::string> speculative_acceptance(const SpeculativeSettings& s);

// A head drafter's step: one average decoder layer plus the output head, read where the target
// reads them: the target's step x (one layer's weights + head) / all weights read per token.
double head_draft_seconds(const SpeedEstimate& target, const TokenReads& reads, uint64_t head_bytes);

// One drafted token's seconds for the method: a head's (above), or the draft model's own decode
// step on the same box, all its layers on the GPUs (llama.cpp -ngld's default), at the target's
// quantization tier and context. Throws InputError for a draft model not in the catalogue.
double drafter_seconds(const SpeculativeSettings& s, const Model& target, const Footprint& f, const Scenario& scenario, const Box& box,
                       const SpeedSettings& settings, const TokenReads& target_reads, const SpeedEstimate& target_estimate);

// The target's decode estimate turned into the speculative one (its range scaled alike).
SpeedEstimate speculative_decode(const SpeedEstimate& target, double draft_seconds, const SpeculativeSettings& s);

}  // namespace vc
