#include "speed/token_reads.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_run.h"
#include "engines/tensor_pattern.h"
#include "speed/expert_balance.h"
#include "speed/speed_data.h"

namespace vc {
namespace {

// Per-token FLOPs of prefill in layer `l`: 2 per weight parameter read (dense weights, shared
// experts, k of n routed), plus attention's QK^T and AV over the tokens before this one.
double attention_flops(const LayerConfig& l, uint64_t depth, uint64_t prompt) {
  const AttentionSpec& a = l.attention;
  double seen = static_cast<double>(depth) + static_cast<double>(prompt) / 2.0;
  if (a.kind == AttentionKind::SlidingWindow && a.window) seen = std::min(seen, static_cast<double>(a.window));
  if (a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow) return 2.0 * a.query_heads * (a.head_dim_k + a.head_dim_v) * seen;
  if (a.kind == AttentionKind::Latent) return 4.0 * a.query_heads * (a.latent_rank + a.rope_dim) * seen;
  return 0;
}

uint64_t routed_read(const LayerFootprint& l, const std::optional<uint32_t>& k_override) {
  if (!l.experts || !l.routed) return 0;
  const uint64_t k = std::min<uint64_t>(k_override.value_or(l.experts_per_token), l.experts);
  return mul_div_round(l.routed, k, l.experts);
}

double params_share(const Model& m, const std::optional<uint32_t>& k_override) {
  // Active parameters with the override: the routed part scaled by k' / k.
  double active = static_cast<double>(m.params.active());
  auto it = m.params.active_by_class.find(ParamClass::RoutedExperts);
  if (k_override && it != m.params.active_by_class.end()) {
    for (const auto& l : m.layers) {
      if (l.feed_forward.kind != FeedForwardKind::MoE || !l.feed_forward.experts_per_token) continue;
      const double k = l.feed_forward.experts_per_token;
      active += static_cast<double>(it->second) * (std::min<double>(*k_override, l.feed_forward.experts) - k) / k;
      break;
    }
  }
  return active;
}

struct Builder {
  const Box& box;
  std::string backend;
  std::vector<MemoryRead> mems;
  std::map<std::string, std::size_t> index;

  MemoryRead& ram(uint32_t sockets, double socket_gain) {
    auto it = index.find("CPU");
    if (it != index.end()) return mems[it->second];
    MemoryRead r;
    r.name = sockets > 1 ? fmt::format("RAM ({} sockets)", sockets) : "RAM";
    r.backend = "cpu";
    r.memory = "ram";
    r.bandwidth = box.ram_bandwidth;
    if (sockets > 1) r.bandwidth = static_cast<uint64_t>(static_cast<double>(box.ram_bandwidth) * (1.0 + socket_gain * (sockets - 1)));
    // A unified-memory machine given no --ram-gbps: the CPU reads the same memory as its GPU.
    if (r.bandwidth == 0 && !box.gpus.empty() && box.gpus.front().memory_kind == "unified") r.bandwidth = box.gpus.front().bandwidth;
    index["CPU"] = mems.size();
    mems.push_back(r);
    return mems.back();
  }
  MemoryRead& gpu(uint64_t i) {
    const std::string key = fmt::format("CUDA{}", i);
    auto it = index.find(key);
    if (it != index.end()) return mems[it->second];
    const Device& d = box.gpus.at(i % box.gpus.size());
    MemoryRead r;
    r.name = box.gpus.size() > 1 ? fmt::format("{} #{}", d.name, i + 1) : d.name;
    r.backend = backend.empty() ? default_backend(d) : backend;
    r.memory = d.memory_kind;
    r.bandwidth = d.bandwidth;
    r.tflops = d.bf16_tflops;
    r.host_link = d.interconnect && d.memory_kind != "unified" ? std::min<uint64_t>(d.interconnect, 64'000'000'000) : 0;
    index[key] = mems.size();
    mems.push_back(r);
    return mems.back();
  }
};

uint64_t gpu_index(const std::string& buffer) { return std::stoull(buffer.substr(4)); }

// -ot patterns compiled once per placement; the buffer the first match names, else `fallback`.
using CompiledOverrides = std::vector<std::pair<TensorPattern, std::string>>;
std::string override_buffer(const std::string& name, const CompiledOverrides& overrides, const std::string& fallback) {
  for (const auto& [re, buft] : overrides) {
    if (re.found_in(name)) return buft;
  }
  return fallback;
}

TokenReads llamacpp_reads(const Model& model, const Footprint& f, const Box& box, const SpeedSettings& s, Builder& b, double socket_gain) {
  TokenReads t;
  LlamaCppPlacementSettings ps = s.llamacpp;
  if (box.gpus.empty()) ps.n_gpu_layers = 0;
  ps.devices = std::max<uint64_t>(1, box.gpus.size());
  if (!ps.tensor_split.empty() && ps.tensor_split.size() != ps.devices) throw InputError("-ts", fmt::format("needs one weight per GPU ({})", ps.devices));
  const LlamaCppPlacement p = llamacpp_placement(model, f.weights_total, ps);
  CompiledOverrides overrides;
  for (const auto& [re, buft] : ps.overrides) overrides.emplace_back(TensorPattern(re, "-ot"), buft);
  auto mem = [&](const std::string& buffer) -> MemoryRead& {
    if (buffer == "CPU" || box.gpus.empty()) return b.ram(s.sockets, socket_gain);
    const uint64_t i = gpu_index(buffer);
    if (i >= box.gpus.size()) throw InputError("-ot", fmt::format("{} names a GPU the box does not have ({} GPU{})", buffer, box.gpus.size(), box.gpus.size() == 1 ? "" : "s"));
    return b.gpu(i);
  };
  std::string last;
  const uint64_t n = f.layers.size();
  for (uint64_t il = 0; il < n; ++il) {
    const LayerFootprint& l = f.layers[il];
    const std::string dev = p.layer_device.at(il);
    const std::string prefix = fmt::format("blk.{}.", il);
    auto buffer_of = [&](ParamClass c) {
      const std::string name = prefix + llamacpp_tensor_names(c).front();
      if (moved_by_n_cpu_moe(ps, il, name)) return std::string("CPU");
      if (auto fit = fit_overflow_buffer(ps, il, name)) return *fit;  // llama.cpp's --fit moved it
      return override_buffer(name, overrides, dev);
    };
    const std::string attn_buf = buffer_of(ParamClass::Attention);
    MemoryRead& home = mem(attn_buf);
    home.layers += 1;
    home.cache_read = checked_add(home.cache_read, checked_add(l.cache(s.depth + 1, 1), l.state(1)));
    if (!last.empty() && (last == "CPU") != (attn_buf == "CPU")) ++t.handoffs;
    last = attn_buf;
    const std::pair<ParamClass, uint64_t> parts[] = {{ParamClass::Attention, l.attention}, {ParamClass::DenseMlp, l.dense}, {ParamClass::SharedExperts, l.shared},
                                                     {ParamClass::Router, l.other}, {ParamClass::RoutedExperts, l.routed}};
    for (const auto& [c, bytes] : parts) {
      if (!bytes) continue;
      const std::string buf = buffer_of(c);
      MemoryRead& m = mem(buf);
      m.weights_held = checked_add(m.weights_held, bytes);
      m.weights_read = checked_add(m.weights_read, c == ParamClass::RoutedExperts ? routed_read(l, s.experts_per_token) : bytes);
      if (c == ParamClass::RoutedExperts) m.moe_layers += 1;
      if ((buf == "CPU") != (last == "CPU")) ++t.handoffs, last = buf;
    }
  }
  // The output layer: the head (a tied head reads the embedding matrix); the input embedding is a
  // row lookup, held on the host and not read whole.
  MemoryRead& out = mem(p.output_device);
  const uint64_t head = model.tied_embeddings && f.output_head == 0 ? f.embedding : f.output_head;
  out.weights_read = checked_add(out.weights_read, head);
  out.weights_held = checked_add(out.weights_held, checked_add(f.output_head, f.last_extras));
  if (!last.empty() && (last == "CPU") != (p.output_device == "CPU")) ++t.handoffs;
  t.layers = static_cast<uint32_t>(n);
  const auto ram_at = b.index.find("CPU");
  if (s.paged_out && ram_at != b.index.end() && b.mems[ram_at->second].weights_held) {
    // The page cache keeps its share of the mapped weights and serves that share of every token's
    // reads (no hot-expert order assumed, though the kernel's LRU keeps the pages read most: one
    // public MoE run was faster than this, docs/plan.md); the rest comes from the SSD.
    MemoryRead& ram = b.mems[ram_at->second];
    MemoryRead disk;
    disk.name = "SSD (mmap page-ins)";
    disk.backend = "cpu";
    disk.memory = "ssd";
    disk.bandwidth = box.ssd_bandwidth;
    disk.weights_held = std::min(s.paged_out, ram.weights_held);
    disk.weights_read = mul_div_round(ram.weights_read, disk.weights_held, ram.weights_held);
    ram.weights_held -= disk.weights_held;
    ram.weights_read -= disk.weights_read;
    b.mems.push_back(disk);
  }
  std::string what;
  if (!box.gpus.empty()) {
    const uint64_t ngl = std::min<uint64_t>(ps.n_gpu_layers, n + 1);
    what = ngl > n ? "-ngl all" : fmt::format("-ngl {}", ngl);
    if (!ps.overrides.empty()) what += fmt::format(", {} -ot override{}", ps.overrides.size(), ps.overrides.size() == 1 ? "" : "s");
    if (!ps.fit_overflow.empty()) what += fmt::format(", --fit's overflow of {} layer{}", ps.fit_overflow.size(), ps.fit_overflow.size() == 1 ? "" : "s");
  } else {
    what = "CPU only";
  }
  if (s.paged_out) what += fmt::format("; {} of the mapped weights read from the SSD again every token (more than RAM holds)", format_bytes(s.paged_out));
  t.placement = what;
  return t;
}

}  // namespace

std::string default_backend(const Device& d) {
  if (d.vendor == "nvidia") return "cuda";
  if (d.vendor == "amd") return "rocm";
  if (d.vendor == "apple") return "metal";
  return "vulkan";
}

TokenReads token_reads(const Model& model, const Footprint& f, const Box& box, const SpeedSettings& s) {
  const SpeedData& data = SpeedData::builtin();
  if (s.sockets == 0 || s.sockets > 8) throw InputError("--sockets", "must be 1 to 8");
  if (s.tensor_parallel == 0 || s.tensor_parallel > 64) throw InputError("--tensor-parallel-size", "must be 1 to 64");
  if (s.experts_per_token && *s.experts_per_token == 0) throw InputError("--experts-per-token", "must be at least 1");
  if (s.ubatch == 0) throw InputError("-ub", "must be at least 1");
  if (s.threads && (*s.threads == 0 || *s.threads > kMaxCpuThreads)) throw InputError("--threads", "must be 1 to 4096");
  if (!s.backend.empty() && s.backend != "cuda" && s.backend != "rocm" && s.backend != "vulkan" && s.backend != "metal" && s.backend != "cpu")
    throw InputError("--backend", "'" + s.backend + "': accepted: cuda, rocm, vulkan, metal, cpu");
  const std::string family = speed_engine_family(s.engine);
  Builder b{box, s.backend, {}, {}};
  b.mems.reserve(box.gpus.size() + 3);  // references into it stay valid while it grows
  TokenReads t;
  if (family == "llamacpp" || box.gpus.empty()) {
    t = llamacpp_reads(model, f, box, s, b, data.second_socket_gain);
  } else if (family == "ktransformers") {
    MemoryRead& g = b.gpu(0);
    MemoryRead& r = b.ram(s.sockets, data.second_socket_gain);
    for (const auto& l : f.layers) {
      g.layers += 1;
      g.cache_read = checked_add(g.cache_read, checked_add(l.cache(s.depth + 1, 1), l.state(1)));
      const uint64_t fixed = checked_add(checked_add(l.attention, l.dense), checked_add(l.shared, l.other));
      g.weights_read = checked_add(g.weights_read, fixed);
      g.weights_held = checked_add(g.weights_held, fixed);
      if (!l.experts) continue;
      const uint64_t on_gpu = std::min<uint64_t>(s.gpu_experts, l.experts);
      const uint64_t read = routed_read(l, s.experts_per_token);
      g.weights_read = checked_add(g.weights_read, mul_div_round(read, on_gpu, l.experts));
      r.weights_read = checked_add(r.weights_read, read - mul_div_round(read, on_gpu, l.experts));
      r.weights_held = checked_add(r.weights_held, l.routed - mul_div_round(l.routed, on_gpu, l.experts));
      r.moe_layers += 1;
      t.handoffs += 2;
    }
    g.weights_read = checked_add(g.weights_read, model.tied_embeddings && f.output_head == 0 ? f.embedding : f.output_head);
    t.layers = static_cast<uint32_t>(f.layers.size());
    t.placement = fmt::format("attention, shared experts and cache on the GPU; routed experts in RAM{}", s.gpu_experts ? fmt::format(" but {} per layer", s.gpu_experts) : "");
  } else {  // vllm / sglang: tensor parallel over the box's GPUs
    const uint32_t tp = s.tensor_parallel;
    if (tp > box.device_count()) throw InputError("--tensor-parallel-size", fmt::format("{} is more than the box's {} GPUs", tp, box.device_count()));
    const uint32_t ep = s.expert_parallel;
    if (ep == 0 || ep > box.device_count()) throw InputError("--expert-parallel-size", fmt::format("must be 1 to the box's {} GPUs", box.device_count()));
    MemoryRead& g = b.gpu(0);
    // Attention, dense layers, shared experts and the head over the TP group; the routed experts
    // over the EP group, where the busiest rank's share of a token's k experts sets the layer's time
    // (speed/expert_balance.h), or a TP slice of each without expert parallelism.
    uint64_t weights = 0, held = 0, cache = 0, routed = 0, routed_held = 0;
    double busiest = 0;
    for (const auto& l : f.layers) {
      weights = checked_add(weights, checked_add(checked_add(l.attention, l.dense), checked_add(l.shared, l.other)));
      held = checked_add(held, l.weights() - l.routed);
      routed_held = checked_add(routed_held, l.routed);
      if (ep > 1 && l.experts && l.routed) {
        const uint64_t k = std::min<uint64_t>(s.experts_per_token.value_or(l.experts_per_token), l.experts);
        const double share = expected_busiest_rank_experts(l.experts, k, ep);
        busiest = std::max(busiest, share);
        routed = checked_add(routed, static_cast<uint64_t>(share * static_cast<double>(l.routed) / static_cast<double>(l.experts)));
      } else {
        routed = checked_add(routed, routed_read(l, s.experts_per_token) / tp);
      }
      cache = checked_add(cache, checked_add(l.cache(s.depth + 1, 1), l.state(1)));
      if (l.experts) g.moe_layers += 1;
    }
    weights = checked_add(weights, model.tied_embeddings && f.output_head == 0 ? f.embedding : f.output_head);
    g.weights_read = checked_add(weights / tp, routed);
    g.weights_held = checked_add(held / tp, routed_held / (ep > 1 ? ep : tp));
    g.cache_read = cache / tp;
    g.layers = static_cast<uint32_t>(f.layers.size());
    t.tensor_parallel = std::max(tp, ep);  // a collective per layer either way
    t.layers = g.layers;
    t.placement = tp > 1 ? fmt::format("tensor parallel over {} GPUs: each reads 1/{} of every layer", tp, tp) : "one GPU";
    if (ep > 1) {
      t.placement = fmt::format("{}; routed experts over {} GPUs (expert parallel): at each MoE layer the busiest holds {:.2f} of a token's experts on "
                                "average (uniform routing; no measured run with expert parallelism is in the range)",
                                tp > 1 ? fmt::format("attention and dense weights tensor parallel over {} GPUs", tp) : "attention and dense weights whole on the sequence's GPU",
                                ep, busiest);
    }
    if (s.host_offloaded) {
      // --cpu-offload-gb: the offloaded parameters cross the host link at every forward pass.
      const uint64_t off = std::min(s.host_offloaded, g.weights_held);
      MemoryRead link;
      link.name = g.name + " host link";
      link.backend = g.backend;
      link.memory = "host_link";
      link.bandwidth = g.host_link;
      link.weights_read = off;
      link.host_link = g.host_link;
      g.weights_held -= off;
      const bool uva = s.engine != "sglang" && !s.host_offload_copied;  // vLLM's UVA reads in place; SGLang and vLLM's prefetch copy to the GPU first
      if (uva) g.weights_read -= std::min(g.weights_read, off);  // UVA: read in place, not from the GPU's memory
      b.mems.push_back(link);
      t.placement += fmt::format("; {} of each rank's weights in pinned host memory, read over its host link every forward pass (--cpu-offload-gb or vLLM's prefetch offloader){}",
                                 format_bytes(off), uva ? " in place (UVA)" : ", copied to the GPU and read there too");
    }
  }
  t.engine = family;
  t.memories = std::move(b.mems);
  t.ubatch = s.ubatch;
  t.threads = s.threads;
  // Prefill work per prompt token, placed with the layers' compute.
  const double dense_flops = 2.0 * params_share(model, s.experts_per_token);
  double attn = 0;
  for (const auto& l : model.layers) attn += attention_flops(l, s.depth, s.prompt);
  const double total_flops = dense_flops + attn;
  uint64_t held_ram = 0, layers_all = 0;
  for (const auto& m : t.memories) layers_all += m.layers, held_ram += m.is_gpu() ? 0 : m.weights_held;
  const bool any_gpu = std::any_of(t.memories.begin(), t.memories.end(), [](const MemoryRead& m) { return m.is_gpu(); });
  t.offload = any_gpu && (held_ram > 0 || s.host_offloaded > 0);  // --cpu-offload-gb reads weights from host memory too
  if (!any_gpu) {
    for (auto& m : t.memories) m.prefill_flops = m.memory == "ssd" ? 0 : total_flops;  // page-ins are read, not computed apart
  } else if (t.engine == "ktransformers") {
    // The CPU computes the routed experts it holds; the GPU the rest.
    double routed_share = 0;
    auto it = model.params.active_by_class.find(ParamClass::RoutedExperts);
    if (it != model.params.active_by_class.end() && model.params.active()) routed_share = static_cast<double>(it->second) / static_cast<double>(model.params.active());
    for (auto& m : t.memories) m.prefill_flops = m.is_gpu() ? total_flops - dense_flops * routed_share : dense_flops * routed_share;
  } else {
    // llama.cpp runs large batches on the GPU even for layers held in RAM (the weights are copied
    // over PCIe once per ubatch): GPUs share the work by the layers they hold; the first GPU takes
    // the layers held by the CPU.
    for (auto& m : t.memories) {
      if (!m.is_gpu()) continue;
      m.prefill_flops = layers_all ? total_flops * m.layers / static_cast<double>(layers_all) : 0;
    }
    for (const auto& m : t.memories) {
      if (m.is_gpu() || !m.layers) continue;
      for (auto& g : t.memories) {
        if (g.is_gpu()) {
          g.prefill_flops += layers_all ? total_flops * m.layers / static_cast<double>(layers_all) : 0;
          break;
        }
      }
    }
  }
  return t;
}

}  // namespace vc
