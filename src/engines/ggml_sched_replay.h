#pragma once
// A replay of ggml_backend_sched (ggml/src/ggml-backend.cpp, llama.cpp 80fb11ac) for one GPU and
// the CPU: which backend runs each op of a compute graph, where the graph splits, which tensors
// are copied between the two, and what each backend's compute buffer then holds. Our own code,
// written from ggml_backend_sched_split_graph:
// - pass 1: graph inputs on the CPU; an op writing into a cache on the cache's device; an op
//   reading a weight on the weight's device, except that a weight in host memory lets the GPU take
//   the op when ggml-cuda's offload_op wants it (op_offload: at least 32 rows, GET_ROWS never);
//   ROPE and FLASH_ATTN_EXT are not placed by their weights;
// - pass 2: the GPU's ops spread down then up to unplaced neighbours it supports, then any
//   backend's, down then up; pass 3: what is left goes to the backend holding most of its
//   sources; pass 4: views follow what they view;
// - pass 5: a new split where the backend changes, or where an op of the split reads a weight on
//   the other device once the split has inputs; each source on the other device is copied into the
//   split's backend once (later splits on that backend read the same copy);
// - the copy graph: per split, each input's copy is allocated at the split's start, then its ops.
// ggml-alloc then packs each backend's tensors in its own buffer (engines/ggml_alloc_replay.h).
#include <cstdint>
#include <functional>

#include "engines/ggml_alloc_replay.h"

namespace vc {

constexpr int kSchedGpu = 0, kSchedCpu = 1;  // backend ids, in the scheduler's priority order

struct SchedDevices {
  std::function<int(int weight)> weight_backend;        // kSchedGpu or kSchedCpu for Model::tensors[weight]
  std::function<int(int layer)> cache_backend;          // where layer's KV cache lives
  std::function<uint64_t(int weight)> weight_gpu_bytes;  // a weight's copy in the GPU buffer (its CUDA allocation size)
  std::function<uint64_t(int weight)> weight_cpu_bytes;  // a weight's copy in the host buffer
  bool op_offload = true;                                // llama.cpp's default (--no-op-offload turns it off)
};

struct SchedPeaks {
  uint64_t gpu = 0, cpu = 0;  // the GPU's compute buffer, the CPU backend's (CUDA_Host)
  uint64_t splits = 0;
};

// `graph` must have `scheduled` set: every op says what it reads.
SchedPeaks ggml_sched_peaks(const GgmlGraph& graph, const SchedDevices& devices, uint64_t gpu_alignment, uint64_t cpu_alignment);

}  // namespace vc
