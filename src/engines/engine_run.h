#pragma once
// An engine run as the user would launch it: `--engine llamacpp|vllm|sglang|rule` with the scenario,
// or the pasted command line ("llama-server -m model.gguf -c 32768 -np 4 ...", "vllm serve ORG/REPO
// --max-model-len 32768 ..."), mapped flag for flag onto the engine profiles, and its report lines.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engines/engine_kind.h"
#include "engines/llamacpp_placement.h"
#include "engines/llamacpp_profile.h"
#include "engines/serving_parallel.h"
#include "engines/serving_speculative.h"
#include "engines/sglang_profile.h"
#include "engines/vllm_budget.h"
#include "estimate/estimate.h"

namespace vc {

// llama.cpp's speculative-decoding flags as pasted (the speed reads them: speed/speculative.h).
struct SpeculativeFlags {
  std::string spec_type;               // --spec-type (draft-mtp: the model's own MTP head)
  std::optional<uint64_t> draft_max;   // --spec-draft-n-max / --draft-max / --draft / --draft-n
  std::string draft_model;             // -md / --model-draft
};

// What a pasted llama.cpp command leaves to llama.cpp: every layer on the GPUs (-ngl auto, since
// "llama: use max. GPU layers by default", ggml-org/llama.cpp PR #15434), the model's trained
// context (-c 0), and --fit on, which at start-up lowers that context toward -fitc (4,096) and then
// moves layers to the CPU until each GPU keeps -fitt (1,024 MiB) free (docs/engines.md).
struct LlamaCppDefaults {
  bool ngl = false;  // no -ngl, or -ngl auto
  bool ctx = false;  // no -c, or -c 0
  bool fit = true;   // -fit on (the default) / off
  // Once --fit has been replayed for a scenario (engines/llamacpp_fit.h) it is not run again;
  // layers_fitted: its layer step placed the layers (the placement is llama.cpp's, not the user's).
  bool fit_replayed = false;
  bool layers_fitted = false;
};

// What llama.cpp's --fit started from, kept so it can be replayed again once a draft model (fit.cpp's
// "extra model") joins the request (engines/llamacpp_fit.h refit_llamacpp).
struct LlamaCppFitAsked {
  bool context_from_model = false;
  uint64_t context = 0;
  LlamaCppPlacementSettings placement;
  std::vector<std::string> notes;  // the notes that fit added
};

struct EngineRun {
  EngineKind engine = EngineKind::Rule;  // rule, llamacpp, vllm, sglang
  std::string model;               // -m / the serve argument, when the command names one
  LlamaCppSettings llamacpp;
  LlamaCppPlacementSettings placement;
  // llama-server's host-RAM prompt cache (--cache-ram MiB; -1 no limit, 0 off; common/common.h
  // cache_ram_mib = 8192). llama-cli and llama-completion keep none.
  int64_t llamacpp_cache_ram_mib = 8192;
  VllmBudgetSettings vllm;
  SglangSettings sglang;
  ServingParallel parallel;        // vLLM / SGLang data and expert parallelism (TP and PP: vllm.kv, sglang)
  SpeculativeFlags speculative;    // llama.cpp
  std::optional<uint64_t> threads; // llama.cpp -t / --threads (none, or -t -1: its default, the physical cores)
  std::string llamacpp_numa;       // llama.cpp --numa: distribute, isolate or numactl; "" when not given
  // llama.cpp: what the command leaves to llama.cpp's own defaults (common/common.h: n_gpu_layers -1
  // "auto", n_ctx 0 "the context the model was trained with", fit_params on).
  LlamaCppDefaults llamacpp_defaults;
  // vLLM --max-model-len / SGLang --context-length given. Without it each engine sizes a request of
  // the model's own maximum context (vLLM's derived max_model_len, SGLang's context_len from the
  // config), which engine.h's apply_command_to_scenario marks and run_engine passes on.
  bool serving_context_given = false;
  std::optional<LlamaCppFitAsked> fit_asked;  // set once --fit has been replayed for a request
  ServingSpeculative serving_speculative;  // vLLM --speculative-config, SGLang --speculative-* (its draft: estimate's companions)
  std::vector<std::string> notes;  // flags ignored, assumptions
};

// A vLLM / SGLang command at another context: its --max-model-len / --context-length (the plan's
// solvers try several; a command without either takes the scenario's, engine.cpp run_engine).
void set_serving_context(EngineRun& run, uint64_t context);

// The most CPU threads accepted for llama.cpp's -t and vramcalc's --threads.
inline constexpr uint64_t kMaxCpuThreads = 4096;

// The longest pasted command line accepted (the CLI's --engine-command, the API's engine-command).
inline constexpr size_t kMaxEngineCommandBytes = 8192;

// InputError naming the flag for a bad value; unknown flags are ignored with a note.
// Accepted: llama-server/llama-cli/llama-completion, `vllm serve MODEL`, `python -m
// sglang.launch_server --model-path MODEL` and `sglang serve --model-path MODEL`.
EngineRun parse_engine_command(const std::string& command);

}  // namespace vc
