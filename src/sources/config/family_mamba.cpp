#include "sources/config/family_mamba.h"

#include "core/checked.h"
#include "sources/config/limits.h"

namespace vc::families {

uint64_t Mamba2Geometry::d_inner() const { return checked_mul(heads, head_dim); }

Mamba2Geometry read_mamba2_keys(ConfigView& cfg, const std::string& config_class) {
  Mamba2Geometry g;
  g.heads = cfg.u64("mamba_n_heads", limits::kHeads);
  g.head_dim = cfg.u64("mamba_d_head", limits::kStateDim);
  g.groups = cfg.u64_or("mamba_n_groups", 1, limits::kHeads, "transformers " + config_class + " default");
  g.state = cfg.u64("mamba_d_state", limits::kStateDim);
  g.kernel = cfg.u64_or("mamba_d_conv", 4, 64, "transformers " + config_class + " default");
  return g;
}

AttentionSpec mamba2_state(const Mamba2Geometry& g) {
  AttentionSpec a;
  a.kind = AttentionKind::LinearState;
  a.state_family = StateFamily::Mamba2;
  const uint64_t bc = checked_product({2, g.groups, g.state});
  a.state_values = checked_mul(g.d_inner(), g.state);
  a.conv_values = checked_mul(g.kernel - 1, checked_add(g.d_inner(), bc));
  a.mixer_heads = static_cast<uint32_t>(g.heads);  // the readers bound every key (limits.h)
  a.mixer_head_dim = static_cast<uint32_t>(g.head_dim);
  a.mixer_groups = static_cast<uint32_t>(g.groups);
  a.mixer_state = static_cast<uint32_t>(g.state);
  a.conv_kernel = static_cast<uint32_t>(g.kernel);
  return a;
}

uint64_t mamba2_params(uint64_t hidden, const Mamba2Geometry& g, bool conv_bias) {
  const uint64_t d_inner = g.d_inner();
  const uint64_t conv_dim = checked_add(d_inner, checked_product({2, g.groups, g.state}));
  uint64_t p = checked_mul(hidden, checked_add(checked_add(d_inner, conv_dim), g.heads));  // z, xBC, dt
  p = checked_add(p, checked_mul(conv_dim, g.kernel));
  if (conv_bias) p = checked_add(p, conv_dim);
  p = checked_add(p, 3 * g.heads + d_inner);  // dt_bias, A_log, D, norm
  return checked_add(p, checked_mul(d_inner, hidden));
}

AttentionSpec mamba1_state(const Mamba1Geometry& g) {
  AttentionSpec a;
  a.kind = AttentionKind::LinearState;
  a.state_family = StateFamily::Mamba1;
  a.state_values = checked_mul(g.d_inner, g.state);
  a.conv_values = checked_mul(g.kernel - 1, g.d_inner);
  a.mixer_heads = 1;
  a.mixer_head_dim = static_cast<uint32_t>(g.d_inner);
  a.mixer_state = static_cast<uint32_t>(g.state);
  a.mixer_dt_rank = static_cast<uint32_t>(g.dt_rank);
  a.conv_kernel = static_cast<uint32_t>(g.kernel);
  return a;
}

uint64_t mamba1_params(uint64_t hidden, const Mamba1Geometry& g, bool conv_bias) {
  uint64_t p = checked_product({2, hidden, g.d_inner});
  p = checked_add(p, checked_mul(g.d_inner, g.kernel));
  if (conv_bias) p = checked_add(p, g.d_inner);
  p = checked_add(p, checked_mul(g.d_inner, g.dt_rank + 2 * g.state));     // x_proj
  p = checked_add(p, checked_add(checked_mul(g.dt_rank, g.d_inner), g.d_inner));  // dt_proj
  p = checked_add(p, checked_add(checked_mul(g.d_inner, g.state), g.d_inner));    // A_log, D
  return checked_add(p, checked_mul(g.d_inner, hidden));
}

}  // namespace vc::families
