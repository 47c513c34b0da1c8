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
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vc {

// The flag's value as bytes: int(gib x 1024**3), as Python truncates. Throws InputError naming
// `flag` for a value the engine refuses (negative, not a number; SGLang: not a whole number).
uint64_t cpu_offload_cap_bytes(const std::string& value, const std::string& flag, bool whole_only);

struct CpuOffload {
  uint64_t cap = 0;          // int(cpu_offload_gb x 1024**3)
  uint64_t bytes = 0;        // parameters moved to pinned host memory on this rank
  uint64_t params = 0;       // how many parameters moved
  uint64_t layers_whole = 0; // decoder layers moved entirely
  uint64_t stage_layers = 0; // decoder layers on this rank's stage
  uint64_t moved_in_last = 0;// of a layer moved in part: its parameters moved (the last crossing the cap)
  uint64_t kept_in_last = 0; // and those that stay on the GPU
  bool on() const { return cap > 0; }
};

// The offloader's walk over one rank's decoder layers: `layers` holds each layer's parameter
// bytes in creation order.
CpuOffload cpu_offload_walk(const std::vector<std::vector<uint64_t>>& layers, uint64_t cap);

// How the walk went, in words with its numbers (the formula of the host line).
std::string cpu_offload_formula(const CpuOffload& o);

}  // namespace vc
