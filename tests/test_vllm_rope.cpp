// vLLM's rotary cos/sin tables (src/engines/vllm_rope.cpp), counted in "Model loading took", and
// the config reader's rope fields (src/sources/config/config_rope.cpp). Every figure below is
// positions x rotary dim x bytes a value, worked by hand from the published config.json values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue_entry.h"
#include "catalogue/catalogue.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_run.h"
#include "engines/vllm_budget.h"
#include "engines/vllm_rope.h"
#include "published_configs.h"
#include "sources/config/config_mapper.h"

using namespace vc;
using vc::test::entry;

namespace {


uint64_t all_layers(const Model& m) { return m.layers.size(); }

// A small Llama config with `rope` spliced in (a JSON object's members, or "").
Model tiny_llama(const std::string& rope) {
  const std::string text = R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 4096)" +
                           (rope.empty() ? std::string() : ", " + rope) + "}";
  return model_from_config(nlohmann::json::parse(text), "config.json");
}

}  // namespace

// Gemma 3 4B (google/gemma-3-4b-it: head_dim 256, max_position_embeddings 131,072 by
// Gemma3TextConfig's default, rope_scaling linear factor 8, sliding layers on rope_local_base_freq):
// the global layers' LinearScalingRotaryEmbedding holds 131,072 x 8 = 1,048,576 positions x 256 x
// 2 B = 536,870,912 B; the sliding layers' default table 131,072 x 256 x 2 = 67,108,864 B; together
// 603,979,776 B = 0.5625 GiB, the gap between vLLM 0.19's 8.58 GiB printed and the checkpoint's 8.01.
TEST(VllmRope, Gemma3HasAScaledGlobalTableAndASlidingOne) {
  const Model& m = entry("gemma-3-4b");
  EXPECT_EQ(m.rope.type, "linear");
  EXPECT_DOUBLE_EQ(m.rope.factor, 8.0);
  EXPECT_TRUE(m.rope.sliding_own_table);
  const VllmRope r = vllm_rope(m, all_layers(m), 2);
  ASSERT_EQ(r.tables.size(), 2u);
  EXPECT_EQ(r.tables[0].bytes() + r.tables[1].bytes(), 603'979'776u);
  EXPECT_EQ(r.bytes, 603'979'776u);
  // 27B: head_dim 128, so half of each: 268,435,456 + 33,554,432 = 301,989,888 B.
  EXPECT_EQ(vllm_rope(entry("gemma-3-27b"), all_layers(entry("gemma-3-27b")), 2).bytes, 301'989'888u);
  // The sliding layers alone (a pipeline stage of the first five, all sliding) build only theirs.
  EXPECT_EQ(vllm_rope(m, 5, 2).bytes, 67'108'864u);
}

// Llama 4 Scout (max_position_embeddings 10,485,760, head_dim 128, llama3 scaling, which only
// rescales the frequencies): 10,485,760 x 128 x 2 B = 2,684,354,560 B = 2.5 GiB on every TP rank,
// the 2.5 GiB a rank vLLM 0.19 printed above an even quarter of the checkpoint at TP 4.
TEST(VllmRope, Llama4ScoutTableIsTwoAndAHalfGiB) {
  const Model& m = entry("llama-4-scout");
  EXPECT_EQ(m.rope.type, "llama3");
  const VllmRope r = vllm_rope(m, all_layers(m), 2);
  ASSERT_EQ(r.tables.size(), 1u);
  EXPECT_EQ(r.bytes, 2'684'354'560u);
}

// gpt-oss-20b: YaRN over original_max_position_embeddings 4,096 x factor 32 = 131,072 positions,
// head_dim 64, float32 (models/gpt_oss.py passes dtype=torch.float32): 131,072 x 64 x 4 = 33,554,432 B.
TEST(VllmRope, GptOssYarnTableInFloat32) {
  const Model& m = entry("gpt-oss-20b");
  EXPECT_EQ(m.rope.type, "yarn");
  EXPECT_EQ(m.rope.original_positions, 4096u);
  EXPECT_EQ(vllm_rope(m, all_layers(m), 2).bytes, 33'554'432u);
}

// Llama 3.1 8B: 131,072 x 128 x 2 B = 33,554,432 B; at --dtype float32 4 B a value, 67,108,864 B.
// DeepSeek-V3 (MLA): qk_rope_head_dim 64, YaRN 4,096 x 40 = 163,840 positions: 20,971,520 B.
// Qwen3-Next 80B: head_dim 256 x partial_rotary_factor 0.25 = 64 rotated, 262,144 positions: 33,554,432 B.
TEST(VllmRope, DtypeMlaAndPartialRotary) {
  EXPECT_EQ(vllm_rope(entry("llama-3.1-8b"), 32, 2).bytes, 33'554'432u);
  EXPECT_EQ(vllm_rope(entry("llama-3.1-8b"), 32, 4).bytes, 67'108'864u);
  const Model& ds = entry("deepseek-v3");
  EXPECT_EQ(vllm_rope(ds, all_layers(ds), 2).bytes, 20'971'520u);
  const Model& qn = entry("qwen3-next-80b-a3b");
  EXPECT_DOUBLE_EQ(qn.rope.partial_rotary_factor, 0.25);
  EXPECT_EQ(vllm_rope(qn, all_layers(qn), 2).bytes, 33'554'432u);
}

// The budget's weights on a rank: the even TP share plus the whole table. Llama 4 Scout at TP 4:
// ceil(checkpoint / 4) + 2,684,354,560 B.
TEST(VllmRope, BudgetWeightsCarryTheTableOnEveryRank) {
  const Model& m = entry("llama-4-scout");
  EngineRun run = parse_engine_command("vllm serve meta-llama/Llama-4-Scout-17B-16E-Instruct -tp 4 --max-model-len 8192 --gpu-memory-utilization 0.95");
  run.vllm.card_bytes = parse_bytes("79.19GiB", "--gpu-memory");
  run.vllm.weight_bytes = m.native.bytes;
  const VllmBudget b = vllm_budget(m, run.vllm);
  EXPECT_EQ(b.rope.bytes, 2'684'354'560u);
  EXPECT_EQ(b.weights, (m.native.bytes + 3) / 4 + 2'684'354'560u);
}

// The config reader: rope_scaling, transformers v5's rope_parameters (the full layers' entry of a
// per-layer-type dict), partial_rotary_factor, and a bad factor refused naming the key.
TEST(ConfigRope, ReadsScalingParametersAndPartialRotary) {
  EXPECT_EQ(tiny_llama("").rope.type, "default");
  EXPECT_DOUBLE_EQ(tiny_llama("").rope.factor, 1.0);
  const Model lin = tiny_llama(R"("rope_scaling": {"type": "linear", "factor": 4.0})");
  EXPECT_EQ(lin.rope.type, "linear");
  // 4,096 x 4 = 16,384 positions x head dim 64 / 4 heads = 16 x 2 B = 524,288 B.
  EXPECT_EQ(vllm_rope(lin, 2, 2).bytes, 524'288u);
  const Model v5 = tiny_llama(
      R"("rope_parameters": {"full_attention": {"rope_type": "yarn", "factor": 2, "original_max_position_embeddings": 1024}, "sliding_attention": {"rope_type": "default"}})");
  EXPECT_EQ(v5.rope.type, "yarn");
  EXPECT_EQ(v5.rope.original_positions, 1024u);
  EXPECT_EQ(vllm_rope(v5, 2, 2).bytes, 2048u * 16u * 2u);  // 1,024 x 2 positions x 16 x 2 B
  const Model partial = tiny_llama(R"("partial_rotary_factor": 0.5)");
  EXPECT_EQ(vllm_rope(partial, 2, 2).bytes, 4096u * 8u * 2u);  // 16 x 0.5 = 8 rotated
  EXPECT_THROW(tiny_llama(R"("rope_scaling": {"type": "linear", "factor": -1})"), InputError);
  EXPECT_THROW(tiny_llama(R"("rope_scaling": {"type": 7})"), InputError);
  EXPECT_THROW(tiny_llama(R"("partial_rotary_factor": 1.5)"), InputError);
  try {
    tiny_llama(R"("rope_scaling": {"type": "linear", "factor": "x"})");
    FAIL() << "a string factor was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rope_scaling.factor"), std::string::npos) << e.what();
  }
}

// GPT-NeoX names its partial rotary rotary_pct. Pythia-1.4B (published config: hidden 2,048 over 16
// heads = 128 a head, rotary_pct 0.25, 2,048 positions): one table of 2,048 x 32 x 2 B = 131,072 B.
// GPT-2 rotates nothing (learned positions, wpe): no table.
TEST(VllmRope, GptNeoxRotaryPctAndGpt2WithoutRotary) {
  const Model pythia = model_from_config(vc::testing::pythia_1_4b(), "config.json");
  EXPECT_DOUBLE_EQ(pythia.rope.partial_rotary_factor, 0.25);
  EXPECT_EQ(vllm_rope(pythia, all_layers(pythia), 2).bytes, 131'072u);
  nlohmann::json no_pct = vc::testing::pythia_1_4b();
  no_pct.erase("rotary_pct");  // GPTNeoXConfig's default is 0.25 too
  EXPECT_DOUBLE_EQ(model_from_config(no_pct, "config.json").rope.partial_rotary_factor, 0.25);
  const Model g2 = model_from_config(vc::testing::gpt2(), "config.json");
  EXPECT_EQ(vllm_rope(g2, all_layers(g2), 2).bytes, 0u);
}

// Qwen3 32B (Qwen/Qwen3-32B config.json: max_position_embeddings 40,960, head_dim 128, no
// rope_scaling); the catalogue states the card's native 32,768 as its context, but the engines build
// the table from the config: 40,960 x 128 x 2 B = 10,485,760 B (32,768 would give 8,388,608 B).
TEST(VllmRope, TableFollowsTheConfigNotTheCardsNativeContext) {
  const Model& m = entry("qwen3-32b");
  EXPECT_EQ(m.max_context, 32'768u);
  EXPECT_EQ(m.rope_positions(), 40'960u);
  EXPECT_EQ(vllm_rope(m, all_layers(m), 2).bytes, 10'485'760u);
}
