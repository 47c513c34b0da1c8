#pragma once
// Models and boxes the plan tests share. Llama-3.1-70B is built here from its published
// config.json values (meta-llama/Llama-3.1-70B; data/models/llama-3.1-70b/config.json):
// 80 layers, hidden 8192, 64 heads, 8 kv heads (head_dim 128), vocab 128256, intermediate 28672.
#include "catalogue/catalogue.h"
#include "model/model.h"
#include "plan/hardware.h"

namespace vc::test {

// Parameter counts by hand (no biases, untied embeddings, SwiGLU):
inline constexpr uint64_t kL70Embedding = 128256ull * 8192;                                   // 1,050,673,152
inline constexpr uint64_t kL70AttentionPerLayer = 2ull * 8192 * 8192 + 2ull * 8192 * 1024;    // q,o + k,v = 150,994,944
inline constexpr uint64_t kL70MlpPerLayer = 3ull * 8192 * 28672;                               // 704,643,072
inline constexpr uint64_t kL70NormsPerLayer = 2ull * 8192;                                     // 16,384
inline constexpr uint64_t kL70FinalNorm = 8192;
inline constexpr uint64_t kL70Total = 2 * kL70Embedding + 80 * (kL70AttentionPerLayer + kL70MlpPerLayer + kL70NormsPerLayer) + kL70FinalNorm;  // 70,553,706,496

inline Model llama_70b() {
  Model m;
  m.id = "llama-3.1-70b-test";
  m.name = "Llama 3.1 70B (test)";
  m.family = "llama";
  m.vocab = 128256;
  m.hidden = 8192;
  for (int i = 0; i < 80; ++i) {
    LayerConfig l;
    l.attention.kind = AttentionKind::Full;
    l.attention.kv_heads = 8;
    l.attention.head_dim_k = 128;
    l.attention.head_dim_v = 128;
    l.feed_forward.kind = FeedForwardKind::Dense;
    l.feed_forward.dense_width = 28672;
    m.layers.push_back(l);
  }
  m.params.by_class = {{ParamClass::Embedding, kL70Embedding},
                       {ParamClass::OutputHead, kL70Embedding},
                       {ParamClass::Attention, 80 * kL70AttentionPerLayer},
                       {ParamClass::DenseMlp, 80 * kL70MlpPerLayer},
                       {ParamClass::Norms, 80 * kL70NormsPerLayer},
                       {ParamClass::Other, kL70FinalNorm}};
  m.params.derived_total = kL70Total;
  m.params.derived_active = kL70Total - kL70Embedding;
  m.params.derived_source = "test: Llama-3.1-70B config values";
  m.native = {"BF16", 2 * kL70Total, false, "2 bytes per parameter", "", 0, {}};
  m.max_context = 131072;
  return m;
}

inline const Model& kimi_k3() { return *Catalogue::builtin().find("kimi-k3"); }

inline Box box_of(const char* gpus, uint64_t nodes = 1) {
  Box b;
  b.gpus = parse_gpus(gpus, "--gpu");
  b.nodes = nodes;
  return b;
}

}  // namespace vc::test
