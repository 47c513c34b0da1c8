#pragma once
// One estimate per context, with the saving between consecutive rows, and the engine's answer
// (base.engine, no devices) at each context.
#include <vector>

#include "engines/engine.h"
#include "estimate/estimate.h"

namespace vc {

struct SweepRow {
  Estimate estimate;
  int64_t saving_vs_previous = 0;  // previous row's total minus this row's (0 for the first)
  EngineAnswer engine;
};

std::vector<SweepRow> sweep(const Model& model, const Scenario& base, const std::vector<uint64_t>& contexts);

}  // namespace vc
