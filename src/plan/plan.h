#pragma once
// plan(Model, Scenario, Box, options): the estimate placed on real devices. Per device: weights
// shard, cache shard, state, overhead (the scenario's percentage of that device's bytes plus a
// fixed per-process context), total and headroom, with a fit verdict per device, not only in
// aggregate. When the devices are short (or there are none), an offload plan over GPU, RAM and
// SSD. Decode and prefill speed; solvers for the largest context and the most sequences.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engines/engine.h"
#include "engines/engine_run.h"
#include "estimate/estimate.h"
#include "plan/footprint.h"
#include "plan/hardware.h"
#include "plan/offload.h"
#include "plan/split.h"
#include "speed/speculative.h"

namespace vc {

struct PlanOptions {
  SplitMode split = SplitMode::Layer;
  uint64_t per_device_fixed = 0;          // per-process context on each device (bytes)
  uint32_t efficiency_bp = 6000;          // achieved share of peak memory bandwidth (decode)
  uint32_t compute_efficiency_bp = 4000;  // achieved share of peak dense BF16 compute (prefill)
  double expert_skew = 1.0;               // Zipf skew of the hot-expert cache (used only with hot_cache)
  bool hot_cache = false;                 // off: the uniform share, as llama.cpp, vLLM and SGLang place experts
  EngineKind engine = EngineKind::Rule;   // whose per-device figures decide fits, solvers and the command
  std::optional<EngineRun> command;       // a pasted engine command: its placement (-ngl, -ot, --n-cpu-moe) sets the engine's speed
  std::optional<uint32_t> experts_per_token;  // engines' speed: fewer (or more) active experts than the config
  uint32_t sockets = 1;                   // engines' speed: CPU sockets reading RAM (--ram-gbps is one socket's)
  std::optional<uint32_t> threads;        // engines' speed: CPU threads (--threads, else a pasted -t; none: the engine's default)
  std::optional<uint64_t> n_cpu_moe;      // --n-cpu-moe N as given (the command above carries its overrides)
  std::optional<SpeculativeSettings> speculative;  // engines' decode with a drafter, when asked for
};

struct Speed {
  double upper_tok_s = 0;     // pure bound
  double expected_tok_s = 0;  // the estimate (the rule: with the efficiency factor)
  double low_tok_s = 0, high_tok_s = 0;  // engines: the range measured runs show around it (0: none)
  std::string formula;
  std::string assumption;
  std::string source;
};

// llama.cpp's own way out when its GPUs cannot hold everything, found with its per-device answer:
// the fewest layers whose routed experts move to the CPU (--n-cpu-moe N), else the most layers kept
// on the GPUs (-ngl N); or the placement the user gave (--n-cpu-moe, a pasted command).
struct LlamaCppOffload {
  LlamaCppPlacementSettings placement;
  std::optional<uint64_t> n_gpu_layers;  // -ngl N (none: every layer)
  uint64_t n_cpu_moe = 0;                 // --n-cpu-moe N (0: none)
  uint64_t layers = 0;                    // the model's repeating layers
  bool given = false;                     // the user's placement, not one solved here
  bool fitted = false;                    // llama.cpp's --fit placed the layers (engines/llamacpp_fit.h)
  bool fits = false;                      // every device of the answer, host RAM included when given, holds it
  EngineAnswer answer;                    // llama.cpp's per-device answer with this placement
};

// vLLM or SGLang short on its GPUs: the fewest whole GiB of --cpu-offload-gb per GPU with which the
// engine's own answer fits (both keep the offloaded weights in pinned host memory).
struct ServingOffload {
  uint64_t cap = 0;     // bytes per GPU: a whole number of GiB
  EngineAnswer answer;  // the engine's answer at that cap
  bool fits = false;    // every GPU and the host hold their share
};

struct Plan {
  const Model* model = nullptr;
  Estimate estimate;
  EngineAnswer engine;                    // the engine's per-device answer (rule: the percentage rule)
  Footprint footprint;
  Box box;
  PlanOptions options;
  std::optional<SplitResult> split;       // when there are devices
  uint64_t aggregate_capacity = 0;
  bool aggregate_fits = false;            // the estimate's total against all device memory
  bool fits_on_devices = false;           // every device's shard fits
  std::optional<OffloadPlan> offload;     // when the devices are short, or there are none
  std::optional<LlamaCppOffload> llamacpp_offload;  // --engine llamacpp when the GPUs alone are short
  std::optional<ServingOffload> serving_offload;    // --engine vllm|sglang when the GPUs alone are short
  Speed decode;
  Speed prefill;
  std::vector<Line> lines;                // explained figures (busiest device, speeds, rules)
  std::string verdict;
  // A pasted vLLM/SGLang command's data-parallel replicas (-dp N): `box` and every figure above are
  // one replica's; `replicated_box` is the whole box ("H200 x 8") that holds `replicas` of them.
  uint64_t replicas = 1;
  std::string replicated_box;
};

// The llama.cpp flags of an offload: "--n-cpu-moe 12", "-ngl 23", "--n-cpu-moe 48 -ngl 10".
std::string llamacpp_offload_flags(const LlamaCppOffload& o);

Plan make_plan(const Model& model, const Scenario& scenario, const Box& box, const PlanOptions& options);

// "41.20 tok/s (estimate, likely 35.02-47.38)"; "unknown" when there is no figure.
std::string speed_text_for(const Speed& s, int decimals);

// A pasted llama.cpp command as it starts on `box`: llama.cpp's --fit replayed
// (engines/llamacpp_fit.h) settles the context (no -c) and the layers (no -ngl, -ts, -ot), in the
// scenario and in the options' command, its notes added to `notes`; anything else passes through,
// the mark context_from_model cleared.
struct LlamaCppFitted {
  Scenario scenario;
  PlanOptions options;
};
LlamaCppFitted llamacpp_fit_plan(const Model& model, Scenario scenario, const Box& box, const PlanOptions& options, std::vector<std::string>& notes);
// The engine request a plan makes: the scenario under options.engine on the box's devices.
// With `placement`, llama.cpp places by it (-ngl/-ot) instead of everything on the GPUs.
EngineRequest plan_engine_request(const Model& model, const Scenario& scenario, const Box& box, const PlanOptions& options,
                                  const std::optional<LlamaCppPlacementSettings>& placement = std::nullopt);
// Does the engine's answer fit every device at this context and sequence count?
bool engine_fits(const EngineRequest& request, uint64_t context, uint64_t sequences);
// Solvers over the engine's per-device answer (binary search over exact figures).
uint64_t engine_max_context(const EngineRequest& request, uint64_t limit);
uint64_t engine_max_sequences(const EngineRequest& request);

// Does the model fit on the devices (every shard) at this context and sequence count?
bool fits_on_devices(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t context, uint64_t sequences);
// ... or, with offload, in GPU + RAM (+ SSD for weights)?
bool fits_with_offload(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t context, uint64_t sequences);

// The largest context (up to `limit`) that fits at `sequences`, by binary search over exact
// figures; 0 when not even one token fits. `offload` selects the offload fit.
uint64_t solve_max_context(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t sequences, uint64_t limit, bool offload);
// The most concurrent sequences (up to kMaxSequences) that fit at `context`; 0 when none.
uint64_t solve_max_sequences(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t context, bool offload);

}  // namespace vc
