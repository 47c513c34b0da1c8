#pragma once
// llama.cpp's --fit (on by default): before loading, llama-server projects each device's memory for
// the parameters the user left unset, and where a GPU would keep less than -fitt (1,024 MiB) free
// it first lowers the context (only when -c was not given) toward -fitc (4,096 tokens), then moves
// layers to the CPU (only when -ngl was not given). The first step is replayed here on llama.cpp's
// own per-device answers; the second is plan's offload search (solve_llamacpp_offload).
// Source: ggml-org/llama.cpp common/common.h (fit_params, fit_params_target, fit_params_min_ctx).
#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace vc {

inline constexpr uint64_t kLlamaCppFitMinContext = 4096;  // -fitc: the least context --fit sets

// Whether every GPU of a llama.cpp answer holds it: each answer already carries a 1,024 MiB reserve
// line per GPU, --fit's -fitt margin (engines/llamacpp_engine.cpp), so "fits" is --fit's test.
// The host is not checked (--fit does not move anything for RAM).
bool llamacpp_fit_holds(const EngineAnswer& answer);

// The scenario a pasted llama.cpp command starts with: a context taken from the model (no -c) is
// lowered as --fit lowers it, in whole tokens per sequence, with a note saying what happened.
// Anything else passes through unchanged (the mark context_from_model is cleared).
Scenario llamacpp_fit_context(const Model& model, Scenario scenario, const Box& box, const PlanOptions& options, std::vector<std::string>& notes);

}  // namespace vc
