#include "engines/llamacpp_cuda_buffers.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "core/checked.h"
#include "engines/ggml_alloc_replay.h"
#include "engines/ggml_cuda_support.h"
#include "engines/ggml_sched_replay.h"
#include "engines/llamacpp_compute.h"
#include "engines/llamacpp_graph.h"
#include "engines/llamacpp_placement.h"
#include "engines/llamacpp_profile.h"
#include "model/quant.h"

namespace vc {
namespace {

// ggml-cuda.cu: the CUDA buffer type aligns every tensor to 128 B
// (ggml_backend_cuda_buffer_type_get_alignment) and pads the last row of a quantized matrix to a
// multiple of MATRIX_ROW_PADDING = 512 values (ggml_backend_cuda_buffer_type_get_alloc_size,
// TAG_ALLOC_SIZE_EXPAND), so that its kernels may read past the row end.
constexpr uint64_t kCudaAlignment = 128;
constexpr uint64_t kMatrixRowPadding = 512;
// The CPU backend's buffers (CUDA_Host here) align tensors to 32 B (TENSOR_ALIGNMENT).
constexpr uint64_t kCpuAlignment = 32;
// GGUF lays tensor data out in the order of its tensor list, each on general.alignment (32 by default).
constexpr uint64_t kGgufAlignment = 32;

uint64_t pad(uint64_t bytes, uint64_t to) { return checked_mul(ceil_div(bytes, to), to); }

// What one weight takes in a CUDA buffer: its bytes, one partial row of padding for a quantized
// matrix whose rows are not a multiple of 512 values, rounded up to the alignment.
uint64_t cuda_tensor_bytes(const NamedTensor& t) {
  uint64_t size = t.bytes;
  const QuantFormat* f = t.type.empty() ? nullptr : QuantTable::builtin().find_type(t.type);
  if (f && f->block_elems > 1 && !t.ne.empty() && t.ne[0] % kMatrixRowPadding != 0) {
    size = checked_add(size, f->row_bytes(kMatrixRowPadding - t.ne[0] % kMatrixRowPadding));
  }
  return pad(size, kCudaAlignment);
}

// A quantized cache tensor on the GPU is padded like a quantized weight: one layer's K (and V)
// cache is one tensor [row, cells, streams] whose rows are not a multiple of 512 values, so it
// gets ggml_row_size(type, 512 - row % 512) more, to 128 B (llama-kv-cache.cpp allocates its
// tensors in the layer's buffer type; its cell counts keep the rest aligned).
uint64_t cuda_cache_padding(const AttentionSpec& a, const LlamaCppSettings& s) {
  auto padding = [](const std::string& type, uint64_t row) -> uint64_t {
    const QuantFormat* f = QuantTable::builtin().find_type(type);
    if (!f || f->block_elems <= 1 || row == 0 || row % kMatrixRowPadding == 0) return 0;
    return pad(f->row_bytes(kMatrixRowPadding - row % kMatrixRowPadding), kCudaAlignment);
  };
  switch (a.kind) {
    case AttentionKind::Full:
    case AttentionKind::SlidingWindow:
      return checked_add(padding(s.type_k, uint64_t{a.kv_heads} * a.head_dim_k), padding(s.type_v, uint64_t{a.kv_heads} * a.head_dim_v));
    case AttentionKind::Latent: return padding(s.type_k, uint64_t{a.latent_rank} + a.rope_dim);  // K only: V is a view of it
    default: return 0;
  }
}

// Whether llama.cpp's loader keeps Model::tensors[i] in host memory although its layer is offloaded,
// because ggml-cuda does not support the op it is read by (engines/ggml_cuda_support.h). A Mamba-2
// layer's d_inner is its ssm_out's row width, d_state its state per d_inner channel.
bool cuda_keeps_on_host(const Model& model, std::size_t i) {
  const NamedTensor& t = model.tensors[i];
  const bool conv = t.name.ends_with(".ssm_conv1d.weight"), scan = t.name.ends_with(".ssm_a");
  if ((!conv && !scan) || t.name.rfind("blk.", 0) != 0) return false;
  const std::size_t dot = t.name.find('.', 4);
  std::size_t il = 0;
  if (dot == std::string::npos || std::from_chars(t.name.data() + 4, t.name.data() + dot, il).ec != std::errc()) return false;
  uint64_t d_inner = 0, d_state = 0;
  const std::string out = t.name.substr(0, dot) + ".ssm_out.weight";
  for (const NamedTensor& o : model.tensors)
    if (o.name == out && !o.ne.empty()) d_inner = o.ne[0];
  if (d_inner && il < model.layers.size() && model.layers[il].attention.state_values % d_inner == 0)
    d_state = model.layers[il].attention.state_values / d_inner;
  return cuda_rejects_weight(model.architecture, t.name, t.ne, d_state, d_inner);
}

// The Gated DeltaNet graphs (qwen3next, kimi-linear) carry llama.cpp's fused GATED_DELTA_NET op,
// which llama_context::resolve_fused_ops keeps only where the scheduler runs it on its layer's
// device. With a layer on the host, the op's offloaded neighbours take it to the GPU, the check
// fails and llama.cpp reserves the chunked decomposition instead (delta-net-base.cpp
// build_delta_net_chunking), which is not transcribed: those placements keep the older rule.
bool fused_delta_net_holds(const Model& model, const LlamaCppPlacement& p) {
  if (model.architecture != "qwen3next" && model.architecture != "kimi-linear") return true;
  for (std::size_t il = 0; il < model.layers.size() && il < p.layer_device.size(); ++il) {
    if (model.layers[il].attention.kind == AttentionKind::LinearState && p.layer_device[il] == "CPU") return false;
  }
  return true;
}

// Whether ggml-cuda has a flash-attention kernel for every attention layer's head width (MLA: not
// claimed). Where it has none the scheduler runs the op on the CPU backend.
bool cuda_runs_flash_attention(const Model& model, const LlamaCppSettings& s) {
  for (const auto& l : model.layers) {
    const AttentionSpec& a = l.attention;
    if (a.kind == AttentionKind::LinearState || a.kind == AttentionKind::None) continue;
    if (a.kind == AttentionKind::Latent || !cuda_has_flash_attn_kernel(a.head_dim_k, a.head_dim_v, s.type_k, s.type_v)) return false;
  }
  return true;
}

// The reserved ubatch, as llamacpp_compute counts it (llama_context::sched_reserve,
// graph_reserve), with the cache types.
LlamaCppGraphInput reserved_graph(const Model& model, const LlamaCppSettings& s, const LlamaCppMemory& m) {
  const QuantFormat* tk = QuantTable::builtin().find_type(s.type_k);
  const QuantFormat* tv = QuantTable::builtin().find_type(s.type_v);
  bool window = false;
  for (const auto& l : model.layers) window |= l.attention.kind == AttentionKind::SlidingWindow;
  const LlamaCppComputeInput ci{s.n_ctx, m.n_ctx, s.n_seq, s.n_batch, s.n_ubatch, s.flash_attn, s.kv_unified, m.kv_cells, window ? m.swa_cells : 0,
                                tk && tk->block_elems > 1, tv && tv->block_elems > 1};
  LlamaCppGraphInput in = llamacpp_graph_input(model, ci);
  in.type_k = s.type_k;
  in.type_v = s.type_v;
  return in;
}

// The CPU backend's part of the graph when every layer is on the GPU. ggml_backend_sched assigns
// every graph input (ggml_set_input: token ids, input embeddings, positions, cache row indices,
// KQ masks, output ids, state copies) to the CPU backend, whose compute buffer a CUDA build takes
// from the pinned CUDA_Host buffer type, and the token embedding's GET_ROWS runs there too: its
// weight stays on the host and ggml-cuda's offload_op never takes GET_ROWS
// (ggml-backend.cpp ggml_backend_sched_backend_id_from_cur; llama-graph.cpp build_inp_embd keeps
// both the token and the embedding input in the graph). None of them is freed before the GPU part
// has copied it, so the buffer is their sum, each at the CPU alignment of 32 B.
uint64_t host_inputs(const Model& model, const LlamaCppGraphInput& g) {
  const uint64_t T = g.tokens;
  uint64_t sum = 0;
  auto input = [&](uint64_t bytes) { sum = checked_add(sum, pad(bytes, kCpuAlignment)); };
  input(T * 4);                                    // inp_tokens
  input(checked_product({T, model.hidden, 4}));    // inp_embd
  input(checked_product({T, model.hidden, 4}));    // GET_ROWS of token_embd
  bool attention = false, recurrent = false;
  const AttentionSpec* full_spec = nullptr;
  const AttentionSpec* window_spec = nullptr;
  for (const auto& l : model.layers) {
    const AttentionSpec& a = l.attention;
    if (a.kind == AttentionKind::Full && !full_spec) full_spec = &a;
    if (a.kind == AttentionKind::SlidingWindow && !window_spec) window_spec = &a;
    attention |= a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow;
    recurrent |= a.kind == AttentionKind::LinearState;
  }
  if (attention) input(T * 4);  // inp_pos
  for (const AttentionSpec* a : {full_spec, window_spec}) {
    if (!a) continue;
    const uint64_t cells = a == window_spec ? g.swa_cells : g.kv_cells;
    input(T * 8);  // k_idxs
    // v_idxs: one row per token, or one per value when V is stored transposed (flash attention off)
    input(g.flash_attn ? T * 8 : checked_product({T, uint64_t{a->kv_heads}, a->head_dim_v, 8}));
    input(checked_product({cells, T, g.flash_attn ? 2u : 4u}));  // KQ mask: f16 with flash attention, f32 without
  }
  if (recurrent) input(g.seqs * 4);  // s_copy
  input(g.outputs * 4);              // inp_out_ids
  return sum;
}

// The GPU part of a fully offloaded graph: what the CPU part holds (token ids, the input
// embeddings) is not here, and the token embedding rows arrive as a copy made at the start of the
// GPU split, like the other inputs (ggml_backend_sched_split_graph: split inputs). llamacpp_graph's
// builders start with the token ids and the input embeddings (Builder::token_inputs), and the
// embedding rows are the first node reading the token ids.
GgmlGraph gpu_part(GgmlGraph g) {
  if (g.tensors.size() < 2) return g;
  g.tensors[0].elsewhere = true;
  g.tensors[1].elsewhere = true;
  for (auto& t : g.tensors) {
    if (!t.leaf && t.parents == std::vector<int>{0}) {
      t.leaf = true;
      t.parents.clear();
      t.same_layout.clear();
      break;
    }
  }
  return g;
}

}  // namespace



LlamaCppBuffers llamacpp_cuda_buffers(const Model& model, const LlamaCppSettings& settings, const LlamaCppPlacementSettings& placement) {
  uint64_t weights = 0;
  for (const auto& t : model.tensors) weights = checked_add(weights, t.bytes);
  const LlamaCppPlacement p = llamacpp_placement(model, weights, placement);
  const LlamaCppMemory m = llamacpp_memory(model, settings);
  LlamaCppBuffers out;
  for (const auto& [buffer, bytes] : p.weights_by_buffer) {
    if (buffer != "CPU") out[buffer].model = bytes;
  }
  std::vector<bool> on_host(model.tensors.size(), false);
  for (const HostTensor& h : p.host_tensors) {
    if (h.gguf_index) on_host[*h.gguf_index] = true;
  }
  for (std::size_t i = 0; i < model.tensors.size(); ++i) on_host[i] = on_host[i] || cuda_keeps_on_host(model, i);
  if (!model.tensors.empty()) {
    // Weights on the GPU, each at its CUDA allocation size (one GPU: every offloaded tensor on CUDA0).
    uint64_t gpu = 0, offset = 0, first = UINT64_MAX, last = 0;
    for (std::size_t i = 0; i < model.tensors.size(); ++i) {
      const NamedTensor& t = model.tensors[i];
      // llama_model_loader::get_mapping_range: with mmap the host weights are one buffer over the
      // file from the first to the end of the last tensor left on the host, GPU tensors between
      // them included.
      if (on_host[i]) {
        first = std::min(first, offset);
        last = std::max(last, checked_add(offset, t.bytes));
      } else {
        gpu = checked_add(gpu, cuda_tensor_bytes(t));
      }
      offset = checked_add(offset, pad(t.bytes, kGgufAlignment));
    }
    // Tied embeddings: the output layer's copy of token_embd (in weights_by_buffer, not a GGUF tensor).
    for (const auto& t : model.tensors) {
      if (t.name == "token_embd.weight" && p.output_device != "CPU" &&
          std::none_of(model.tensors.begin(), model.tensors.end(), [](const NamedTensor& o) { return o.name == "output.weight"; })) {
        gpu = checked_add(gpu, cuda_tensor_bytes(t));
      }
    }
    if (gpu) out["CUDA0"].model = gpu;
    if (last > first) out["CPU_Mapped"].model = last - first;
  } else if (p.weights_by_buffer.count("CPU")) {
    out["CPU_Mapped"].model = p.weights_by_buffer.at("CPU");
  }
  for (std::size_t il = 0; il < p.layer_device.size() && il < m.layer_kv_bytes.size(); ++il) {
    LlamaCppBufferBytes& b = out[p.layer_device[il]];
    b.context = checked_add(b.context, checked_add(m.layer_kv_bytes[il], m.layer_state_bytes[il]));
    if (p.layer_device[il] != "CPU" && m.layer_kv_bytes[il]) b.context = checked_add(b.context, cuda_cache_padding(model.layers[il].attention, settings));
  }
  // Where the graph carries what the scheduler reads, replay ggml_backend_sched over it: which
  // device runs each op, what is copied between them, and each device's packing.
  const LlamaCppGraphInput reserve = reserved_graph(model, settings, m);
  if (!model.tensors.empty()) {
    if (auto graph = llamacpp_graph(model, reserve); graph && graph->scheduled && fused_delta_net_holds(model, p)) {
      const auto output_backend = p.output_device == "CPU" ? kSchedCpu : kSchedGpu;
      auto tensor = [&](int w) -> const NamedTensor& {
        if (w == kTiedOutputWeight) {
          for (const auto& t : model.tensors)
            if (t.name == "token_embd.weight") return t;
        }
        return model.tensors.at(static_cast<size_t>(w));
      };
      SchedDevices d;
      d.weight_backend = [&](int w) {
        if (w == kTiedOutputWeight) return output_backend;
        return on_host[static_cast<size_t>(w)] ? kSchedCpu : kSchedGpu;
      };
      d.cache_backend = [&](int layer) { return p.layer_device.at(static_cast<size_t>(layer)) == "CPU" ? kSchedCpu : kSchedGpu; };
      d.weight_gpu_bytes = [&](int w) { return cuda_tensor_bytes(tensor(w)); };
      d.weight_cpu_bytes = [&](int w) { return tensor(w).bytes; };
      const SchedPeaks peaks = ggml_sched_peaks(*graph, d, kCudaAlignment, kCpuAlignment);
      if (peaks.gpu) out["CUDA0"].compute = peaks.gpu;
      if (peaks.cpu) out["CUDA_Host"].compute = peaks.cpu;
      return out;
    }
  }
  // Every device that runs layers reserves the compute buffer.
  bool host_runs = p.output_device == "CPU";
  bool gpu_runs = p.output_device != "CPU";
  for (const auto& d : p.layer_device) (d == "CPU" ? host_runs : gpu_runs) = true;
  if (gpu_runs) out["CUDA0"].compute = m.compute_bytes;
  if (host_runs) out["CUDA_Host"].compute = m.compute_bytes;
  if (gpu_runs && !host_runs) {
    out["CUDA_Host"].compute = host_inputs(model, reserve);
    if (!settings.flash_attn || cuda_runs_flash_attention(model, settings)) {
      if (auto graph = llamacpp_graph(model, reserve)) out["CUDA0"].compute = ggml_alloc_peak(gpu_part(*graph), kCudaAlignment);
    }
  }
  return out;
}

}  // namespace vc
