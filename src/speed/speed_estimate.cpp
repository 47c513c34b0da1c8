#include "speed/speed_estimate.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"

namespace vc {
namespace {

std::string gbps(uint64_t b) { return format_grouped(static_cast<double>(b) / 1e9, 0); }

// Whether llama.cpp's CPU is costed from the run's threads (speed/speed_data.h): the data carries
// the rates and the run says how many threads.
bool threaded_cpu(const TokenReads& t, const MemoryRead& m, const SpeedData& data) {
  return !m.is_gpu() && t.threads && t.engine == "llamacpp" && data.cpu_thread_gbps > 0;
}

// What the given thread count does to the CPU's decode cost.
std::string cpu_threads_note(const TokenReads& t, const SpeedData& data) {
  const bool cpu = std::any_of(t.memories.begin(), t.memories.end(), [](const MemoryRead& m) { return !m.is_gpu() && (m.layers || m.moe_layers); });
  if (!t.threads || !cpu) return "";
  if (t.engine == "llamacpp" && data.cpu_thread_gbps > 0)
    return fmt::format("; {} CPU threads: the CPU's weights take the longer of their RAM read and {:.2f} GB/s a thread, and each layer and MoE layer on it {:.1f} us",
                       *t.threads, data.cpu_thread_gbps, data.cpu_threaded_layer_us);
  return fmt::format("; {} CPU threads: the CPU's cost per layer is one fitted figure whatever the threads", *t.threads);
}

void finish(SpeedEstimate& e, const SpeedRange& r) {
  e.tok_s = e.seconds > 0 ? 1.0 / e.seconds : 0;
  e.low = e.tok_s * r.low;
  e.high = e.tok_s * r.high;
}

}  // namespace

SpeedEstimate decode_speed(const TokenReads& t, const SpeedData& data) {
  SpeedEstimate e;
  e.offload = t.offload;
  std::string terms;
  bool unknown = false;
  for (const auto& m : t.memories) {
    const uint64_t read = m.weights_read + m.cache_read;
    if (!read && !m.layers && !m.moe_layers) continue;
    const DecodeFactor& f = data.decode_for(t.engine, m.backend, m.memory);
    if (read && m.bandwidth == 0) {
      unknown = true;
      continue;
    }
    // A GPU's host link (--cpu-offload-gb) moves at the achieved PCIe share, as prefill's copies do;
    // page-ins from the SSD at the rate the user gives (no measured share to apply).
    const double share = m.memory == "host_link" ? data.pcie_share : m.memory == "ssd" ? 1.0 : f.bandwidth_share;
    const double move = read ? static_cast<double>(read) / (static_cast<double>(m.bandwidth) * share) : 0;
    const double scale = data.layer_cost_scale(m.is_gpu(), m.tflops);
    if (threaded_cpu(t, m, data)) {
      // The threads' dequantise-and-dot rate can be slower than the RAM (two laptop cores are);
      // every layer and MoE layer pays its barriers and small ops (speed/speed_data.h).
      const double compute = static_cast<double>(m.weights_read) / (*t.threads * data.cpu_thread_gbps * 1e9);
      const double fixed = (m.layers + m.moe_layers) * data.cpu_threaded_layer_us * 1e-6;
      e.seconds += std::max(move, compute) + fixed;
      terms += fmt::format("{}{}: max({} / ({} GB/s x {:.2f}), {} / ({} threads x {:.2f} GB/s)) + {} layers{} x {:.1f} us = {:.2f} ms", terms.empty() ? "" : "; ", m.name,
                           format_bytes(read), gbps(m.bandwidth), f.bandwidth_share, format_bytes(m.weights_read), *t.threads, data.cpu_thread_gbps, m.layers,
                           m.moe_layers ? fmt::format(" + {} MoE layers", m.moe_layers) : "", data.cpu_threaded_layer_us, (std::max(move, compute) + fixed) * 1e3);
      continue;
    }
    const double layer_us = f.layer_us * scale, moe_layer_us = f.moe_layer_us * scale;
    const double fixed = (m.layers * layer_us + m.moe_layers * moe_layer_us) * 1e-6;
    e.seconds += move + fixed;
    terms += fmt::format("{}{}: {} / ({} GB/s x {:.2f}) + {} layers x {:.1f} us{} = {:.2f} ms", terms.empty() ? "" : "; ", m.name, format_bytes(read), gbps(m.bandwidth),
                         share, m.layers, layer_us, m.moe_layers ? fmt::format(" + {} MoE layers x {:.1f} us", m.moe_layers, moe_layer_us) : "",
                         (move + fixed) * 1e3);
  }
  if (t.handoffs) {
    e.seconds += t.handoffs * data.handoff_us * 1e-6;
    terms += fmt::format("; {} GPU-CPU hand-offs x {:.0f} us", t.handoffs, data.handoff_us);
  }
  if (t.tensor_parallel > 1) {
    e.seconds += t.layers * data.tp_allreduce_us * 1e-6;
    terms += fmt::format("; {} layers x {:.0f} us all-reduce (TP {})", t.layers, data.tp_allreduce_us, t.tensor_parallel);
  }
  if (unknown) e.seconds = 0;
  finish(e, t.offload ? data.decode_offload : data.decode_on_device);
  e.formula = unknown ? "unknown: a memory that is read has no known bandwidth; name the GPU with --gpu, give --ram-gbps, or --ssd-gbps for weights paged from disk"
                      : fmt::format("s/token = {} = {:.2f} ms -> {:.2f} tok/s", terms, e.seconds * 1e3, e.tok_s);
  e.assumption = fmt::format("{}; one sequence; {} reads its cache to the current depth; the fixed costs and shares are {}'s on each backend and memory{}{}",
                             t.placement, t.layers ? "every layer" : "the model", t.engine, cpu_threads_note(t, data),
                             data.layer_reference_tflops > 0 && data.layer_compute_share > 0
                                 ? fmt::format(", a GPU's cost per layer scaled by {:.0f}% x {:.1f} TFLOPS / its dense BF16 TFLOPS + {:.0f}%", data.layer_compute_share * 100,
                                               data.layer_reference_tflops, (1 - data.layer_compute_share) * 100)
                                 : "");
  e.source = data.source;
  return e;
}

SpeedEstimate prefill_speed(const TokenReads& t, const SpeedData& data) {
  SpeedEstimate e;
  e.offload = t.offload;
  std::string terms;
  bool unknown = false;
  uint64_t ram_held = 0, link = 0;
  for (const auto& m : t.memories) {
    if (!m.is_gpu()) ram_held += m.weights_held;
    else if (!link) link = m.host_link;
    if (m.prefill_flops <= 0) continue;
    double rate = 0;
    if (m.is_gpu()) rate = m.tflops * 1e12 * data.prefill_for(t.engine, m.backend, m.memory).compute_share;
    else if (t.threads && data.cpu_prefill_gflops_per_thread > 0) rate = *t.threads * data.cpu_prefill_gflops_per_thread * 1e9;
    else rate = static_cast<double>(m.bandwidth) * data.cpu_flops_per_ram_byte;
    if (rate <= 0) {
      unknown = true;
      continue;
    }
    e.seconds += m.prefill_flops / rate;
    terms += fmt::format("{}{}: {:.3g} GFLOP / {:.3g} TFLOP/s", terms.empty() ? "" : "; ", m.name, m.prefill_flops / 1e9, rate / 1e12);
  }
  // llama.cpp copies the RAM-held weights of a layer to the GPU for each ubatch it computes there.
  const bool copies = t.engine == "llamacpp" && t.offload && ram_held > 0;
  if (copies) {
    if (!link) unknown = true;
    else {
      const double s = static_cast<double>(ram_held) / (static_cast<double>(link) * data.pcie_share) / static_cast<double>(t.ubatch);
      e.seconds += s;
      terms += fmt::format("; {} in RAM over PCIe ({} GB/s x {:.2f}) once per {}-token ubatch", format_bytes(ram_held), gbps(link), data.pcie_share, t.ubatch);
    }
  }
  // vLLM/SGLang --cpu-offload-gb: the offloaded weights cross the host link at every forward pass,
  // and a prefill pass computes `ubatch` prompt tokens (the prompt, up to the chunk).
  uint64_t host_read = 0;
  for (const auto& m : t.memories) {
    if (m.memory == "host_link") host_read += m.weights_read, link = m.host_link;
  }
  const bool crosses = host_read > 0 && !copies;
  if (crosses) {
    if (!link) unknown = true;
    else {
      e.seconds += static_cast<double>(host_read) / (static_cast<double>(link) * data.pcie_share) / static_cast<double>(t.ubatch);
      terms += fmt::format("; {} in pinned host memory over the host link ({} GB/s x {:.2f}) once per {}-token forward pass", format_bytes(host_read),
                           gbps(link), data.pcie_share, t.ubatch);
    }
  }
  // llama.cpp on a host short of RAM: every ubatch reads the mapped weights the page cache cannot
  // keep from the SSD again.
  bool pages_in = false;
  for (const auto& m : t.memories) {
    if (m.memory != "ssd" || !m.weights_held) continue;
    pages_in = true;
    if (!m.bandwidth) {
      unknown = true;
      continue;
    }
    e.seconds += static_cast<double>(m.weights_held) / static_cast<double>(m.bandwidth) / static_cast<double>(t.ubatch);
    terms += fmt::format("; {} paged in from the SSD ({} GB/s) once per {}-token ubatch", format_bytes(m.weights_held), gbps(m.bandwidth), t.ubatch);
  }
  if (unknown) e.seconds = 0;
  finish(e, data.prefill_range);
  e.formula = unknown ? "unknown: a device that computes has no known compute rate or host link, or weights paged from disk have no --ssd-gbps"
                      : fmt::format("s/token = {} = {:.3f} ms -> {:.0f} tok/s", terms, e.seconds * 1e3, e.tok_s);
  const bool cpu_computes = std::any_of(t.memories.begin(), t.memories.end(), [](const MemoryRead& m) { return !m.is_gpu() && m.prefill_flops > 0; });
  e.assumption = "long prompt, batched; 2 FLOPs per active parameter plus attention over the context" +
                 std::string(copies ? "; weights held in RAM are copied to the GPU once per ubatch" : "") +
                 std::string(pages_in ? "; mapped weights RAM cannot keep are read from the SSD again for every ubatch" : "") +
                 std::string(crosses ? "; weights offloaded to host memory (--cpu-offload-gb) cross the host link once per forward pass" : "") +
                 (!cpu_computes ? std::string()
                  : t.threads && data.cpu_prefill_gflops_per_thread > 0
                      ? fmt::format("; the CPU computes at {:.1f} GFLOP/s a thread x {} threads", data.cpu_prefill_gflops_per_thread, *t.threads)
                      : fmt::format("; the CPU computes at {:.2f} FLOP per byte/s of RAM bandwidth{}", data.cpu_flops_per_ram_byte,
                                    data.cpu_prefill_gflops_per_thread > 0 ? " (give --threads for its rate per thread)" : ""));
  e.source = data.source;
  return e;
}

std::string speed_text(const SpeedEstimate& e, int decimals) {
  if (e.tok_s <= 0) return "unknown";
  return fmt::format("{:.{}f} tok/s (estimate, likely {:.{}f}-{:.{}f})", e.tok_s, decimals, e.low, decimals, e.high, decimals);
}

}  // namespace vc
