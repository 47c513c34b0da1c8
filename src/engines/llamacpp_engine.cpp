// llama.cpp as an engine: where each weight tensor goes (-ngl, -ts, -ot; llamacpp_placement.h),
// the KV cache and recurrent state of each layer on that layer's device, the compute buffer on
// every device that runs layers (llamacpp_compute.h), the logits buffer on the host, and the
// margin llama.cpp's own --fit keeps free on each GPU.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/checked.h"
#include "core/units.h"
#include "engines/engine_impl.h"
#include "engines/llamacpp_cpu_weights.h"
#include "engines/llamacpp_cuda_buffers.h"
#include "engines/llamacpp_fit.h"

namespace vc::engines {
namespace {

constexpr const char* kVersion = "llama.cpp commit 34af94cd (llama_model::load_tensors, llama-kv-cache.cpp, llama_context::sched_reserve)";
constexpr const char* kSource = "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-kv-cache.cpp";
constexpr const char* kLoadSource = "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-model.cpp (llama_model::load_tensors)";
constexpr const char* kComputeSource = "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-context.cpp (sched_reserve); ggml/src/ggml-alloc.c";
// llama_params_fit (common/arg.cpp --fit-target) leaves kLlamaCppFitMargin (1024 MiB) free on every
// device for what llama.cpp does not count: cuBLAS workspaces, the CUDA pool and graphs. Measured on
// an H200 (tests/data/llamacpp-h200-runtime.json) the process holds 0.59-0.72 GiB beyond its
// breakdown, the CUDA context included, inside the margin.
constexpr uint64_t kFitMargin = kLlamaCppFitMargin;
constexpr const char* kFitSource = "https://github.com/ggml-org/llama.cpp/blob/master/common/arg.cpp (--fit-target, default 1024 MiB per device)";

std::string host_name(const std::string& buffer) { return buffer == "CPU" ? "host" : buffer; }

// What of the host's weights stays in RAM (llama-model-loader.cpp load_all_data). Memory-mapped (the
// default), the CPU reads its tensors from the page cache each token, but a repacked tensor is read
// once, to make its CPU_REPACK copy: those pages are clean file cache the OS may drop. --no-mmap
// reads only the tensors the CPU buffer keeps. --mlock pins the mapped span, originals included.
struct HostWeightsHeld {
  uint64_t dropped = 0;  // bytes of the host's weights not held in RAM once loaded
  bool pageable = false; // what it holds are file pages the OS may drop (mapped, not locked)
  std::string formula, assumption;
};
HostWeightsHeld host_weights_held(const LlamaCppPlacementSettings& placement, const HostRepack& repack) {
  HostWeightsHeld h;
  if (placement.mmap && placement.mlock) {
    h.formula = repack.source_bytes ? "; --mlock: the mapped file stays resident, the originals of the repacked tensors included" : "";
    h.assumption = "; memory-mapped and locked in RAM (--mlock)";
    return h;
  }
  h.dropped = repack.source_bytes;
  h.pageable = placement.mmap;
  if (repack.source_bytes) h.formula = "; less the tensors the CPU reads from their repacked copies (CPU_REPACK, below)";
  h.assumption = placement.mmap ? "; memory-mapped (--mmap, the default): the page cache holds what the CPU reads each token, and with less RAM the OS "
                                  "reads it from disk again"
                                : "; read into a CPU buffer (--no-mmap): resident";
  return h;
}

}  // namespace

EngineAnswer llamacpp(const EngineRequest& r, const EngineRun& run) {
  const Model& model = *r.model;
  const WeightsFigure w = resolve_weights(model, r.scenario.quant);
  const LlamaCppPlacement p = llamacpp_placement(model, w.bytes, run.placement);
  const LlamaCppMemory m = llamacpp_memory(model, run.llamacpp);
  const auto& ls = run.llamacpp;

  EngineAnswer a;
  a.engine = EngineKind::LlamaCpp;
  a.version_modelled = kVersion;
  std::string ts;
  for (double v : run.placement.tensor_split) ts += fmt::format("{}{:g}", ts.empty() ? "" : ",", v);
  a.settings = {{"n_ctx", ls.n_ctx}, {"n_parallel", ls.n_seq}, {"n_batch", ls.n_batch}, {"n_ubatch", ls.n_ubatch}, {"flash_attn", ls.flash_attn},
                {"cache_type_k", ls.type_k}, {"cache_type_v", ls.type_v}, {"swa_full", ls.swa_full}, {"kv_unified", ls.kv_unified},
                {"n_gpu_layers", run.placement.n_gpu_layers}, {"tensor_split", ts.empty() ? std::string("even") : ts},
                {"override_tensor", static_cast<uint64_t>(run.placement.overrides.size())},
                {"n_cpu_moe", run.placement.cpu_moe_layers}, {"mmap", run.placement.mmap}, {"mlock", run.placement.mlock},
                {"repack", run.placement.repack}, {"weights", w.tier}};
  for (const auto& n : run.notes) a.notes.push_back(n);

  // Devices: CUDA0..N-1 (every GPU named, even one left empty), then the host.
  std::map<std::string, DeviceAllocation> by_name;
  std::vector<std::string> order;
  const bool gpus = run.placement.n_gpu_layers > 0;
  if (gpus) {
    for (uint64_t i = 0; i < run.placement.devices; ++i) order.push_back(fmt::format("CUDA{}", i));
  }
  order.push_back("host");
  for (std::size_t i = 0; i < order.size(); ++i) {
    DeviceAllocation& d = by_name[order[i]];
    d.name = order[i];
    if (r.box && order[i] != "host" && !r.box->gpus.empty()) d.capacity = r.box->gpus[i % r.box->gpus.size()].memory_bytes;
    if (r.box && order[i] == "host" && r.box->ram_bytes) d.capacity = r.box->ram_bytes;
  }
  auto device = [&](const std::string& buffer) -> DeviceAllocation& {
    const std::string n = host_name(buffer);
    if (!by_name.count(n)) {
      order.insert(order.end() - 1, n);
      by_name[n].name = n;
    }
    return by_name[n];
  };

  // CPU_REPACK: the CPU backend keeps an interleaved copy of the 4-bit matrices it multiplies,
  // unless --no-repack.
  const HostRepack repack = run.placement.repack ? llamacpp_host_repack(model, p.host_tensors, w.tier) : HostRepack{};
  const HostWeightsHeld held_on_host = host_weights_held(run.placement, repack);
  for (const auto& [buffer, bytes] : p.weights_by_buffer) {
    const bool host = buffer == "CPU";
    const uint64_t resident = host ? checked_sub(bytes, held_on_host.dropped) : bytes;
    if (host && held_on_host.pageable) device(buffer).mapped_pageable = resident;
    device(buffer).add({AllocKind::Weights, "Weights on " + host_name(buffer), resident,
                        fmt::format("-ngl {}: the output layer first, then the last repeating layers; the input embedding on the host; {} tensor(s) moved by -ot{}",
                                    run.placement.n_gpu_layers, p.overridden_tensors, host ? held_on_host.formula : ""),
                        (p.synthesized ? std::string("tensors laid out from each layer's parameters at the tier's bytes per parameter (a catalogue model has no GGUF)")
                                       : std::string("exact GGUF tensor bytes")) +
                            (host ? held_on_host.assumption : ""),
                        kLoadSource});
  }
  if (held_on_host.dropped) {
    device("CPU").mapped_not_held = held_on_host.dropped;
    a.notes.push_back(fmt::format("host RAM counts the weights the CPU reads: llama.cpp's own breakdown (CPU_Mapped) also spans the {} the file holds for the "
                                  "repacked tensors, pages read once to make the copies, which the OS may drop (--mlock keeps them)",
                                  format_bytes(held_on_host.dropped)));
  }
  if (repack.bytes) {
    device("CPU").add({AllocKind::Weights, "Repacked CPU weights (CPU_REPACK)", repack.bytes,
                       fmt::format("{} tensor(s) on the CPU backend stored as Q4_0, Q4_K, IQ4_NL or MXFP4 with rows a multiple of 8, copied into the "
                                   "8x8 interleaved layout (each padded to 32 B)",
                                   repack.tensors),
                       repack.from_recipe ? fmt::format("x86 CPU with AVX2 (ARM repacks other types); a catalogue model has no GGUF: llama-quantize's {} recipe "
                                                        "(llama_tensor_get_type, no imatrix) says which tensors are stored in those types",
                                                        w.tier)
                                          : "x86 CPU with AVX2 (ARM repacks other types); exact GGUF tensor types and shapes",
                       "https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-cpu/repack.cpp (ggml_repack_get_optimal_repack_type); "
                       "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-quant.cpp (llama_tensor_get_type)"});
  }
  if (repack.unknown_recipe) {
    a.notes.push_back(fmt::format("CPU_REPACK (repacked copies of Q4_0/Q4_K/IQ4_NL/MXFP4 weights on the CPU backend) is not estimated for the {} tier: its "
                                  "llama-quantize recipe is not modelled; a GGUF gives exact tensor types",
                                  w.tier));
  }
  // KV and recurrent state: each layer's on that layer's device.
  struct Held {
    uint64_t kv = 0, state = 0, kv_layers = 0, state_layers = 0;
  };
  std::map<std::string, Held> held;
  for (std::size_t il = 0; il < p.layer_device.size() && il < m.layer_kv_bytes.size(); ++il) {
    Held& h = held[host_name(p.layer_device[il])];
    h.kv = checked_add(h.kv, m.layer_kv_bytes[il]);
    h.state = checked_add(h.state, m.layer_state_bytes[il]);
    h.kv_layers += m.layer_kv_bytes[il] ? 1 : 0;
    h.state_layers += m.layer_state_bytes[il] ? 1 : 0;
  }
  for (const auto& [n, h] : held) device(n);  // names every device that holds a layer
  for (const auto& n : order) {
    auto it = held.find(n);
    if (it == held.end()) continue;
    const Held& h = it->second;
    if (h.kv) {
      device(n).add({AllocKind::Kv, fmt::format("KV cache ({} layers here)", h.kv_layers), h.kv,
                     fmt::format("per layer: bytes per token at {}/{} x {} cells (window layers {}) x {} stream(s)", ls.type_k, ls.type_v, m.kv_cells, m.swa_cells,
                                 ls.kv_unified ? 1 : ls.n_seq),
                     "each layer's cache lives on that layer's device; n_ctx is split evenly over -np sequences unless --kv-unified; MLA keeps K only; "
                     "window layers keep window x (unified ? sequences : 1) + ubatch cells, padded to 256",
                     kSource});
    }
    if (h.state) {
      device(n).add({AllocKind::State, fmt::format("Recurrent state ({} layers here)", h.state_layers), h.state,
                     fmt::format("per layer: (conv + state values) x 4 B (f32) x {} sequence(s)", m.rs_cells),
                     "one f32 state row per sequence, independent of context", "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-memory-recurrent.cpp"});
    }
  }
  // Compute buffer: the scheduler reserves one on every backend that runs layers.
  std::set<std::string> hold_layers = {host_name(p.output_device)};
  for (const auto& d : p.layer_device) hold_layers.insert(host_name(d));
  std::vector<std::string> runs_layers;
  for (const auto& n : order) {
    if (hold_layers.count(n)) runs_layers.push_back(n);
  }
  // One GPU running every layer: the scheduler splits the graph between CUDA0 and the CPU backend,
  // whose part (graph inputs, token-embedding rows) sits in pinned host memory (llamacpp_cuda_buffers.h).
  const bool one_gpu_runs_all = gpus && run.placement.devices == 1 && !hold_layers.count("host");
  const LlamaCppBuffers split = one_gpu_runs_all ? llamacpp_cuda_buffers(model, ls, run.placement) : LlamaCppBuffers{};
  for (const auto& n : runs_layers) {
    const bool gpu_part = one_gpu_runs_all && n == "CUDA0";
    device(n).add({AllocKind::Compute, fmt::format("Compute buffer ({} tokens per ubatch, flash attention {})", std::min({ls.n_ubatch, ls.n_batch, ls.n_ctx}),
                                                   ls.flash_attn ? "on" : "off"),
                   gpu_part ? split.at("CUDA0").compute : m.compute_bytes,
                   gpu_part ? "the GPU part of the graph at its peak (ggml-alloc replay where the graph is transcribed, at the CUDA alignment of 128 B)"
                            : "the graph's peak at the worst-case ubatch (llamacpp_compute.h: masks + largest phase + inputs)",
                   "uncertain: a fitted model of ggml-alloc's peak (docs/accuracy.md); every device holding layers reserves its own", kComputeSource});
  }
  if (one_gpu_runs_all && split.count("CUDA_Host")) {
    device("host").add({AllocKind::Compute, "Pinned host compute buffer (CUDA_Host)", split.at("CUDA_Host").compute,
                        "every graph input (token ids, input embeddings, positions, cache row indices, KQ masks, output ids) and the token-embedding rows",
                        "the CPU backend's part of the graph; flash attention at a head width CUDA has no kernel for also runs there (not counted)",
                        "https://github.com/ggml-org/llama.cpp/blob/master/ggml/src/ggml-backend.cpp (ggml_backend_sched_backend_id_from_cur)"});
  }
  device("host").add({AllocKind::Output, "Output (logits) buffer", m.output_bytes, fmt::format("{} vocab x 4 B x {} sequence(s)", model.vocab, ls.n_seq),
                      "host memory; one row of f32 logits per sequence while generating", "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-context.cpp (output_reserve)"});
  // llama-server's prompt cache: evicted slots' KV state saved in host RAM, up to --cache-ram MiB
  // and at most --ctx-size tokens (a copy of the whole KV cache at most). A ceiling it fills on demand.
  if (run.llamacpp_cache_ram_mib != 0) {
    const uint64_t limit = run.llamacpp_cache_ram_mib < 0 ? UINT64_MAX : static_cast<uint64_t>(run.llamacpp_cache_ram_mib) << 20;
    device("host").add({AllocKind::Other, "Prompt cache (llama-server, host RAM)", std::min(limit, m.context_bytes()),
                        run.llamacpp_cache_ram_mib < 0 ? "no --cache-ram limit: up to --ctx-size tokens of KV state, a copy of the KV cache"
                                                       : fmt::format("min(--cache-ram {} MiB, --ctx-size tokens of KV state = the KV cache)", run.llamacpp_cache_ram_mib),
                        "fills as slots are reused for other prompts; --cache-ram 0 turns it off; llama-cli keeps none",
                        "https://github.com/ggml-org/llama.cpp/pull/16391 (server: host-memory prompt caching); common/common.h cache_ram_mib = 8192"});
  }
  for (const auto& n : order) {
    if (n == "host") continue;
    device(n).add({AllocKind::RuntimeReserve, "CUDA context and workspaces (llama.cpp's fit margin)", kFitMargin, "1,024 MiB per GPU",
                   "what llama.cpp does not count itself; its own --fit keeps this much free on every device. Measured beyond its breakdown "
                   "on an NVIDIA H200 (CUDA 13, driver 580) after a prompt and a few tokens: 0.59-0.72 GiB (CUDA context 527 MiB; cuBLAS "
                   "workspace, CUDA pool and graphs 78-98 MiB with flash attention, about 185 MiB without, up to 202 MiB for MoE)",
                   kFitSource});
  }
  for (const auto& n : order) a.devices.push_back(std::move(by_name[n]));
  if (p.synthesized) a.notes.push_back("weights placed from the catalogue's parameter counts at the tier's bytes per parameter; a GGUF gives exact tensors");
  finish(a);
  return a;
}

}  // namespace vc::engines
