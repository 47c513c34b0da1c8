#include "plan/engine_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/checked.h"
#include "core/units.h"

namespace vc {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Cache dtype as each engine spells it.
std::string llama_cache_type(const std::string& dtype) {
  const std::string d = lower(dtype);
  if (d == "f16" || d == "fp16") return "f16";
  if (d == "bf16") return "bf16";
  if (d == "f32") return "f32";
  return d;  // q8_0, q4_0, ... are llama.cpp's own names
}
std::string vllm_cache_type(const std::string& dtype) {
  const std::string d = lower(dtype);
  if (d.rfind("fp8", 0) == 0 || d.rfind("e4m3", 0) == 0 || d.rfind("e5m2", 0) == 0) return d == "fp8_e5m2" || d == "e5m2" ? "fp8_e5m2" : "fp8";
  return "auto";
}

// The fraction of each device the engine may take: the busiest device's need, rounded up to a
// hundredth, never below 0.5 nor above 0.98.
double memory_fraction(const Plan& p) {
  if (!p.split) return 0.9;
  const auto& b = p.split->devices[p.split->busiest];
  double f = std::ceil(static_cast<double>(b.total) * 100.0 / static_cast<double>(b.capacity)) / 100.0;
  return std::clamp(f, 0.5, 0.98);
}

EngineCommand llamacpp(const Plan& p) {
  EngineCommand c;
  c.engine = "llamacpp";
  const auto& s = p.estimate.scenario;
  std::string cmd = fmt::format("llama-server -m {}.gguf -c {} -np {}", p.model->id, s.context * s.sequences, s.sequences);
  const std::string ct = llama_cache_type(s.cache_dtype);
  if (ct != "f16") cmd += fmt::format(" -ctk {} -ctv {}", ct, ct);
  if (!p.box.gpus.empty()) {
    cmd += " -ngl 999";
    if (p.box.gpus.size() > 1) {
      std::string ts;
      for (const auto& g : p.box.gpus) ts += fmt::format("{}{}", ts.empty() ? "" : ",", std::llround(static_cast<double>(g.memory_bytes) / 1e9));
      cmd += " --split-mode " + std::string(p.options.split == SplitMode::Tensor ? "row" : "layer") + " -ts " + ts;
    }
  }
  if (p.offload) {
    const auto& o = *p.offload;
    const uint64_t gpu_slots = !o.tiers.empty() && o.tiers[0].tier == "GPU" ? o.tiers[0].experts_per_layer : 0;
    if (p.box.gpus.empty()) {
      cmd += " -ngl 0";
    } else if (gpu_slots == 0 || o.experts == 0) {
      cmd += " -ot \"exps=CPU\"";
      c.notes.push_back("-ot exps=CPU keeps every routed expert tensor in system memory; attention, shared experts and the cache stay on the GPUs");
    } else {
      const uint64_t moe = p.footprint.moe_layers();
      const uint64_t on_gpu = o.experts ? moe * gpu_slots / o.experts : 0;
      if (moe > on_gpu) cmd += fmt::format(" --n-cpu-moe {}", moe - on_gpu);
      c.notes.push_back(fmt::format("llama.cpp keeps one tensor per layer for all experts, so the GPU takes whole layers of experts ({} of {} MoE layers) "
                                    "rather than the hottest experts: its hit rate is the uniform share, not the Zipf one",
                                    on_gpu, moe));
    }
    c.notes.push_back("weights stay memory-mapped (default --mmap): the page cache in RAM holds the experts read most, SSD serves the rest");
  }
  if (p.box.nodes > 1) c.notes.push_back("llama.cpp spans nodes only through its RPC backend (--rpc host:port per node)");
  c.command = cmd;
  return c;
}

EngineCommand vllm(const Plan& p) {
  EngineCommand c;
  c.engine = "vllm";
  const auto& s = p.estimate.scenario;
  const uint64_t count = std::max<uint64_t>(1, p.box.device_count());
  std::string par;
  switch (p.options.split) {
    case SplitMode::Layer:
    case SplitMode::Pipeline: par = count > 1 ? fmt::format("--pipeline-parallel-size {}", count) : ""; break;
    case SplitMode::Tensor: par = fmt::format("--tensor-parallel-size {}", p.box.gpus.size()) + (p.box.nodes > 1 ? fmt::format(" --pipeline-parallel-size {}", p.box.nodes) : ""); break;
    case SplitMode::Expert: par = fmt::format("--data-parallel-size {} --enable-expert-parallel", count); break;
    case SplitMode::TensorExpert: par = fmt::format("--tensor-parallel-size {} --enable-expert-parallel", count); break;
  }
  if (!par.empty()) par += " ";
  c.command = fmt::format("vllm serve {} {}--max-model-len {} --max-num-seqs {} --gpu-memory-utilization {:.2f}", p.model->id, par, s.context, s.sequences,
                          memory_fraction(p));
  const std::string kv = vllm_cache_type(s.cache_dtype);
  if (kv != "auto") c.command += " --kv-cache-dtype " + kv;
  const uint64_t off_gpu = p.offload && p.offload->tiers.size() > 1 ? p.offload->tiers[1].experts + p.offload->tiers[1].weights : 0;
  if (p.offload && off_gpu) {
    c.command += fmt::format(" --cpu-offload-gb {}", std::llround(std::ceil(static_cast<double>(off_gpu) / 1e9)));
    c.notes.push_back("--cpu-offload-gb: vLLM streams those weights from RAM over PCIe every step, with no hot-expert cache");
  }
  if (p.box.nodes > 1) c.notes.push_back("across nodes: start a Ray cluster (ray start) on every node first");
  return c;
}

EngineCommand sglang(const Plan& p) {
  EngineCommand c;
  c.engine = "sglang";
  const auto& s = p.estimate.scenario;
  const uint64_t count = std::max<uint64_t>(1, p.box.device_count());
  std::string par;
  switch (p.options.split) {
    case SplitMode::Layer:
    case SplitMode::Pipeline: par = count > 1 ? fmt::format("--pp-size {}", count) : ""; break;
    case SplitMode::Tensor: par = fmt::format("--tp {}", p.box.gpus.size()) + (p.box.nodes > 1 ? fmt::format(" --pp-size {}", p.box.nodes) : ""); break;
    case SplitMode::Expert: par = fmt::format("--tp {} --dp {} --ep {} --enable-dp-attention", count, count, count); break;
    case SplitMode::TensorExpert: par = fmt::format("--tp {} --ep {}", count, count); break;
  }
  if (!par.empty()) par += " ";
  c.command = fmt::format("python -m sglang.launch_server --model-path {} {}--context-length {} --max-running-requests {} --mem-fraction-static {:.2f}", p.model->id,
                          par, s.context, s.sequences, memory_fraction(p));
  const std::string kv = vllm_cache_type(s.cache_dtype);
  if (kv != "auto") c.command += " --kv-cache-dtype " + (kv == "fp8" ? std::string("fp8_e4m3") : kv);
  if (p.box.nodes > 1) c.command += fmt::format(" --nnodes {} --node-rank 0 --dist-init-addr HEAD:5000", p.box.nodes), c.notes.push_back("run once per node with its --node-rank");
  return c;
}

}  // namespace

std::vector<EngineCommand> engine_commands(const Plan& p) {
  std::vector<EngineCommand> out;
  if (!p.model->weights_available()) return out;  // no command line for weights nobody can download
  const std::string want = lower(p.options.engine);
  auto supported = [&](const char* engine) {
    if (p.box.gpus.empty()) return std::string(engine) == "llamacpp";
    return std::all_of(p.box.gpus.begin(), p.box.gpus.end(), [&](const Device& d) { return std::find(d.engines.begin(), d.engines.end(), engine) != d.engines.end(); });
  };
  if ((want == "generic" || want == "llamacpp") && (want == "llamacpp" || supported("llamacpp"))) out.push_back(llamacpp(p));
  if ((want == "generic" || want == "vllm") && (want == "vllm" || supported("vllm"))) out.push_back(vllm(p));
  if ((want == "generic" || want == "sglang") && (want == "sglang" || supported("sglang"))) out.push_back(sglang(p));
  return out;
}

}  // namespace vc
