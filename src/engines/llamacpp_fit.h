#pragma once
// llama.cpp's --fit (on by default): before loading, llama-server projects each device's memory for
// the parameters the user left unset, and where a GPU would keep less than -fitt (1,024 MiB) free
// it first lowers the context (only when -c was not given) toward -fitc (4,096 tokens), then moves
// layers to the CPU (only when -ngl was not given). The context step is replayed here on llama.cpp's
// own per-device answers, for estimate (engine_request) and plan/check (plan/plan.cpp); the layer
// step is plan's offload search (solve_llamacpp_offload).
// Source: ggml-org/llama.cpp common/common.h (fit_params, fit_params_target, fit_params_min_ctx).
#include <cstdint>
#include <functional>
#include <string>

#include "engines/engine.h"

namespace vc {

inline constexpr uint64_t kLlamaCppFitMinContext = 4096;  // -fitc: the least context --fit sets

// Whether every GPU of a llama.cpp answer holds it: each answer already carries a 1,024 MiB reserve
// line per GPU, --fit's -fitt margin (engines/llamacpp_engine.cpp), so "fits" is --fit's test.
// The host is not checked (--fit does not move anything for RAM).
bool llamacpp_fit_holds(const EngineAnswer& answer);

// The context per sequence llama.cpp starts with when a pasted command leaves -c to the model
// (`trained` tokens a sequence over `seqs` sequences): kept when `holds(trained)`, else the most
// that holds, down to -fitc; `note` says which. With --fit off or no GPU the trained context stays.
struct LlamaCppFitContext {
  uint64_t context = 0;
  std::string note;
};
LlamaCppFitContext llamacpp_fit_context(uint64_t trained, uint64_t seqs, bool fit_on, bool gpus, const std::function<bool(uint64_t)>& holds);

// Settles a scenario marked context_from_model (a pasted llama.cpp `command` without -c): the
// model's trained context, lowered as --fit lowers it where `gpus` and `holds(context)` say so; the
// mark cleared. Returns the note ("" when the scenario was not so marked).
std::string settle_llamacpp_context(const Model& model, Scenario& scenario, const EngineRun* command, bool gpus,
                                    const std::function<bool(uint64_t)>& holds);

// The same for estimate's request, judged on its own answers at each context.
std::string apply_llamacpp_fit_context(const Model& model, EngineRequest& r);

}  // namespace vc
