#pragma once
// llama.cpp's --fit (on by default), replayed step by step as common/fit.cpp runs it
// (common_params_fit_impl, ggml-org/llama.cpp at 08033df0), on vramcalc's own per-device figures
// where llama.cpp measures a dry run of its allocator:
//   0. -c unset: the context is the trained one for each KV stream (n_ctx_train x -np unless the
//      cache is unified);
//   1. every GPU keeps -fitt (1,024 MiB) free: nothing changes;
//   2. else, -c unset: the context is interpolated between -fitc (4,096 a stream) and that, on the
//      projected memory summed over the GPUs, rounded down to 256 a stream; one GPU stops here;
//   3. else, -ngl, -ts (several GPUs) and -ot/--n-cpu-moe unset: layers are filled back to front,
//      by false position, each GPU up to its free memory less the margin (MoE: dense parts only,
//      experts on the CPU);
//   4. MoE whose dense parts all fit: those layers become whole front to back, and one more layer
//      is tried in part (up, then gate, else attention only).
// The host-only path (no GPU) does steps 1 and 2 against the RAM. llama.cpp's "free" is what
// cudaMemGetInfo reports once its CUDA backend is up, so an NVIDIA GPU's free memory here is its
// capacity less the CUDA context measured before any model buffer (docs/engines.md).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engines/engine.h"

namespace vc {

inline constexpr uint64_t kLlamaCppFitMinContext = 4096;        // -fitc: the least context a stream gets
inline constexpr uint64_t kLlamaCppFitMargin = 1024ull << 20;   // -fitt: what each device keeps free
// GPU memory in use before llama.cpp loads a model buffer (the CUDA context and driver): 552,402,944
// B measured on an NVIDIA H200 (CUDA 13, driver 580; llama.cpp 80fb11ac), the same in every run.
// Other vendors' runtimes were not measured: nothing is subtracted for them.
inline constexpr uint64_t kLlamaCppCudaContextBytes = 552'402'944;

// What --fit starts from: the command's settings and the devices' memory.
struct LlamaCppFitStart {
  uint64_t layers = 0;              // repeating layers (llama.cpp's n_layer; the output layer is one more)
  bool moe = false;                 // routed experts
  uint64_t trained = 0;             // n_ctx_train
  uint64_t sequences = 1;           // -np
  bool kv_unified = false;          // one KV stream for every sequence
  std::optional<uint64_t> n_ctx;    // -c (all streams); none: left to llama.cpp
  LlamaCppPlacementSettings placement;  // the command's
  bool ngl_given = false;           // -ngl set: no layer step
  bool split_given = false;         // -ts set: no layer step with several GPUs
  bool overrides_given = false;     // -ot / --n-cpu-moe / --cpu-moe set: no layer step
  std::vector<uint64_t> gpu_free;   // each GPU's free memory as llama.cpp reads it, CUDA0 first; empty: no GPU
  uint64_t host_total = 0;          // RAM, for the host-only path; 0: unknown
};

// Memory a placement uses at a total context: per GPU, all it holds and its weights; on the host.
struct LlamaCppFitUse {
  std::vector<int64_t> gpu_used;
  std::vector<int64_t> gpu_model;
  int64_t host_used = 0;
};
using LlamaCppFitMeasure = std::function<LlamaCppFitUse(uint64_t n_ctx, const LlamaCppPlacementSettings& placement)>;

struct LlamaCppFitOutcome {
  uint64_t n_ctx = 0;                   // the total context llama.cpp creates
  LlamaCppPlacementSettings placement;  // the command's, or the layers --fit chose
  bool layers_moved = false;
  std::vector<std::string> notes;       // what each step did, in words
};

LlamaCppFitOutcome llamacpp_fit(const LlamaCppFitStart& start, const LlamaCppFitMeasure& measure);

// The start for a pasted llama.cpp command on a box, and the measure that runs llama.cpp's answer
// for `request` (its command's placement replaced, its scenario's context set to n_ctx over the
// sequences). Used by estimate (engine_request) and plan/check (plan.cpp).
LlamaCppFitStart llamacpp_fit_start(const Model& model, const EngineRun& command, const Scenario& scenario, const std::optional<Box>& box);
LlamaCppFitUse llamacpp_fit_use(const EngineAnswer& answer, std::size_t gpus);

// Runs --fit for a pasted llama.cpp `command` (none, or not llama.cpp's: nothing but the trained
// context settled): the context in `scenario` and the placement in `command`, each judged on
// `probe`'s answer at a context a sequence with a placement; returns the notes. The scenario's
// context_from_model mark is cleared. estimate probes its request, plan its own (plan.cpp).
using LlamaCppFitProbe = std::function<EngineAnswer(uint64_t context, const LlamaCppPlacementSettings& placement)>;
std::vector<std::string> settle_llamacpp_fit(const Model& model, EngineRun* command, Scenario& scenario, const std::optional<Box>& box,
                                             const LlamaCppFitProbe& probe);

// The same for estimate's request (`request.command`).
std::vector<std::string> apply_llamacpp_fit(const Model& model, EngineRequest& request);

// Replays --fit again from what it started from, its earlier notes replaced by the new ones in the
// command: a draft model (-md) placed since counts in every measurement, as fit.cpp adds its
// "extra model" (common_init_from_params passes the draft). Nothing when --fit was not replayed.
void refit_llamacpp(const Model& model, EngineRequest& request);

}  // namespace vc
