#pragma once
// The CUDA graphs vLLM 0.19 captures on one rank after its KV cache is allocated, and the memory
// they take ("Graph capturing finished in N secs, took X GiB").
//
// What is captured (read from vLLM's source): with the default cudagraph_mode FULL_AND_PIECEWISE,
// one set of piecewise graphs (the model split at its attention ops, each piece one graph) for
// every capture size, for mixed batches, and one full graph for every capture size a batch of
// one-token decodes can fill, i.e. at most max_num_seqs (vllm/v1/cudagraph_dispatcher.py). The
// capture sizes are [1, 2, 4] + 8 to 248 by 8 + 256 to the largest by 16, the largest
// min(2 x max_num_seqs, 512) cut to max_num_batched_tokens (vllm/config/vllm.py
// _set_cudagraph_sizes; speculative decoding's longer decode queries are not counted here).
//
// The memory (fitted): gpu_model_runner.py capture_model reports the drop in free memory over the
// whole capture; profile_cudagraph_memory (vLLM 0.21) estimates the same memory as the first
// capture of each mode (the shared graph pool, which every later, smaller capture reuses) plus the
// second capture's memory for each further capture size (the graphs themselves). Hence a fixed
// pool, and graph memory for each capture size that grows with the kernels captured: with the
// layers in the graphs, a routed-expert layer launching more kernels (router, top-k, expert
// alignment, two grouped GEMMs, the sum) than a dense one. The three constants are fitted on the
// fitted share of the public vLLM 0.19 logs on H100s (docs/accuracy.md).
#include <cstdint>

#include "model/model.h"

namespace vc {

struct VllmGraphCapture {
  uint64_t sizes = 0;       // capture sizes, one set of piecewise graphs each
  uint64_t full_sizes = 0;  // of them, those up to max_num_seqs, also captured as FULL decode graphs
  uint64_t layers = 0;      // decoder layers in the graphs: the rank's pipeline stage + a drafter's
  uint64_t moe_layers = 0;  // of them, routed-expert layers
};

inline constexpr uint64_t kVllmGraphPool = 216ull << 20;     // the shared pool and the first capture's fixed cost
inline constexpr uint64_t kVllmGraphLayer = 174ull << 10;    // a decoder layer, a capture size (piecewise or full)
inline constexpr uint64_t kVllmGraphMoeLayer = 56ull << 10;  // more for a routed-expert layer, a capture size

// The capture sizes alone (layers 0).
VllmGraphCapture vllm_graph_sizes(uint64_t max_num_seqs, uint64_t max_num_batched_tokens);

// Rank 0's graphs: the first ceil(layers / pp) layers of the target (its pipeline stage), plus every
// layer of a drafter, captured in the same loop with the same sizes (nullptr: none).
VllmGraphCapture vllm_graph_capture(const Model& target, uint64_t pp, const Model* drafter, uint64_t max_num_seqs,
                                    uint64_t max_num_batched_tokens);

// kVllmGraphPool + (sizes + full_sizes) x (layers x kVllmGraphLayer + moe_layers x kVllmGraphMoeLayer).
uint64_t vllm_cuda_graphs(const VllmGraphCapture& g);

}  // namespace vc
