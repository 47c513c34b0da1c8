// Falcon-H1 (model_type falcon_h1): every decoder layer runs grouped-query attention and a Mamba2
// mixer side by side (LayerConfig::parallel_mixer), then a gated MLP. Mamba2 geometry:
// mamba_n_heads x mamba_d_head (= mamba_d_ssm), mamba_n_groups, mamba_d_state, mamba_d_conv.
// State per architectures.md section 7. Falcon-H1's mixer norm is optional (mamba_rms_norm).
#include <fmt/format.h>

#include "core/checked.h"
#include "sources/config/families.h"
#include "sources/config/family_common.h"
#include "sources/config/family_mamba.h"
#include "sources/config/limits.h"

namespace vc::families {

void map_falcon_h1(ConfigView& cfg) {
  Model& m = cfg.model();
  ParamTally tally;
  read_embeddings(cfg, tally);
  const uint64_t hidden = m.hidden;
  const uint64_t layers = cfg.u64("num_hidden_layers", limits::kLayers);
  const GqaGeometry g = read_gqa(cfg, hidden);
  const uint64_t width = cfg.u64("intermediate_size", limits::kWidth);
  const Mamba2Geometry mamba = read_mamba2_keys(cfg, "FalconH1Config");
  if (auto d_ssm = cfg.opt_u64("mamba_d_ssm", limits::kWidth); d_ssm && *d_ssm != mamba.d_inner()) {
    cfg.fail("mamba_d_ssm", fmt::format("is {} but mamba_n_heads x mamba_d_head is {}", *d_ssm, mamba.d_inner()));
  }
  uint64_t mamba_p = mamba2_params(hidden, mamba, cfg.flag("mamba_conv_bias", true));
  if (!cfg.flag("mamba_rms_norm", false)) mamba_p = checked_sub(mamba_p, mamba.d_inner());
  const uint64_t attn_p = gqa_params(hidden, g.heads, g.kv_heads, g.head_dim, g.head_dim, cfg.flag("attention_bias", false));

  for (uint64_t il = 0; il < layers; ++il) {
    tally.begin_layer();
    LayerConfig layer;
    layer.attention = full_attention(g);
    layer.parallel_mixer = mamba2_state(mamba);
    layer.feed_forward = dense_spec(width);
    tally.add_always_active(ParamClass::Attention, checked_add(attn_p, mamba_p));
    tally.add_always_active(ParamClass::DenseMlp, glu_params(hidden, width));
    tally.add_always_active(ParamClass::Norms, 2 * hidden);
    layer.params = tally.end_layer();
    m.layers.push_back(std::move(layer));
  }
  tally.write_to(m.params, cfg.label() + " geometry (Falcon-H1 mapper)");
}

}  // namespace vc::families
