#pragma once
// The speed model's constants, kept as data (data/speed_efficiency.json) with how each was found:
// per engine, backend and memory kind the share of peak bandwidth decode reaches and a fixed cost
// per layer (scaled by the GPU's compute rate); the cost of a hand-off between GPU and CPU; per engine and backend the share of peak
// compute prefill reaches; and the spread of measured runs around the estimate, which is the range
// every printed tok/s carries. docs/performance.md says how they were fitted.
#include <string>
#include <string_view>
#include <vector>

namespace vc {

// One row: "*" in engine, backend or memory matches anything; the most specific row wins.
struct DecodeFactor {
  std::string engine, backend, memory;
  double bandwidth_share = 0;  // achieved / peak bandwidth for weight and cache reads
  double layer_us = 0;         // fixed cost per layer computed on this backend (launches, syncs)
  double moe_layer_us = 0;     // extra per MoE layer (router, top-k, expert gather)
  std::string source;
};

struct PrefillFactor {
  std::string engine, backend, memory;
  // achieved / the device's dense BF16 rate (FP32 accumulate); above 1 where the engine's kernels
  // use a faster path (llama.cpp's int8 MMQ for quantized weights, FP16 accumulate on GeForce)
  double compute_share = 0;
  std::string source;
};

// measured / estimate between these bounds for about 80% of the fitted runs.
struct SpeedRange {
  double low = 1, high = 1;
  std::string source;
};

// The rule engine's range (plan/plan.cpp): the share of its bound (speed/speed_bound.h) measured
// runs reach lies between these for about 80% of the fitted runs, whatever --efficiency says.
struct BoundShareRange {
  double low = 0, high = 0;
  std::string source;
};

struct SpeedData {
  std::vector<DecodeFactor> decode;
  std::vector<PrefillFactor> prefill;
  double handoff_us = 0;            // per switch between a GPU and the CPU within one token
  double tp_allreduce_us = 0;       // per layer with tensor parallelism (two all-reduces)
  double pcie_share = 1;            // achieved / nominal host-link bandwidth (prefill weight copies)
  double cpu_flops_per_ram_byte = 0;  // CPU prefill: effective FLOP/s per byte/s of RAM bandwidth
  double second_socket_gain = 0;    // RAM bandwidth a second socket adds, as a share of one socket's
  // The fixed costs per layer are a GPU's at this dense BF16 rate (devices.json: the RTX 4090's).
  // Of them, layer_compute_share is small kernels (norms, rope, routing, activation quantization)
  // that finish sooner on a GPU with more compute; the rest is launch and synchronisation, which
  // does not scale. 0: one cost on every GPU.
  double layer_reference_tflops = 0;
  double layer_compute_share = 0;
  // llama.cpp's CPU decode when the run's thread count is known (ggml-cpu.c: every thread takes a
  // share of each node's rows, then all wait at a barrier before the next node): the CPU's weights
  // take the longer of their RAM read and a read at cpu_thread_gbps GB/s a thread (dequantise and
  // dot), and each layer and each MoE layer on the CPU costs cpu_threaded_layer_us (its nodes'
  // barriers and small ops). 0: the row's bandwidth and layer_us whatever the threads.
  double cpu_thread_gbps = 0;
  double cpu_threaded_layer_us = 0;
  // CPU prefill when the run says how many threads: each thread's achieved GFLOP/s (prompt work is
  // compute-bound, so it scales with the threads rather than the RAM). 0: cpu_flops_per_ram_byte.
  double cpu_prefill_gflops_per_thread = 0;
  SpeedRange decode_on_device, decode_offload, prefill_range;
  BoundShareRange rule_decode_on_device, rule_decode_offload, rule_prefill;
  std::string source;               // where the fit is described

  static const SpeedData& builtin();
  explicit SpeedData(std::string_view json_text);
  const DecodeFactor& decode_for(const std::string& engine, const std::string& backend, const std::string& memory) const;
  // The factor on the per-layer costs for a device: (1 - c) + c x reference / its TFLOPS on a GPU
  // with a known rate, 1 on the CPU.
  double layer_cost_scale(bool gpu, double tflops) const;
  const PrefillFactor& prefill_for(const std::string& engine, const std::string& backend, const std::string& memory) const;
};

// The engine family whose factors apply: llamacpp (llama.cpp, ik_llama.cpp, Ollama), ktransformers,
// vllm (vLLM and SGLang). InputError for others.
std::string speed_engine_family(const std::string& engine);

}  // namespace vc
