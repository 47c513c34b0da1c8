#pragma once
// vLLM's pipeline stages (vllm/distributed/utils.py get_pp_indices): each of the pp stages gets
// layers / pp layers; the remainder goes one layer each to the stages before the last, from the
// second-to-last backwards, so the first stage gets one only when the remainder is pp - 1. The
// first stage also holds the input embedding, the last the final norm and the output head.
#include <cstdint>
#include <vector>

namespace vc {

struct VllmStage {
  uint64_t first_layer = 0;
  uint64_t layers = 0;
};

// The stages of a model of `layers` layers over `pp` ranks, first to last. InputError when pp is
// 0 or above the layer count.
std::vector<VllmStage> vllm_pipeline_stages(uint64_t layers, uint64_t pp);

}  // namespace vc
