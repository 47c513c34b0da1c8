#pragma once
// One engine model behind every answer. An engine takes the model, the scenario and the devices
// and returns what it allocates PER DEVICE, by kind (weights, KV, state, compute or activation,
// output, runtime reserve, CUDA graphs), every line with its formula, assumption and source.
// estimate, sweep, compare, plan, check, builds and the API all read their figures from here:
//   rule      the percentage rule (weights + cache + state, plus 15%); the default
//   llamacpp  CUDA0..N and host per -ngl / -ts / -ot; KV with its layers; compute per device
//   vllm      per rank of TP x PP: gpu_memory_utilization budget, profile-run activation, KV pool
//   sglang    per rank: mem_fraction_static budget, token pool
// The path from model to per-device answer: docs/design-notes.md.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/input_fields.h"

#include "engines/companions.h"
#include "engines/engine_kind.h"
#include "engines/engine_run.h"
#include "engines/vllm_lora.h"
#include "estimate/estimate.h"
#include "plan/hardware.h"
#include "plan/split.h"

namespace vc {

enum class AllocKind { Weights, Kv, State, Compute, Activation, Output, RuntimeReserve, CudaGraphs, Other };
const char* to_string(AllocKind kind);  // "weights", "kv", "state", "compute", ..., "runtime_reserve", "cuda_graphs"

struct Allocation {
  AllocKind kind = AllocKind::Other;
  std::string label;
  uint64_t bytes = 0;
  std::string formula;
  std::string assumption;
  std::string source;
};

struct DeviceAllocation {
  std::string name;                 // "CUDA0", "host", "rank 0 (tp0 pp0)", "all devices"
  std::optional<uint64_t> capacity; // none: no device given (or host memory not given)
  std::vector<Allocation> lines;
  uint64_t total_bytes = 0;
  std::optional<bool> fits;         // none when there is no capacity to compare with
  // llama.cpp's host: what its own breakdown counts beyond these lines (the memory-mapped pages of
  // tensors the CPU reads from repacked copies, which the OS may drop); its --fit projects with them.
  uint64_t mapped_not_held = 0;
  // llama.cpp's host: the weights it holds that are pages of the memory-mapped file (no --no-mmap,
  // no --mlock), which the OS may drop and read from disk again: a host short of RAM by no more
  // than these still starts.
  uint64_t mapped_pageable = 0;
  // What the OS must read from disk again because RAM cannot keep it: the bytes over capacity when
  // all of them are mapped pages; 0 when it fits, or when the excess is not mapped (then the
  // allocation itself fails).
  uint64_t paged_out() const {
    if (!capacity || total_bytes <= *capacity) return 0;
    const uint64_t over = total_bytes - *capacity;
    return over <= mapped_pageable ? over : 0;
  }
  uint64_t bytes(AllocKind kind) const;
  void add(Allocation a);           // appends and keeps total_bytes
};

using SettingValue = std::variant<uint64_t, double, bool, std::string>;
struct Setting {
  std::string name;  // as the engine spells its flag: "n_ctx", "gpu_memory_utilization"
  SettingValue value;
};

struct EngineAnswer {
  EngineKind engine = EngineKind::Rule;
  std::string version_modelled;   // the engine source the rules were read from
  std::vector<Setting> settings;  // what was assumed
  std::vector<DeviceAllocation> devices;
  uint64_t total_bytes = 0;       // the sum of the devices' totals
  std::optional<uint64_t> kv_tokens;     // vLLM / SGLang: tokens the KV pool holds
  std::optional<double> max_concurrency; // vLLM / SGLang: requests of the scenario's context at once
  std::vector<std::string> notes;
  uint64_t bytes(AllocKind kind) const;  // over all devices
  // Every device with a capacity fits (and, for pool engines, one request of the context fits);
  // none when no device has a capacity.
  std::optional<bool> fits() const;
  // The GPU device with the least room, or nullptr when none has a capacity.
  const DeviceAllocation* tightest() const;
};

// A pasted command sets the scenario where the user gave no flag for it: context, sequences, cache dtype.
struct ScenarioGiven {
  bool context = false, sequences = false, cache_dtype = false;
  bool quant = false;  // --quant given, or the model was read from the very file the command loads
};

struct EngineRequest {
  const Model* model = nullptr;
  Scenario scenario;                 // scenario.engine picks the engine
  std::optional<Box> box;            // the devices; none: one unnamed device without capacity
  SplitMode split = SplitMode::Layer;  // how devices divide the model (rule; vLLM/SGLang TP/PP)
  uint64_t per_device_fixed = 0;       // rule on a box: bytes added per device (--per-device)
  uint64_t card_bytes = 0;             // one card's memory when no box names it (--gpu-memory)
  std::optional<EngineRun> command;  // a pasted engine command (its flags override the scenario's)
  // llama.cpp: -ngl / -ot / -ts to use instead of the default (everything on the GPUs), keeping the
  // scenario's context and sequences: the plan's offload placement and --n-cpu-moe.
  std::optional<LlamaCppPlacementSettings> llamacpp_placement;
  // llama.cpp, without `command`: a pasted command's other flags (-b, -ub, -fa, -ctv, -kvu,
  // --swa-full, --cache-ram, -md) under the scenario's context, sequences and cache type: plan
  // varies those (engines/engine.cpp engine_run_for).
  std::optional<EngineRun> llamacpp_flags;
  // vLLM / SGLang, without `command`: --cpu-offload-gb as bytes (per GPU) the plan's offload chose.
  uint64_t serving_cpu_offload_cap = 0;
  Companions companions;             // mmproj, draft, adapters beside the model (engines/companions.h)
  LoraSlotSettings lora_slots;       // vLLM --max-loras / --max-lora-rank (engines/vllm_lora.h); max_loras 0: off
};

EngineAnswer run_engine(const EngineRequest& request);

// The engine inputs as a user types them, shared by the CLI's flags and the API's parameters
// (engine, engine-command, gpu, gpu-memory) so both accept and refuse the same things.
struct EngineInputs {
  std::string engine = "rule";
  std::string command;     // a pasted engine command line
  std::string gpu;         // devices ("RTX 4090", "H100-sxm x8"); empty: none given
  std::string gpu_memory;  // one card's memory ("80GB") when no --gpu names it
  std::string max_loras, max_lora_rank;  // vLLM's LoRA slots (--enable-lora implied); empty: none
  std::string gpu_wired_limit = "default";  // unified devices of --gpu: the GPU's share (plan/unified_memory.h)
  // The members with names and help: estimate's flags and /api/estimate's parameters.
  static const std::vector<InputField<EngineInputs>>& fields();
};
// The request for `model`: parses the inputs, lets a pasted command set the scenario where the
// user gave no flag (`given`), and names the model the command names in `command_model`.
EngineRequest engine_request(const Model& model, Scenario scenario, const EngineInputs& inputs, const ScenarioGiven& given = {});
// The model a pasted command names (-m / serve argument), or "".
std::string command_model(const EngineInputs& inputs);

// The engine settings a scenario implies when no command is pasted (llama.cpp: -c = context x
// sequences, -np, -ctk/-ctv = cache dtype, -ngl all, -ts by device memory; vLLM/SGLang: max
// model length = context, TP/PP from the split).
EngineRun engine_run_for(const EngineRequest& request);
// The weights tier a llama.cpp command's model names: the quant tag of -hf ORG/REPO:TAG (Q4_K_M
// when absent, as llama.cpp picks), else the tag closing the -m file's name (gguf_quant_tag:
// Model-Q4_K_M.gguf, Model-Q8_0-00001-of-00002.gguf), where the quant table knows it as a tier;
// "" when none.
std::string command_model_tier(const std::string& model);
// What a pasted command sets in the scenario where the user gave no flag for it: llama.cpp -c / -np
// (context = -c / -np), -ctk, the weights tier its model file names; vLLM --max-model-len; SGLang
// --context-length; an fp8 --kv-cache-dtype.
// The one place: estimate, plan and check (CLI and API) all apply a command through it.
// llama.cpp without -c sizes the context the model was trained with (-c 0), and vLLM without
// --max-model-len / SGLang without --context-length a request of the model's maximum: marked here
// (scenario.context_from_model) and settled with the model by resolve_context_from_model.
void apply_command_to_scenario(const EngineRun& run, Scenario& scenario, const ScenarioGiven& given);
// Settles scenario.context_from_model: the model's trained context, over the command's sequences
// for llama.cpp (each of -np sequences gets n_ctx / n_seq cells), whole for vLLM and SGLang (a
// request may reach max_model_len), as estimate, plan and check read it;
// idempotent, and the mark stays for --fit (engines/llamacpp_fit.h), which may lower it.
void resolve_context_from_model(Scenario& scenario, const Model& model);

}  // namespace vc
