#include "engines/ggml_cuda_support.h"

namespace vc {

bool cuda_supports_ssm_conv(uint64_t channels) { return channels % 128 == 0; }

bool cuda_supports_mamba2_scan(uint64_t d_state, uint64_t head_dim) {
  return (d_state == 128 || d_state == 256) && head_dim % 16 == 0;
}

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

bool cuda_rejects_weight(const std::string& architecture, const std::string& name, const std::vector<uint64_t>& ne, uint64_t d_state, uint64_t d_inner) {
  if (name.rfind("blk.", 0) != 0) return false;
  // llama-arch.cpp LLM_TENSOR_INFOS: SSM_CONV1D is tested with GGML_OP_SSM_CONV over a
  // {d_conv - 1 + 512, ne[1], 3} input (Qwen3-Next's too; Kimi's per-q/k/v convs are tested as MUL).
  if (ends_with(name, ".ssm_conv1d.weight") && ne.size() >= 2) return !cuda_supports_ssm_conv(ne[1]);
  // SSM_A with GGML_OP_SSM_SCAN (Mamba-2's {1, n_head}; Qwen3-Next and Kimi load SSM_A_NOSCAN, a MUL).
  if (architecture == "mamba2" && ends_with(name, ".ssm_a") && ne.size() >= 2 && ne[0] == 1 && ne[1] && d_inner % ne[1] == 0)
    return !cuda_supports_mamba2_scan(d_state, d_inner / ne[1]);
  return false;
}

}  // namespace vc
