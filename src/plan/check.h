#pragma once
// The GPU checker: for every model, the best weights tier that fits a box (on the GPUs alone, with
// RAM/SSD offload, or not at all), the largest context that fits there and the decode speed.
#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace vc {

enum class FitKind { Gpu, Offload, None, Unavailable };  // Unavailable: weights not published
const char* to_string(FitKind k);

struct CheckRow {
  const Model* model = nullptr;
  FitKind fit = FitKind::None;
  std::string tier;            // "native MXFP4", "Q4_K_M", "build UD-IQ1_S"
  std::string quant;           // the --quant that gives this tier ("" for native), for a follow-up plan
  uint64_t weights_bytes = 0;
  uint64_t total_bytes = 0;    // estimate at the checked context
  uint64_t max_context = 0;    // at one sequence, in the same fit
  double decode_tok_s = 0;     // expected
  std::string note;
};

// Tiers tried, largest first: native, the model's builds, and these llama.cpp tiers. The best
// tier is the largest that fits on the GPUs; else the largest in GPU + RAM; else with SSD streaming.
inline constexpr const char* kCheckTiers[] = {"Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "Q2_K", "IQ2_XXS", "IQ1_S"};

CheckRow check_model(const Model& model, const Box& box, const PlanOptions& o, const Scenario& base);
// Ranked: fits on GPUs first, then with offload, then not at all; faster first within each.
std::vector<CheckRow> check_models(const std::vector<Model>& models, const Box& box, const PlanOptions& o, const Scenario& base);

}  // namespace vc
