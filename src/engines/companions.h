#pragma once
// What loads beside the text model, and where each engine puts it: a vision/audio projector
// (mmproj GGUF: tower weights and the encoder's compute), a draft model for speculative decoding
// (its weights, cache and compute), LoRA adapters. run_engine adds them to the per-device answer:
//   llamacpp  mmproj on the first GPU (clip.cpp asks for the first GPU backend) unless
//             --no-mmproj-offload; the draft as llama-server loads it (-ngld, -cd, -ctkd/-ctvd, one
//             sequence, the target's -ts); each adapter tensor beside the layer it modifies
//   rule      every line on the first device
//   vllm, sglang  the drafter of `speculative` (engines/serving_speculative.h) is placed by the
//             engine itself, since it changes the KV pool; mmproj and llama.cpp-style adapters
//             are not placed (a note says so): their towers are in the checkpoint's weights
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engines/serving_speculative.h"
#include "estimate/vision_tower.h"
#include "sources/companion_files.h"

namespace vc {

struct EngineAnswer;
struct EngineRequest;
struct EngineRun;

struct Companions {
  std::optional<VisionTower> tower;
  uint64_t images = 0;          // per sequence
  uint64_t image_tokens = 0;    // images x tokens per image; already in the scenario's context
  bool mmproj_offload = true;   // llama.cpp --no-mmproj-offload: false
  std::shared_ptr<const Model> draft;
  std::optional<uint64_t> draft_gpu_layers;  // llama.cpp -ngld (none: all layers where the target offloads)
  uint64_t draft_context = 0;                // -cd (0: the target's context per sequence)
  std::string draft_cache_type = "F16";      // -ctkd / -ctvd
  std::string draft_devices;                  // -devd: "CUDA0,CUDA1", "none" (empty: the target's devices)
  std::vector<std::pair<std::string, std::string>> draft_overrides;  // -otd: pattern, buffer (as -ot)
  ServingSpeculative speculative;            // vLLM / SGLang: the method and its settings (draft: the model above)
  std::vector<AdapterFile> loras;
  bool empty() const { return !tower && !draft && loras.empty(); }
};

// Adds the request's companions to `answer` (built by the engine for the text model alone) and
// recomputes the totals and fits of the devices they land on.
void place_companions(const EngineRequest& request, const EngineRun& run, EngineAnswer& answer);

}  // namespace vc
