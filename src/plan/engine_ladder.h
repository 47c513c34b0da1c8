#pragma once
// `builds --engine`: the build ladder as an engine sees it. Rows are the tiers the engine loads
// (engine_tiers.h); for each of the ladder's cards, the fewest cards on which the engine's
// per-device answer fits at the scenario's context, with that answer's figures.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engines/engine.h"
#include "estimate/estimate.h"

namespace vc {

struct EngineLadderCards {
  std::string label;            // "141 GB (H200)"
  uint64_t card_bytes = 0;
  uint64_t cards = 0;           // 0: not within kMaxLadderCards
  std::optional<EngineAnswer> answer;  // the engine's answer on that many cards
};

struct EngineLadderRow {
  std::string quant;            // the --quant that gives this tier ("" for native)
  WeightsFigure weights;
  std::vector<EngineLadderCards> options;
};

// Cards tried: llama.cpp on one host, 1 to 64 (layer split); vLLM and SGLang tensor parallel 1, 2,
// 4, 8 within a node, then 8 per node over 2 to 8 nodes (pipeline parallel across nodes).
inline constexpr uint64_t kMaxLadderCards = 64;

// Smallest weights first.
std::vector<EngineLadderRow> engine_ladder(const Model& model, const Scenario& scenario, EngineKind engine);

}  // namespace vc
