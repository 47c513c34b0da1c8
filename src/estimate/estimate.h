#pragma once
// estimate(Model, Scenario): the memory a model takes, line by line, each line carrying its exact
// bytes, the formula with numbers substituted, the assumption it rests on, and its sources.
#include <cstdint>
#include <string>
#include <vector>

#include "estimate/scenario.h"
#include "model/model.h"
#include "model/quantize_exceptions.h"

namespace vc {

struct Line {
  std::string id;          // "weights", "cache.latent", "state.kda", "overhead"
  std::string label;       // "Latent attention cache (24 layers)"
  uint64_t bytes = 0;
  std::string formula;     // numbers substituted
  std::string assumption;
  std::string source;
};

// Where a weights figure comes from: the native checkpoint, a named build, or a format's arithmetic.
enum class TierKind { Native, Build, Format };

struct WeightsFigure {
  TierKind kind = TierKind::Native;
  std::string tier;           // "native MXFP4", "Q4_K_M", "build UD-IQ1_S"
  uint64_t bytes = 0;         // what is resident
  uint64_t unclamped = 0;     // the tier arithmetic before the clamp (equal to bytes when not clamped)
  bool clamped = false;       // the tier would exceed the native checkpoint
  double effective_bits = 0;  // bytes * 8 / params
  // A synthesized llama.cpp tier: the parameters llama-quantize stores at another type than the
  // tier's (model/quantize_exceptions.h).
  QuantizeExceptions exceptions;
};

struct CardCount {
  uint64_t card_bytes = 0;
  uint64_t cards = 0;   // ceil(total / card), aggregate before sharding
  uint64_t nodes = 0;   // ceil(cards / 8)
};

struct Verdict {
  std::vector<CardCount> cards;      // 24, 80, 141, 192 GB
  uint64_t common_box_bytes = 0;     // 8 x 80 GB
  int64_t common_box_shortfall = 0;  // total - box (negative: room to spare)
  std::string dominant;              // "weights", "cache", "state"
  uint32_t context_share_bp = 0;     // cache + state as a share of the total
  std::string headline;              // "Treat this as a multi-node model."
  std::string text;                  // a paragraph written from the figures
};

struct Estimate {
  const Model* model = nullptr;
  Scenario scenario;
  WeightsFigure weights;
  std::vector<Line> lines;  // weights, cache lines, state lines, overhead
  uint64_t cache_bytes = 0;     // grows with context
  uint64_t state_bytes = 0;     // fixed per sequence
  uint64_t overhead_bytes = 0;
  uint64_t total_bytes = 0;
  uint64_t latent_values_implied = 0;  // per latent layer, from the config (0 if no latent layers)
  Verdict verdict;

  uint64_t context_bytes() const { return cache_bytes + state_bytes; }  // the seeds' "KV cache" row
};

Estimate estimate(const Model& model, const Scenario& scenario);

// The weights a tier gives for this model (clamped to the native checkpoint), or a build's bytes.
WeightsFigure resolve_weights(const Model& model, const std::string& quant);

}  // namespace vc
