// The engine inputs of `estimate` (its --engine, --engine-command, --gpu, --gpu-memory), named once
// for the CLI and /api/estimate.
#include "engines/engine.h"
#include "plan/unified_memory.h"

namespace vc {

const std::vector<InputField<EngineInputs>>& EngineInputs::fields() {
  using E = EngineInputs;
  static const std::vector<InputField<E>> table = {
      {"engine", &E::engine, std::string("Whose allocations: ") + kEngineNames + " (docs/engines.md)"},
      {"engine-command", &E::command,
       "Paste the command you run: \"llama-server -m m.gguf -c 32768 -ngl 99\", \"vllm serve ORG/REPO ...\" or \"python -m sglang.launch_server --model-path ORG/REPO ...\"", "", false},
      {"gpu", &E::gpu, "The devices the engine runs on (RTX 4090, H100-sxm x2): capacities and fits per device", "", false},
      {"gpu-wired-limit", &E::gpu_wired_limit, kGpuWiredLimitHelp, "", false},
      {"gpu-memory", &E::gpu_memory, "One card's memory for vLLM's budget and SGLang's profile when --gpu does not name it, e.g. 80GB or 79.19GiB", "", false},
      {"max-loras", &E::max_loras, "vLLM: LoRA adapters resident at once (vllm serve --enable-lora --max-loras N): their preallocated slots", "", false},
      {"max-lora-rank", &E::max_lora_rank, "vLLM: the largest adapter rank (--max-lora-rank; 1, 8, 16, 32, 64, 128, 256, 320, 512; default 16)", "", false},
  };
  return table;
}

}  // namespace vc
