#pragma once
// What one token reads from each memory, for the placement an engine actually makes:
//   llamacpp      -ngl / -ts / -ot (with --n-cpu-moe, --cpu-moe) decide each layer's tensors'
//                 buffer; devices take their layers in turn; routed experts are read k of n; the
//                 cache stays with its layer. No hot-expert cache: a tensor is where -ot put it.
//   ktransformers attention, shared experts and cache on the GPU, routed experts in RAM (but for
//                 `gpu_experts` of each layer's n, which the GPU serves in proportion).
//   vllm          tensor parallel: every rank holds and reads 1/TP of everything at once; with
//                 expert parallelism the routed experts are whole on the EP ranks and the
//                 busiest rank's share of a token's experts is read; with --cpu-offload-gb the
//                 rank's offloaded bytes are read over its host link.
// Bytes come from the model's per-layer footprint (plan/footprint.h), so the reads agree with the
// memory figures; prefill work is 2 FLOPs per active parameter plus attention over the context.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engines/llamacpp_placement.h"
#include "plan/footprint.h"
#include "plan/hardware.h"

namespace vc {

struct SpeedSettings {
  std::string engine = "llamacpp";      // llamacpp, ik_llama.cpp, ollama, ktransformers, vllm, sglang
  std::string backend;                  // cuda, rocm, vulkan, metal, cpu; "" = the GPU vendor's default
  LlamaCppPlacementSettings llamacpp{1u << 20, 1, {}, {}, 0, {}};  // -ngl (default: all), -ts, -ot
  uint32_t tensor_parallel = 1;         // vllm / sglang: attention and dense weights over this many GPUs
  // vllm / sglang: the routed experts over this many GPUs (--enable-expert-parallel, --ep); 1: each
  // expert a TP slice on every GPU. The busiest GPU's share of a token's experts sets the step.
  uint32_t expert_parallel = 1;
  uint32_t gpu_experts = 0;             // ktransformers: experts per layer kept on the GPU
  std::optional<uint32_t> experts_per_token;  // fewer (or more) active experts than the config
  uint32_t sockets = 1;                 // CPU sockets; box.ram_bandwidth is one socket's
  std::optional<uint32_t> threads;      // CPU threads (llama.cpp -t); none: the engine's default
  uint64_t depth = 0;                   // tokens already in the cache
  uint64_t prompt = 512;                // prefill: prompt tokens
  // Prompt tokens one prefill forward pass computes: llama.cpp's -ub (weights in RAM cross PCIe once
  // per ubatch); vLLM/SGLang the prompt up to the chunk (offloaded weights cross once per pass).
  uint64_t ubatch = 512;
  // vllm / sglang --cpu-offload-gb (engines/serving_cpu_offload.h): a rank's weight bytes in pinned
  // host memory, which cross the GPU's host link at every forward pass, so once per decoded token.
  // vLLM's GPU reads them in place (UVA: out of its own memory's reads); SGLang copies them into
  // GPU memory first and reads them there too.
  uint64_t host_offloaded = 0;
  // Whether they are copied into GPU memory and read there too (SGLang's offloader; vLLM's prefetch
  // offloader, offloader/prefetch.py: copy_ into static buffers) rather than read in place (vLLM's
  // UVA offloader). SGLang's engine name implies it.
  bool host_offload_copied = false;
  // llama.cpp with its weights memory-mapped (the default) on a host short of RAM: the mapped bytes
  // the page cache cannot keep (DeviceAllocation::paged_out). The OS reads them from the SSD again
  // as tokens need them: the RAM's reads shrink by their share, an "SSD (page-ins)" memory read at
  // box.ssd_bandwidth takes it (unknown when that is 0).
  uint64_t paged_out = 0;
};

struct MemoryRead {
  std::string name;           // "RTX 4090 #1", "RAM"
  std::string backend;        // who computes what is read here: cuda, rocm, vulkan, metal, cpu
  std::string memory;         // gddr, hbm, unified, ram; host_link: a GPU's reads over PCIe (--cpu-offload-gb); ssd: mmap page-ins
  uint64_t bandwidth = 0;     // bytes per second (peak)
  uint64_t weights_read = 0;  // weight bytes read per decoded token
  uint64_t cache_read = 0;    // cache and state bytes read per decoded token (one sequence)
  uint64_t weights_held = 0;  // weight bytes resident here
  uint32_t layers = 0;        // layers whose attention runs here
  uint32_t moe_layers = 0;    // MoE layers whose routed experts run here
  double tflops = 0;          // peak dense 16-bit (GPUs)
  uint64_t host_link = 0;     // GPUs: bytes per second to the host (PCIe)
  double prefill_flops = 0;   // FLOPs per prompt token computed here
  bool is_gpu() const { return backend != "cpu"; }
};

struct TokenReads {
  std::string engine;                // the family: llamacpp, ktransformers, vllm
  std::vector<MemoryRead> memories;  // vllm: one rank
  uint32_t tensor_parallel = 1;
  uint32_t handoffs = 0;             // GPU <-> CPU switches per token
  uint32_t layers = 0;
  uint64_t ubatch = 512;
  bool offload = false;              // weights read from RAM beside a GPU
  std::optional<uint32_t> threads;   // CPU threads, when given (the per-thread cost reads it)
  std::string placement;             // what went where, in words
};

// Throws InputError naming the setting for a placement the box cannot express.
TokenReads token_reads(const Model& model, const Footprint& f, const Box& box, const SpeedSettings& s);

// llama.cpp's default backend for a device: CUDA (NVIDIA), ROCm (AMD), Metal (Apple), else Vulkan.
std::string default_backend(const Device& d);

}  // namespace vc
