#pragma once
// --cpu-offload-gb N (vLLM and SGLang): each rank moves up to N GiB of its decoder layers'
// parameters to pinned host memory while the model is built, and reads them from there at every
// forward pass. The rule, as both engines' offloaders have it:
//   vLLM   vllm/model_executor/offloader/uva.py UVAOffloader._maybe_offload_to_cpu, created by
//          offloader/base.py create_offloader with cpu_offload_max_bytes = int(cpu_offload_gb x
//          1024**3), "The space in GiB to offload to CPU, per GPU" (vllm/config/offload.py); the
//          GPU reads the pinned pages in place through a UVA view (zero-copy over the host link),
//          so CUDA graphs and torch.compile keep working and no GPU copy is made.
//   SGLang python/sglang/srt/utils/offloader.py OffloaderV1.maybe_offload_to_cpu, with the same cap
//          (int(cpu_offload_gb x 1024**3); --cpu-offload-gb is an int in server_args.py); before
//          each forward of an offloaded layer it copies the layer's parameters to the GPU
//          (functional_call on .to(device)), transient memory not counted here.
//   Which:  only the modules make_layers builds (the decoder layer stack: models/utils.py in vLLM,
//          utils/common.py in SGLang, get_offloader().wrap_modules), the first of the rank's stage
//          first; the embedding, the output head, the final norm and a vision tower stay on the GPU.
//   How:   per parameter, in the order the layer creates them (attention, then the MLP or experts,
//          then the two norms); a parameter is moved while the bytes moved so far are below the
//          cap, so the one that crosses it moves whole and the rest stay ("one module might have
//          some parameters offloaded and some not").
// The GPU's figure drops by what moved: vLLM's "Model loading took" (torch's allocated bytes) and
// SGLang's "mem usage" (the fall in free memory) see only device memory; the KV pool gets the rest.
//
// vLLM only (SGLang's offloader has no name filter, and its own group offloader, OffloaderV2 for
// --offload-group-size, needs model-specific accessors and is not modelled:
// https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/utils/offloader.py):
//   --cpu-offload-params SEG [SEG ...]
//          https://github.com/vllm-project/vllm/blob/main/vllm/config/offload.py
//          (UVAOffloadConfig.cpu_offload_params, a set[str]) and
//          https://github.com/vllm-project/vllm/blob/main/vllm/engine/arg_utils.py
//          (collection_to_kwargs: nargs="+", so one or more words, the last use of the flag
//          winning): only the parameters whose name within the decoder layer
//          (module.named_parameters(): "mlp.gate_up_proj.weight") matches a segment move, the match
//          being f".{seg}." in f".{name}."
//          (https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/offloader/uva.py
//          _offload_param): whole dotted segments, one or several ("mlp", "gate_up_proj",
//          "experts.w2_weight"; not "gate" for "gate_up_proj", not "w2" for "w2_weight"). The cap
//          check comes first for every parameter, so a non-matching one is skipped and the walk
//          goes on to the next.
//   --offload-backend prefetch / --offload-group-size G (config/offload.py PrefetchOffloadConfig;
//          https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/offloader/base.py
//          create_offloader: "auto" picks prefetch when G > 0, else UVA when --cpu-offload-gb > 0),
//          https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/offloader/prefetch.py
//          PrefetchOffloader: no byte cap; of the stage's layers (make_layers' generator, numbered
//          from 0 on each pipeline stage) those with i mod G >= G - N (N = --offload-num-in-group)
//          move, every parameter of them or the ones --offload-params matches (the same segment
//          rule; a layer with none is skipped). They sit in pinned host memory (_CpuParamOffloader)
//          and are COPIED (gpu_buffer.copy_(cpu_storage, non_blocking=True) on a side stream) into
//          a StaticBufferPool on the GPU before each offloaded layer runs: prefetch_step
//          (--offload-prefetch-step) slots of every distinct (name, shape, stride, dtype) among the
//          offloaded parameters, so for layers alike prefetch_step layers' worth of them. The pool
//          is allocated in post_init, which
//          https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_model_runner.py
//          load_model calls after "Model loading took" is measured and before the profile run,
//          whose non-KV figure is the fall in free memory since the worker began
//          (https://github.com/vllm-project/vllm/blob/main/vllm/utils/mem_utils.py
//          memory_profiling: total_consumed): the KV cache gets it less.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vc {

// The flag's value as bytes: int(gib x 1024**3), as Python truncates. Throws InputError naming
// `flag` for a value the engine refuses (negative, not a number; SGLang: not a whole number).
uint64_t cpu_offload_cap_bytes(const std::string& value, const std::string& flag, bool whole_only);

// One parameter of a decoder layer as the offloader sees it: its name within the layer (vLLM's
// module.named_parameters()) and its bytes on this rank.
struct NamedParam {
  std::string name;
  uint64_t bytes = 0;
};

// vLLM's segment rule: f".{segment}." in f".{name}." for any of `segments` (uva.py, prefetch.py).
bool offload_name_matches(const std::string& name, const std::vector<std::string>& segments);

// What the offloader is asked to do on one rank. UVA (and SGLang): `cap` bytes, `segments` from
// --cpu-offload-params. Prefetch (vLLM): group_size > 0, `segments` from --offload-params.
struct OffloadRule {
  uint64_t cap = 0;
  std::vector<std::string> segments;  // empty: every parameter may move
  uint64_t group_size = 0;            // prefetch: --offload-group-size (0: the UVA walk)
  uint64_t num_in_group = 1;          // --offload-num-in-group
  uint64_t prefetch_step = 1;         // --offload-prefetch-step
  bool prefetch() const { return group_size > 0; }
  bool on() const { return cap > 0 || prefetch(); }
};

// vLLM's offload flags beyond --cpu-offload-gb (config/offload.py OffloadConfig, UVAOffloadConfig,
// PrefetchOffloadConfig; flags in vllm/engine/arg_utils.py).
struct VllmOffloadSettings {
  std::string backend = "auto";              // --offload-backend: auto, uva, prefetch
  std::vector<std::string> cpu_offload_params;  // --cpu-offload-params (UVA)
  uint64_t group_size = 0;                   // --offload-group-size (0: off)
  uint64_t num_in_group = 1;                 // --offload-num-in-group
  uint64_t prefetch_step = 1;                // --offload-prefetch-step
  std::vector<std::string> offload_params;   // --offload-params (prefetch)
  // create_offloader (offloader/base.py): "auto" is prefetch when a group size is given.
  bool prefetch() const { return backend == "prefetch" || (backend == "auto" && group_size > 0); }
};

// create_offloader (offloader/base.py): "auto" is prefetch when group_size > 0, else UVA with the
// cap; "uva" and "prefetch" as named. The rule the chosen backend walks (off: rule.on() false).
OffloadRule vllm_offload_rule(uint64_t cap, const VllmOffloadSettings& s);

struct CpuOffload {
  uint64_t cap = 0;          // int(cpu_offload_gb x 1024**3)
  uint64_t bytes = 0;        // parameters moved to pinned host memory on this rank
  uint64_t params = 0;       // how many parameters moved
  uint64_t layers_whole = 0; // decoder layers moved entirely
  uint64_t stage_layers = 0; // decoder layers on this rank's stage
  uint64_t moved_in_last = 0;// of a layer moved in part: its parameters moved (the last crossing the cap)
  uint64_t kept_in_last = 0; // and those that stay on the GPU
  std::vector<std::string> segments;  // the name filter the walk applied (empty: none)
  uint64_t layers_touched = 0;        // decoder layers with at least one parameter moved
  uint64_t matched_params = 0;        // with a filter: parameters of the stage's layers it matches
  // Prefetch backend (vLLM --offload-group-size): the rule, and the static GPU buffers it keeps.
  uint64_t group_size = 0, num_in_group = 0, prefetch_step = 0;
  uint64_t staging = 0;               // prefetch_step x the distinct (name, bytes) offloaded
  uint64_t staging_keys = 0;          // how many distinct (name, bytes)
  uint64_t cap_reached_in = 0;        // UVA: the layer (1-based) in which the cap was reached; 0: never
  bool prefetch() const { return group_size > 0; }
  bool on() const { return cap > 0 || prefetch(); }
};

// The offloader walking one rank's stage as the layers are created: layer() takes the layer just
// built (its parameters in creation order) and says which of them move; the next layer is created
// after that (make_layers' generator), so moved parameters are freed on the GPU first.
class OffloadWalker {
 public:
  explicit OffloadWalker(const OffloadRule& rule);
  std::vector<bool> layer(const std::vector<NamedParam>& params);
  const CpuOffload& result() const { return o_; }

 private:
  OffloadRule rule_;
  CpuOffload o_;
  uint64_t index_ = 0;                                        // the layer's index on the stage
  std::vector<std::pair<std::string, uint64_t>> keys_;        // prefetch: distinct (name, bytes)
};

// The offloader's walk over one rank's decoder layers: `layers` holds each layer's parameter
// bytes in creation order (no names: no filter).
CpuOffload cpu_offload_walk(const std::vector<std::vector<uint64_t>>& layers, uint64_t cap);
CpuOffload cpu_offload_walk(const std::vector<std::vector<NamedParam>>& layers, const OffloadRule& rule);

// How the walk went, in words with its numbers (the formula of the host line).
std::string cpu_offload_formula(const CpuOffload& o);

// The flag that moved the weights: --offload-group-size (vLLM's prefetch backend), else --cpu-offload-gb.
const char* cpu_offload_flag(const CpuOffload& o);

// What a rank's weights formula subtracts: " - N B moved to host memory by FLAG", or "" when nothing moved.
std::string cpu_offload_moved_suffix(const CpuOffload& o);

}  // namespace vc
