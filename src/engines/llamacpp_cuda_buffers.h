#pragma once
// What a CUDA build of llama.cpp allocates per buffer type, as llama_get_memory_breakdown()
// names them: "CUDA0" (weights, KV cache, compute buffer on the GPU), "CUDA_Host" (the pinned
// host compute buffer of the CPU backend's part of the graph), "CPU_Mapped" (weights read from
// the mmapped file) and "CPU" (KV cache of layers left on the host). The rules: docs/engines.md
// ("Per device on a CUDA build"); validated against tests/data/llamacpp-cuda-measured.json.
#include <cstdint>
#include <map>
#include <string>

#include "model/model.h"

namespace vc {

struct LlamaCppSettings;
struct LlamaCppPlacementSettings;

struct LlamaCppBufferBytes {
  uint64_t model = 0, context = 0, compute = 0;
};

using LlamaCppBuffers = std::map<std::string, LlamaCppBufferBytes>;  // by llama.cpp's buffer type name

// One GPU (CUDA0) and the host; `placement` gives -ngl and -ot.
LlamaCppBuffers llamacpp_cuda_buffers(const Model& model, const LlamaCppSettings& settings, const LlamaCppPlacementSettings& placement);

}  // namespace vc
