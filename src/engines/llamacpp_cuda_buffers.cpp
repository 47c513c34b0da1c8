#include "engines/llamacpp_cuda_buffers.h"

#include <algorithm>
#include <vector>

#include "core/checked.h"
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
  if (!model.tensors.empty()) {
    // Weights on the GPU, each at its CUDA allocation size (one GPU: every offloaded tensor on CUDA0).
    std::vector<bool> on_host(model.tensors.size(), false);
    for (const HostTensor& h : p.host_tensors) {
      if (h.gguf_index) on_host[*h.gguf_index] = true;
    }
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
  }
  // Every device that runs layers reserves the compute buffer.
  bool host_runs = p.output_device == "CPU";
  bool gpu_runs = p.output_device != "CPU";
  for (const auto& d : p.layer_device) (d == "CPU" ? host_runs : gpu_runs) = true;
  if (gpu_runs) out["CUDA0"].compute = m.compute_bytes;
  if (host_runs) out["CUDA_Host"].compute = m.compute_bytes;
  return out;
}

}  // namespace vc
