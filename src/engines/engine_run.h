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
  ServingSpeculative serving_speculative;  // vLLM --speculative-config, SGLang --speculative-* (its draft: estimate's companions)
  std::vector<std::string> notes;  // flags ignored, assumptions
};

// The most CPU threads accepted for llama.cpp's -t and vramcalc's --threads.
inline constexpr uint64_t kMaxCpuThreads = 4096;

// The longest pasted command line accepted (the CLI's --engine-command, the API's engine-command).
inline constexpr size_t kMaxEngineCommandBytes = 8192;

// InputError naming the flag for a bad value; unknown flags are ignored with a note.
// Accepted: llama-server/llama-cli/llama-completion, `vllm serve MODEL`, `python -m
// sglang.launch_server --model-path MODEL` and `sglang serve --model-path MODEL`.
EngineRun parse_engine_command(const std::string& command);

}  // namespace vc
