// vLLM's MLA A-projections on a TP rank (src/engines/vllm_budget.cpp vllm_mla_whole_bytes): whole on
// every rank (ReplicatedLinear in vllm/model_executor/models/deepseek_v2.py), so a rank's weights are
// its even share of the checkpoint plus what of them it holds beyond that share. Worked by hand from
// the config values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "core/units.h"
#include "engines/engine_run.h"
#include "engines/vllm_budget.h"
#include "sources/config/config_mapper.h"

using namespace vc;

namespace {

// Kimi-VL-A3B-Instruct's text model as tools/engine-logs/models.json stores it: DeepSeek-V3's MLA
// without a query rank (kv_lora_rank 512, rope 64), 27 layers, hidden 2,048.
Model kimi_vl_text() {
  return model_from_config(nlohmann::json::parse(R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "vocab_size": 163840, "max_position_embeddings": 131072, "hidden_size": 2048, "intermediate_size": 11264, "moe_intermediate_size": 1408,
    "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16, "n_shared_experts": 2, "n_routed_experts": 64,
    "kv_lora_rank": 512, "q_lora_rank": null, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "num_experts_per_tok": 6,
    "moe_layer_freq": 1, "first_k_dense_replace": 1, "tie_word_embeddings": false, "rope_theta": 800000.0, "torch_dtype": "bfloat16"})"),
                           "config.json");
}

VllmBudget budget_at(const Model& m, uint64_t tp, uint64_t weight_bytes) {
  EngineRun run = parse_engine_command("vllm serve m -tp " + std::to_string(tp) + " --max-model-len 8192 --gpu-memory-utilization 0.95");
  run.vllm.card_bytes = parse_bytes("79.19GiB", "--gpu-memory");
  run.vllm.weight_bytes = weight_bytes;
  return vllm_budget(m, run.vllm);
}

}  // namespace

// Without a query rank: kv_a_proj_with_mqa 2,048 x (512 + 64) = 1,179,648 + kv_a_layernorm 512 =
// 1,180,160 a layer, x 27 = 31,864,320 weights, x 2 B = 63,728,640 B whole; at TP 2 the rank holds
// 63,728,640 - 31,864,320 = 31,864,320 B beyond its even share, at TP 4 63,728,640 - 15,932,160 =
// 47,796,480 B; nothing at TP 1.
TEST(VllmMlaWeights, KimiVlKvAProjectionIsWholeOnEveryRank) {
  const Model m = kimi_vl_text();
  EXPECT_EQ(vllm_mla_whole_bytes(m, m.layers.size(), 2000, 2), 63'728'640u);
  const uint64_t total = m.native.bytes;
  const VllmBudget one = budget_at(m, 1, total), two = budget_at(m, 2, total), four = budget_at(m, 4, total);
  EXPECT_EQ(one.mla_extra, 0u);
  EXPECT_EQ(one.weights, total + one.rope.bytes);
  EXPECT_EQ(two.mla_whole, 63'728'640u);
  EXPECT_EQ(two.mla_extra, 31'864'320u);
  EXPECT_EQ(two.weights, (total + 1) / 2 + two.rope.bytes + 31'864'320u);
  EXPECT_EQ(four.mla_extra, 47'796'480u);
  EXPECT_EQ(four.weights, (total + 3) / 4 + four.rope.bytes + 47'796'480u);
}

// With a query rank (DeepSeek-V3: q_lora_rank 1,536, kv_lora_rank 512, rope 64, hidden 7,168, 61
// layers): the fused A-projection 7,168 x (1,536 + 512 + 64) = 15,138,816 + q_a_layernorm 1,536 +
// kv_a_layernorm 512 = 15,140,864 a layer. Its FP8 checkpoint stores the attention below 16 bits,
// so the projections take the checkpoint's attention bytes per weight; at 1 B a weight (1,000
// milli-bytes) and 2 B a norm value, 61 x (15,138,816 + 2 x 2,048) = 923,717,632 B.
TEST(VllmMlaWeights, FusedQueryAndKvAProjectionWithAQueryRank) {
  const Model* ds = Catalogue::builtin().find("deepseek-v3");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(vllm_mla_whole_bytes(*ds, ds->layers.size(), 1000, 2), 923'717'632u);
  // A dense model has no latent layers: nothing whole beyond the even share.
  const Model* llama = Catalogue::builtin().find("llama-3.1-8b");
  ASSERT_NE(llama, nullptr);
  EXPECT_EQ(vllm_mla_whole_bytes(*llama, llama->layers.size(), 2000, 2), 0u);
}
