#include "plan/engine_ladder.h"

#include <algorithm>

#include "engines/engine_tiers.h"
#include "estimate/ladder.h"

namespace vc {
namespace {

// The box of `gpus` cards per node over `nodes` nodes, each card `card_bytes`.
Box card_box(const LadderCard& card, uint64_t gpus, uint64_t nodes) {
  Device d;
  d.id = d.name = card.label;
  d.kind = "gpu";
  d.memory_bytes = card.bytes;
  Box box;
  box.gpus.assign(gpus, d);
  box.nodes = nodes;
  return box;
}

// (cards per node, nodes) in the order the engine would grow a deployment.
std::vector<std::pair<uint64_t, uint64_t>> layouts(EngineKind engine) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (engine == EngineKind::Vllm || engine == EngineKind::Sglang) {
    for (uint64_t tp : {1, 2, 4, 8}) out.emplace_back(tp, 1);
    for (uint64_t nodes = 2; nodes * 8 <= kMaxLadderCards; ++nodes) out.emplace_back(8, nodes);
  } else {
    for (uint64_t n = 1; n <= kMaxLadderCards; ++n) out.emplace_back(n, 1);
  }
  return out;
}

}  // namespace

std::vector<EngineLadderRow> engine_ladder(const Model& model, const Scenario& scenario, EngineKind engine) {
  std::vector<EngineLadderRow> rows;
  for (const auto& quant : engine_candidate_tiers(engine, model)) {
    EngineLadderRow row;
    row.quant = quant;
    row.weights = resolve_weights(model, quant);
    const bool same_size = std::any_of(rows.begin(), rows.end(), [&](const EngineLadderRow& r) { return r.weights.bytes == row.weights.bytes; });
    if (same_size) continue;  // a tier the native checkpoint clamps to, or two names for one size
    EngineRequest r;
    r.model = &model;
    r.scenario = scenario;
    r.scenario.engine = engine;
    r.scenario.quant = quant;
    r.split = engine == EngineKind::Vllm || engine == EngineKind::Sglang ? SplitMode::Tensor : SplitMode::Layer;
    for (const auto& card : kLadderCards) {
      EngineLadderCards option;
      option.label = card.label;
      option.card_bytes = card.bytes;
      for (const auto& [gpus, nodes] : layouts(engine)) {
        r.box = card_box(card, gpus, nodes);
        EngineAnswer a = run_engine(r);
        if (!a.fits().value_or(false)) continue;
        option.cards = gpus * nodes;
        option.answer = std::move(a);
        break;
      }
      row.options.push_back(std::move(option));
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const EngineLadderRow& a, const EngineLadderRow& b) { return a.weights.bytes < b.weights.bytes; });
  return rows;
}

}  // namespace vc
