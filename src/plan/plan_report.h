#pragma once
// Text and JSON for a plan: the per-device table, the verdict, speeds, offload tiers, solvers and
// the engine commands. Formatting only: every figure comes from plan.h.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "plan/plan.h"

namespace vc {

struct PlanSolved {
  uint64_t max_context = 0;    // at the scenario's sequences
  uint64_t max_sequences = 0;  // at the scenario's context
  bool with_offload = false;   // solved for the offload fit (the devices alone hold nothing)
};

PlanSolved solve(const Plan& plan);
std::string plan_text(const Plan& plan, const PlanSolved& solved, bool explain, ByteUnits units);
nlohmann::json plan_json(const Plan& plan, const PlanSolved& solved);

}  // namespace vc
