#include "model/model.h"

#include <algorithm>
#include <cctype>

#include "core/checked.h"

namespace vc {

const char* to_string(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::Full: return "full";
    case AttentionKind::SlidingWindow: return "sliding_window";
    case AttentionKind::Latent: return "latent";
    case AttentionKind::LinearState: return "linear_state";
    case AttentionKind::None: return "none";
  }
  return "none";
}

const char* to_string(ParamClass c) {
  switch (c) {
    case ParamClass::Embedding: return "embedding";
    case ParamClass::OutputHead: return "output_head";
    case ParamClass::Attention: return "attention";
    case ParamClass::DenseMlp: return "dense_mlp";
    case ParamClass::RoutedExperts: return "routed_experts";
    case ParamClass::SharedExperts: return "shared_experts";
    case ParamClass::Router: return "router";
    case ParamClass::Norms: return "norms";
    case ParamClass::Vision: return "vision";
    case ParamClass::Mtp: return "mtp";
    case ParamClass::Other: return "other";
  }
  return "other";
}

uint64_t AttentionSpec::values_per_token() const {
  switch (kind) {
    case AttentionKind::Full:
    case AttentionKind::SlidingWindow:
      return checked_mul(kv_heads, uint64_t{head_dim_k} + head_dim_v);
    case AttentionKind::Latent:
      return uint64_t{latent_rank} + rope_dim + index_key_dim;
    default:
      return 0;
  }
}

uint64_t Model::layer_count(AttentionKind kind) const {
  return static_cast<uint64_t>(std::count_if(layers.begin(), layers.end(), [&](const LayerConfig& l) {
    return l.attention.kind == kind || (l.parallel_mixer && l.parallel_mixer->kind == kind);
  }));
}

const Build* Model::find_build(const std::string& wanted) const {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& b : builds) if (lower(b.name) == lower(wanted)) return &b;
  return nullptr;
}

}  // namespace vc
