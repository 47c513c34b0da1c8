#pragma once
// What ggml-cuda's supports_op (ggml/src/ggml-cuda/ggml-cuda.cu
// ggml_backend_cuda_device_supports_op, llama.cpp 80fb11ac) says of the recurrent ops whose
// kernels only cover some shapes. An op it rejects runs on the CPU backend, and llama.cpp's loader
// keeps the weight that op reads in host memory (llama-model-loader.cpp weight_buft_supported
// builds the op over the weight and asks the device), so its layer's other ops copy across.
#include <cstdint>
#include <string>
#include <vector>

namespace vc {

// GGML_OP_SSM_CONV: "assumes d_inner % threads == 0": the conv input's channels a multiple of 128.
bool cuda_supports_ssm_conv(uint64_t channels);
// GGML_OP_SSM_SCAN in its Mamba-2 form (A of one value per head): d_state 128 or 256 and a head
// width that is a multiple of 16.
bool cuda_supports_mamba2_scan(uint64_t d_state, uint64_t head_dim);

// Whether the loader keeps GGUF weight `name` (shape `ne`) of a model of `architecture` on the
// host although its layer is on the GPU, because the op it is built for is not supported there:
// blk.N.ssm_conv1d.weight (SSM_CONV over ne[1] channels) and a Mamba-2 blk.N.ssm_a (SSM_SCAN;
// `d_state` and `d_inner` from the model's hyperparameters).
bool cuda_rejects_weight(const std::string& architecture, const std::string& name, const std::vector<uint64_t>& ne, uint64_t d_state, uint64_t d_inner);

}  // namespace vc
