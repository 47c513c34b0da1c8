#pragma once
// How an engine divides a model across devices. Rules (docs/plan.md):
// - layer / pp: every layer whole on one device, contiguous, balanced by bytes in proportion to
//   each device's memory (llama.cpp --split-mode layer with -ts; vLLM/SGLang pipeline stages);
//   embeddings on the first device, output head on the last.
// - tp: a tensor-parallel group per node (pipeline across nodes). Weights and heads divided by the
//   degree; kv heads replicated when fewer than the degree (each rank keeps one); latent (MLA)
//   caches whole on every rank (vLLM); recurrent state heads divided.
// - ep: routed experts divided across all devices; everything else replicated, sequences (and so
//   their cache) divided across ranks (data-parallel attention).
// - tp+ep: heads divided over all devices as tp, routed experts divided as ep.
#include <cstdint>
#include <string>
#include <vector>

#include "plan/footprint.h"
#include "plan/hardware.h"

namespace vc {

enum class SplitMode { Layer, Pipeline, Tensor, Expert, TensorExpert };
const char* to_string(SplitMode mode);
SplitMode parse_split(const std::string& text, const std::string& subject);

struct DeviceShare {
  std::string device;       // device name
  uint64_t node = 0;
  uint64_t rank = 0;        // index over all devices
  uint64_t stage = 0;       // pipeline stage (layer group)
  uint64_t capacity = 0;
  uint64_t bandwidth = 0;
  double bf16_tflops = 0;
  uint64_t weights = 0;
  uint64_t cache = 0;
  uint64_t state = 0;
  uint64_t overhead = 0;    // percentage of this device's weights + cache + state, plus the fixed part
  uint64_t total = 0;
  uint64_t read_per_token = 0;  // bytes one decode step of one sequence reads here
  std::string holds;        // "embeddings, layers 1-8"
  int64_t headroom() const { return static_cast<int64_t>(capacity) - static_cast<int64_t>(total); }
  bool fits() const { return total <= capacity; }
};

struct SplitInput {
  const Footprint* footprint = nullptr;
  const Box* box = nullptr;
  SplitMode mode = SplitMode::Layer;
  uint64_t context = 0;
  uint64_t sequences = 1;
  uint64_t per_device_fixed = 0;  // per-process context (CUDA context, workspaces)
};

struct SplitResult {
  std::vector<DeviceShare> devices;
  uint64_t tp = 1;       // tensor-parallel degree
  uint64_t pp = 1;       // pipeline stages
  uint64_t ep = 1;       // expert-parallel degree
  uint64_t dp = 1;       // data-parallel attention ranks
  std::size_t busiest = 0;  // index of the device with the least headroom
  bool all_fit = false;
  uint64_t kv_heads_per_rank = 0;  // tp: kv heads each rank keeps (replicated when fewer than tp)
  bool kv_replicated = false;
  bool latent_replicated = false;
};

SplitResult split(const SplitInput& in);

}  // namespace vc
