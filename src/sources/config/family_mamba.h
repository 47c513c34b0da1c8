#pragma once
// Mamba mixers shared by the hybrid families (Nemotron-H, Falcon-H1, Jamba): the recurrent state a
// layer keeps per sequence and the parameters of its projections.
// Formulas: reference/architectures.md section 7 (llama.cpp n_embd_r / n_embd_s; vLLM
// mamba2_state_shape / mamba1_state_shape).
#include <cstdint>

#include "model/model.h"
#include "sources/config/config_view.h"

namespace vc::families {

struct Mamba2Geometry {
  uint64_t heads = 0;
  uint64_t head_dim = 0;
  uint64_t groups = 0;
  uint64_t state = 0;   // d_state
  uint64_t kernel = 0;  // d_conv
  uint64_t d_inner() const;
};

// The mamba_* keys Falcon-H1 and Granite 4.0 share: mamba_n_heads, mamba_d_head, mamba_n_groups
// and mamba_d_conv (absent: 1 and 4, the defaults of `config_class`), mamba_d_state.
Mamba2Geometry read_mamba2_keys(ConfigView& cfg, const std::string& config_class);

// conv: (d_conv - 1) * (d_inner + 2 * groups * d_state); SSM: heads * head_dim * d_state.
AttentionSpec mamba2_state(const Mamba2Geometry& g);
// in_proj (z, x, B, C, dt), conv1d (+ bias when `conv_bias`), dt_bias, A_log, D, gated norm, out_proj.
uint64_t mamba2_params(uint64_t hidden, const Mamba2Geometry& g, bool conv_bias);

struct Mamba1Geometry {
  uint64_t d_inner = 0;
  uint64_t state = 0;
  uint64_t kernel = 0;
  uint64_t dt_rank = 0;
};

// conv: (d_conv - 1) * d_inner; SSM: d_inner * d_state.
AttentionSpec mamba1_state(const Mamba1Geometry& g);
// in_proj (x, z), conv1d (+ bias), x_proj (dt, B, C), dt_proj + bias, A_log, D, out_proj.
uint64_t mamba1_params(uint64_t hidden, const Mamba1Geometry& g, bool conv_bias);

}  // namespace vc::families
