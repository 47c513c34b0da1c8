#include "engines/vllm_rope.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/checked.h"
#include "core/units.h"

namespace vc {

const char* const kVllmRopeSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/rotary_embedding/__init__.py (get_rope, _ROPE_DICT); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/rotary_embedding/base.py (cos_sin_cache buffer, cache.to(dtype)); "
    "linear_scaling_rope.py, dynamic_ntk_scaling_rope.py, yarn_scaling_rope.py, deepseek_scaling_rope.py, phi3_long_rope_scaled_rope.py (table lengths); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/gemma3.py (sliding layers: rope_local_base_freq, default scaling); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/gpt_oss.py (get_rope dtype=torch.float32)";

uint64_t VllmRopeTable::bytes() const { return checked_product({positions, rotary_dim, value_bytes}); }

namespace {

// torch.arange(max_len) over a float length holds ceil(max_len) positions (the config reader bounds
// positions to 2^34 and the factor to 10^6, so the product stays below 2^63).
uint64_t scaled(uint64_t positions, double factor) { return static_cast<uint64_t>(std::ceil(static_cast<double>(positions) * factor)); }

// The global (scaled) table's positions, as get_rope's class for the type builds it.
uint64_t table_positions(const Model& m) {
  const RopeSpec& r = m.rope;
  const uint64_t positions = m.rope_positions();
  const uint64_t original = r.original_positions ? r.original_positions : positions;
  if (r.type == "linear" || r.type == "dynamic") return scaled(positions, r.factor);
  if (r.type == "yarn" || r.type == "deepseek_yarn") return scaled(original, r.factor);
  if (r.type == "longrope") return checked_add(original, positions);
  return positions;
}

}  // namespace

VllmRope vllm_rope(const Model& m, uint64_t layers, uint64_t value_bytes) {
  VllmRope out;
  if (m.rope_positions() == 0) return out;
  const uint64_t bytes = m.architecture == "gpt_oss" ? 4 : value_bytes;
  for (uint64_t i = 0; i < std::min<uint64_t>(layers, m.layers.size()); ++i) {
    const AttentionSpec& a = m.layers[i].attention;
    uint64_t rotary = 0;
    if (a.kind == AttentionKind::Latent) rotary = a.rope_dim;
    else if ((a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow) && a.rotary)
      rotary = static_cast<uint64_t>(static_cast<double>(a.head_dim_k) * m.rope.partial_rotary_factor);
    if (rotary < 2) continue;
    const bool sliding = m.rope.sliding_own_table && a.kind == AttentionKind::SlidingWindow;
    VllmRopeTable t{rotary, sliding ? m.rope_positions() : table_positions(m), bytes, sliding};
    const bool seen = std::any_of(out.tables.begin(), out.tables.end(), [&](const VllmRopeTable& o) {
      return o.rotary_dim == t.rotary_dim && o.positions == t.positions && o.sliding == t.sliding;
    });
    if (seen) continue;
    out.tables.push_back(t);
    out.bytes = checked_add(out.bytes, t.bytes());
  }
  return out;
}

std::string VllmRope::formula() const {
  std::string s;
  for (const auto& t : tables)
    s += fmt::format("{}{} positions x rotary dim {} x {} B{}", s.empty() ? "" : " + ", format_count(t.positions), t.rotary_dim, t.value_bytes,
                     t.sliding ? " (sliding layers)" : "");
  return s;
}

}  // namespace vc
