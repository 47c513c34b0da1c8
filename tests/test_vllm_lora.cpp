// vLLM's LoRA slots (src/engines/vllm_lora.cpp): --enable-lora --max-loras N --max-lora-rank R
// preallocates A and B buffers per linear module and rank, out of the KV cache's share.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue_entry.h"
#include "catalogue/catalogue.h"
#include "cli_runner.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_run.h"
#include "engines/vllm_lora.h"
#include "engines/vllm_lora_adapters.h"
#include "server/api.h"
#include "server/request_params.h"
#include "sources/companion_files.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "test_data.h"
#include "published_configs.h"

#include <filesystem>
#include <fstream>

using namespace vc;
using json = nlohmann::json;
using vc::test::entry;

namespace {

// Worked by hand from Qwen3-0.6B's config.json (hidden 1,024, 28 layers, 16 query / 8 KV heads of
// 128, intermediate 3,072, bfloat16), per unit of rank and one adapter slot, one layer on TP 1:
//   qkv_proj  A 3 x 1,024 = 3,072; B (16 + 8 + 8) x 128 = 4,096
//   o_proj    A 16 x 128 = 2,048;   B 1,024                        attention 10,240
//   gate_up   A 2 x 1,024 = 2,048;  B 2 x 3,072 = 6,144
//   down      A 3,072;              B 1,024                        MLP 12,288
// 22,528 x 28 layers = 630,784 values; x 4 adapters x rank 16 x 2 B = 80,740,352 B.
// On TP 2 a rank holds 8 query / 4 KV heads and half the MLP width: attention 3,072 + 2,048 +
// 1,024 + 1,024 = 7,168, MLP 3,072 + 3 x 1,536 = 7,680; 14,848 x 28 = 415,744; x 128 = 53,215,232 B.
constexpr uint64_t kQwen3_06bFourSlotsRank16 = 80'740'352;
constexpr uint64_t kQwen3_06bFourSlotsRank16Tp2 = 53'215'232;

// DeepSeek-V3's config.json (hidden 7,168, 61 layers of multi-head latent attention: 128 heads,
// q_lora_rank 1,536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128; the first 3 layers dense at
// width 18,432, then 58 MoE layers of 256 experts at 2,048 with one shared expert of 2,048), per
// unit of rank and slot, one layer on TP 1, as vLLM wraps DeepseekV2MLAAttention's linears:
//   fused_qkv_a_proj  A 2 x 7,168 = 14,336;  B 1,536 + 512 + 64 = 2,112           16,448
//   q_b_proj          A 1,536;               B 128 x (128 + 64) = 24,576          26,112
//   kv_b_proj         A 512;                 B 128 x (128 + 128) = 32,768         33,280
//   o_proj            A 128 x 128 = 16,384;  B 7,168                              23,552
// attention 99,392 a layer, x 61 = 6,062,912. MLP (the Qwen3 shapes, 3 x hidden + 3 x width a
// gated MLP): dense 21,504 + 55,296 = 76,800, x 3 = 230,400; MoE 256 x (21,504 + 6,144) = 7,077,888
// + router 7,168 + 256 = 7,424 + shared 27,648 = 7,112,960, x 58 = 412,551,680. Sum 418,844,992
// values; one slot of rank 16 at 2 B: 13,403,039,744 B.
// On TP 8 a rank holds 16 heads: fused_qkv_a_proj 16,448 (whole on every rank), q_b 1,536 + 3,072,
// kv_b 512 + 4,096, o 2,048 + 7,168: 34,880 a layer, x 61 = 2,127,680. MLP: dense 21,504 + 3 x 2,304
// = 28,416 x 3 = 85,248; MoE 256 x (21,504 + 768) = 5,701,632 + 7,424 + 22,272 = 5,731,328 x 58 =
// 332,417,024. Sum 334,629,952; x 32 B = 10,708,158,464 B.
constexpr uint64_t kDeepseekV3OneSlotRank16 = 13'403'039'744;
constexpr uint64_t kDeepseekV3OneSlotRank16Tp8 = 10'708'158'464;

const Model& qwen3_06b() { return *Catalogue::builtin().find("qwen3-0.6b"); }
const Model& catalogue_model(const char* id) { return *Catalogue::builtin().find(id); }

LoraSlotSettings slots(uint64_t loras, uint64_t rank) {
  LoraSlotSettings s;
  s.max_loras = loras;
  s.max_lora_rank = rank;
  return s;
}

// An adapter folder holding only `config` as its adapter_config.json (what vLLM reads first).
std::string write_adapter(const std::string& name, const std::string& config) {
  const std::filesystem::path dir = vc::testing::scratch_dir() / "vllm-adapters" / name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "adapter_config.json") << config;
  return dir.string();
}

}  // namespace

TEST(VllmLora, SlotsOfADenseModelAreWorkedByHand) {
  const LoraSlotSettings four = slots(4, 16);
  EXPECT_EQ(vllm_lora_slots(qwen3_06b(), four, 1, 1, 2).bytes, kQwen3_06bFourSlotsRank16);
  EXPECT_EQ(vllm_lora_slots(qwen3_06b(), four, 2, 1, 2).bytes, kQwen3_06bFourSlotsRank16Tp2);
  // Linear in the slots and the rank; nothing without --enable-lora.
  EXPECT_EQ(vllm_lora_slots(qwen3_06b(), slots(1, 64), 1, 1, 2).bytes, kQwen3_06bFourSlotsRank16);
  EXPECT_EQ(vllm_lora_slots(qwen3_06b(), slots(0, 16), 1, 1, 2).bytes, 0u);
}

TEST(VllmLora, LatentAttentionSlotsAreWorkedByHand) {
  const Model& v3 = catalogue_model("deepseek-v3");
  const LoraSlots one = vllm_lora_slots(v3, slots(1, 16), 1, 1, 2);
  EXPECT_EQ(one.bytes, kDeepseekV3OneSlotRank16);
  EXPECT_NE(one.formula.find("6,062,912 attention + 412,782,080 MLP"), std::string::npos) << one.formula;
  EXPECT_NE(one.assumption.find("61 latent (MLA) layers"), std::string::npos) << one.assumption;
  EXPECT_EQ(one.assumption.find("not counted: their projection widths"), std::string::npos) << one.assumption;
  EXPECT_EQ(vllm_lora_slots(v3, slots(1, 16), 8, 1, 2).bytes, kDeepseekV3OneSlotRank16Tp8);
  // One layer by itself: the sums above.
  EXPECT_EQ(latent_attention_lora_values(7168, v3.layers[0].attention, 1).total(), 99'392u);
  EXPECT_EQ(latent_attention_lora_values(7168, v3.layers[0].attention, 8).total(), 34'880u);
  // Kimi K2 (DeepseekV3ForCausalLM, 64 heads): 16,448 + (1,536 + 64 x 192) + (512 + 64 x 256) +
  // (64 x 128 + 7,168) = 16,448 + 13,824 + 16,896 + 15,360 = 62,528.
  const Model& k2 = catalogue_model("kimi-k2");
  EXPECT_EQ(latent_attention_lora_values(k2.hidden, k2.layers[0].attention, 1).total(), 62'528u);
  // Without query compression (DeepSeek-V2-Lite's q_lora_rank null): q_proj A hidden, B heads x
  // (nope + rope), and kv_a_proj_with_mqa A hidden, B kv_lora + rope. DeepSeek-V2-Lite's config
  // (hidden 2,048, 16 heads, kv_lora 512, nope 128, rope 64, v 128) on TP 1:
  //   q_proj 2,048 + 3,072 = 5,120; kv_a 2,048 + 576 = 2,624; kv_b 512 + 4,096 = 4,608;
  //   o 2,048 + 2,048 = 4,096: 16,448.
  AttentionSpec lite = v3.layers[0].attention;
  lite.query_rank = 0;
  lite.query_heads = 16;
  EXPECT_EQ(latent_attention_lora_values(2048, lite, 1).total(), 16'448u);
  // MLA read from a GGUF (no nope / v widths): nothing counted, said in the assumption.
  AttentionSpec gguf = v3.layers[0].attention;
  gguf.nope_dim = gguf.value_dim = 0;
  EXPECT_EQ(latent_attention_lora_values(7168, gguf, 1).total(), 0u);
}

// Gated DeltaNet, from Qwen3-Next-80B-A3B's config.json (hidden 2,048; linear_num_key_heads 16 x
// linear_key_head_dim 128 = k 2,048; linear_num_value_heads 32 x linear_value_head_dim 128 = v 4,096;
// linear_conv_kernel_dim 4), per unit of rank and slot, one layer, as vLLM wraps QwenGatedDeltaNetAttention
// (Qwen3-Next: one interleaved slice per packed projection). TP 1:
//   in_proj_qkvz  A 2,048;      B 2 x 2,048 + 2 x 4,096 = 12,288   14,336
//   in_proj_ba    A 2,048;      B 2 x 32 = 64                      2,112
//   conv1d        A 4;          B 2 x 2,048 + 4,096 = 8,192        8,196
//   out_proj      A 4,096;      B 2,048                            6,144   -> 30,788
// TP 4 (k 512, v 1,024, 8 value heads a rank): 2,048 + 1,024 + 2,048 = 5,120; 2,048 + 16 = 2,064;
// 4 + 1,024 + 1,024 = 2,052; 1,024 + 2,048 = 3,072 -> 12,308.
// Qwen3.5 (same widths in Qwen3.5-35B-A3B's config) keeps q, k, v, z and b, a apart: in_proj_qkvz A 4 x
// 2,048 = 8,192 + 12,288 = 20,480, in_proj_ba A 2 x 2,048 = 4,096 + 64 = 4,160; conv1d and out_proj as
// above: 20,480 + 4,160 + 8,196 + 6,144 = 38,980 on TP 1.
// The whole of Qwen3-Next on TP 4, 4 slots of rank 64 (48 layers: 36 Gated DeltaNet, 12 full):
//   full attention (16 query heads of 256 doubled by the output gate, 2 KV heads: one a rank):
//     qkv A 3 x 2,048 = 6,144, B (4 + 4 gate) x 256 + 1 x 512 = 2,560; o A 4 x 256 = 1,024, B 2,048
//     -> 11,776, x 12 = 141,312
//   Gated DeltaNet 12,308 x 36 = 443,088
//   MoE (512 experts of 512, one shared expert of 512, router, shared_expert_gate), a layer:
//     expert 2 x 2,048 + 2 x 128 + 128 + 2,048 = 6,528; 512 x 6,528 = 3,342,336; router 2,048 + 512;
//     shared 6,528; shared_expert_gate 2,048 + 1 -> 3,353,473, x 48 = 160,966,704
//   161,551,104 values x 4 x 64 x 2 B = 82,714,165,248 B (was 82,430,656,512 without the mixers, the
//   gate's q share and the shared_expert_gate).
constexpr uint64_t kQwen3NextFourSlotsRank64Tp4 = 82'714'165'248;

TEST(VllmLora, GatedDeltaNetSlotsAreWorkedByHand) {
  const Model& next = catalogue_model("qwen3-next-80b-a3b");
  const AttentionSpec& gdn = next.layers[0].attention;
  ASSERT_EQ(gdn.state_family, StateFamily::GatedDeltaNet);
  EXPECT_EQ(recurrent_mixer_lora_values(next.hidden, gdn, 1, false), 30'788u);
  EXPECT_EQ(recurrent_mixer_lora_values(next.hidden, gdn, 4, false), 12'308u);
  const Model& q35 = catalogue_model("qwen3.5-35b-a3b");
  ASSERT_EQ(q35.layers[0].attention.state_family, StateFamily::GatedDeltaNet);
  EXPECT_EQ(recurrent_mixer_lora_values(q35.hidden, q35.layers[0].attention, 1, true), 38'980u);
  const LoraSlots s = vllm_lora_slots(next, slots(4, 64), 4, 1, 2);
  EXPECT_EQ(s.bytes, kQwen3NextFourSlotsRank64Tp4);
  EXPECT_NE(s.formula.find("141,312 attention + 443,088 recurrent mixer + 160,966,704 MLP"), std::string::npos) << s.formula;
  EXPECT_NE(s.assumption.find("36 recurrent mixers' projections counted"), std::string::npos) << s.assumption;
  EXPECT_EQ(s.assumption.find("not counted (their geometry"), std::string::npos) << s.assumption;
  // The CLI's answer for the pasted command carries the same line.
  const CliResult r = run_cli("estimate qwen3-next-80b-a3b --json --gpu \"H100 SXM\" --engine-command \"vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct -tp 4 "
                              "--enable-lora --max-loras 4 --max-lora-rank 64\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  uint64_t line = 0;
  const json answer = json::parse(r.output);
  for (const auto& l : answer["engine"]["devices"][0]["lines"])
    if (l["label"].get<std::string>().rfind("LoRA slots", 0) == 0) line = l["bytes"].get<uint64_t>();
  EXPECT_EQ(line, kQwen3NextFourSlotsRank64Tp4);
}

// Mamba2, from Nemotron-H-56B's config.json (hidden 8,192; mamba_num_heads 256 x mamba_head_dim 64 =
// d 16,384; n_groups 8 x ssm_state_size 256 = gs 2,048; conv_kernel 4), one layer, as vLLM wraps
// MambaMixer2 with TP dividing the groups (MergedColumnParallelLinear, one A per slice). TP 1:
//   in_proj   A 5 x 8,192 = 40,960; B 2 x 16,384 + 2 x 2,048 + 256 = 37,120   78,080
//   conv1d    A 3 x 4 = 12;         B 16,384 + 2 x 2,048 = 20,480            20,492
//   out_proj  A 16,384;             B 8,192                                  24,576   -> 123,148
// TP 4: in_proj 40,960 + 2 x 4,096 + 2 x 512 + 64 = 50,240; conv1d 12 + 4,096 + 1,024 = 5,132;
// out_proj 4,096 + 8,192 = 12,288 -> 67,660.
// The whole model on TP 4, 4 slots of rank 64 (118 layers: 54 Mamba2, 54 MLP, 10 attention):
//   attention (64 query heads, 8 KV heads of 128): qkv 3 x 8,192 + 16 x 128 + 2 x 256 = 27,136,
//     o 16 x 128 + 8,192 = 10,240 -> 37,376, x 10 = 373,760
//   Mamba2 67,660 x 54 = 3,653,640
//   squared-ReLU MLP of 32,768, no gate: up 8,192 + 8,192, down 8,192 + 8,192 = 32,768, x 54 = 1,769,472
//   5,796,872 values x 4 x 64 x 2 B = 2,967,998,464 B (was 1,550,319,616: no mixers, gated MLPs).
// Granite-4.0-H-Small (hidden 4,096; 128 heads of 64 = d 8,192; one group of state 128; kernel 4):
//   TP 1 (1 divides 1): in_proj 5 x 4,096 + 2 x 8,192 + 2 x 128 + 128 = 37,248; conv1d 12 + 8,192 + 256
//   = 8,460; out_proj 8,192 + 4,096 = 12,288 -> 57,996.
//   TP 2: the one group copied to both ranks (2 groups), plain ColumnParallelLinear: in_proj 4,096 +
//   (2 x 8,192 + 128 + 2 x 2 x 128) / 2 = 4,096 + 8,512 = 12,608; conv1d 4 + (8,192 + 512) / 2 = 4,356;
//   out_proj 4,096 + 4,096 = 8,192 -> 25,156.
//   Its MoE layer on TP 2 (72 experts of 768, router, shared MLP of 1,536 whose input_linear packs gate
//   and up under one name: one A): expert 2 x 4,096 + 2 x 384 + 384 + 4,096 = 13,440, x 72 = 967,680;
//   router 4,096 + 72 = 4,168; shared 4,096 + 2 x 768 + 768 + 4,096 = 10,496 -> 982,344, x 40 layers =
//   39,293,760 (36 Mamba2 x 25,156 = 905,616 beside it).
constexpr uint64_t kNemotronH56bFourSlotsRank64Tp4 = 2'967'998'464;

TEST(VllmLora, Mamba2SlotsAreWorkedByHand) {
  const Model& nh = catalogue_model("nemotron-h-56b");
  const AttentionSpec& m2 = nh.layers[0].attention;
  ASSERT_EQ(m2.state_family, StateFamily::Mamba2);
  EXPECT_EQ(recurrent_mixer_lora_values(nh.hidden, m2, 1, true), 123'148u);
  EXPECT_EQ(recurrent_mixer_lora_values(nh.hidden, m2, 4, true), 67'660u);
  const LoraSlots s = vllm_lora_slots(nh, slots(4, 64), 4, 1, 2);
  EXPECT_EQ(s.bytes, kNemotronH56bFourSlotsRank64Tp4);
  EXPECT_NE(s.formula.find("373,760 attention + 3,653,640 recurrent mixer + 1,769,472 MLP"), std::string::npos) << s.formula;
  EXPECT_NE(s.assumption.find("without a gate"), std::string::npos) << s.assumption;
  const Model& granite = catalogue_model("granite-4.0-h-small");
  const AttentionSpec* g = nullptr;
  for (const auto& l : granite.layers) if (l.attention.state_family == StateFamily::Mamba2) { g = &l.attention; break; }
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(recurrent_mixer_lora_values(granite.hidden, *g, 1, true), 57'996u);
  EXPECT_EQ(recurrent_mixer_lora_values(granite.hidden, *g, 2, true), 25'156u);
  const LoraSlots gs = vllm_lora_slots(granite, slots(1, 16), 2, 1, 2);
  EXPECT_NE(gs.formula.find("905,616 recurrent mixer + 39,293,760 MLP"), std::string::npos) << gs.formula;
  // Not read (a GGUF's mixer: no projection geometry): nothing counted, said in the assumption.
  LayerConfig unread;
  unread.attention = m2;
  unread.attention.conv_kernel = 0;
  EXPECT_EQ(recurrent_mixer_lora_values(nh.hidden, unread.attention, 1, true), 0u);
  Model bare = nh;
  bare.layers = {unread};
  EXPECT_NE(vllm_lora_slots(bare, slots(1, 16), 1, 1, 2).assumption.find("projections of 1 recurrent mixers not counted"), std::string::npos);
}

// Mamba1, from Jamba-1.5-Mini's config.json (hidden 4,096; mamba_expand 2: d 8,192; mamba_d_state 16;
// mamba_dt_rank 256; mamba_d_conv 4), one layer on TP 2 (d 4,096 a rank), as vLLM wraps MambaMixer
// (in_proj's two slices packed under one name: one A):
//   in_proj 4,096 + 2 x 4,096 = 12,288; conv1d 4 + 4,096 = 4,100; x_proj 4,096 + 256 + 2 x 16 = 4,384;
//   dt_proj 256 + 4,096 = 4,352; out_proj 4,096 + 4,096 = 8,192 -> 33,316.
TEST(VllmLora, Mamba1SlotsAreWorkedByHand) {
  const Model& jamba = catalogue_model("jamba-1.5-mini");
  const AttentionSpec& m1 = jamba.layers[0].attention;
  ASSERT_EQ(m1.state_family, StateFamily::Mamba1);
  EXPECT_EQ(recurrent_mixer_lora_values(jamba.hidden, m1, 2, true), 33'316u);
}

// The DSA indexer (three ReplicatedLinear, whole on every rank), from DeepSeek-V3.2's config.json
// (hidden 7,168; q_lora_rank 1,536; index_n_heads 64; index_head_dim 128):
//   wq_b A 1,536, B 64 x 128 = 8,192 -> 9,728; wk A 7,168, B 128 -> 7,296; weights_proj A 7,168, B 64
//   -> 7,232: 24,256 a layer. DeepSeek-V3.2 has DeepSeek-V3's geometry plus an indexer in each of its
//   61 layers: one slot of rank 16 on TP 8 is DeepSeek-V3's 10,708,158,464 B + 61 x 24,256 x 16 x 2 B
//   = 10,708,158,464 + 47,347,712 = 10,755,506,176 B.
// GLM-5 (hidden 6,144; q_lora_rank 2,048; 32 index heads of 128): 2,048 + 4,096 = 6,144; 6,144 + 128 =
//   6,272; 6,144 + 32 = 6,176 -> 18,592.
TEST(VllmLora, IndexerSlotsAreWorkedByHand) {
  const Model& v32 = catalogue_model("deepseek-v3.2");
  EXPECT_EQ(indexer_lora_values(v32.hidden, v32.layers[0].attention).total(), 24'256u);
  const LoraSlots s = vllm_lora_slots(v32, slots(1, 16), 8, 1, 2);
  EXPECT_EQ(s.bytes, kDeepseekV3OneSlotRank16Tp8 + 47'347'712u);
  EXPECT_NE(s.assumption.find("indexer's wq_b, wk and weights_proj of 61 layers counted"), std::string::npos) << s.assumption;
  const Model& glm5 = catalogue_model("glm-5");
  EXPECT_EQ(indexer_lora_values(glm5.hidden, glm5.layers[0].attention).total(), 18'592u);
  // DeepSeek-V3 has no indexer.
  EXPECT_EQ(indexer_lora_values(7168, catalogue_model("deepseek-v3").layers[0].attention).total(), 0u);
}

// PEFT's rank_pattern (peft/tuners/lora/config.py): per-module ranks over r, kept in the file's
// order; the adapter's largest rank is max(r, every pattern's rank), PEFT's own bound
// (peft/tuners/lora/model.py add_weighted_adapter). Worked from the file below: max(16, 32, 8, 4, 64) = 64.
TEST(PeftRankPattern, LargestRankIsROrThePatternsLargest) {
  const std::string dir = write_adapter("rank-pattern", R"({"r": 16, "lora_alpha": 32, "target_modules": ["q_proj", "v_proj", "down_proj"],
      "rank_pattern": {"q_proj": 32, "self_attn.q_proj": 8, "^model.layers.0.mlp.down_proj": 4, "layers\\.1\\..*v_proj": 64},
      "alpha_pattern": {"q_proj": 64}})");
  const AdapterConfig c = read_adapter_config(dir, "--lora-modules");
  ASSERT_EQ(c.rank_pattern.size(), 4u);
  EXPECT_EQ(c.rank_pattern[1].first, "self_attn.q_proj");  // the file's order, not sorted
  EXPECT_EQ(c.rank_pattern[3].second, 64u);
  EXPECT_EQ(c.largest_rank(), 64u);
  // Without rank_pattern (or with an empty one) every module has r.
  const AdapterConfig plain = read_adapter_config(write_adapter("no-pattern", R"({"r": 8, "target_modules": ["q_proj"], "rank_pattern": {}})"), "x");
  EXPECT_EQ(plain.largest_rank(), 8u);
  // A rank of 0 is no rank: refused with the rule it breaks.
  EXPECT_THROW(read_adapter_config(write_adapter("bad-pattern", R"({"r": 8, "target_modules": ["q_proj"], "rank_pattern": {"q_proj": 0}})"), "x"), InputError);
}

TEST(VllmLora, PastedCommandsTurnTheSlotsOnOnlyWithEnableLora) {
  EngineRun on = parse_engine_command("vllm serve Qwen/Qwen3-0.6B --enable-lora --max-loras 4 --max-lora-rank 16 --lora-modules a=org/a b=org/b");
  EXPECT_EQ(on.vllm.lora.max_loras, 4u);
  EXPECT_EQ(on.vllm.lora.max_lora_rank, 16u);
  EXPECT_TRUE(on.notes.empty()) << on.notes.front();  // --lora-modules' pairs are not taken for flags
  EXPECT_EQ(on.vllm.lora.adapter_paths, (std::vector<std::string>{"org/a", "org/b"}));
  EXPECT_EQ(parse_engine_command(R"(vllm serve x --enable-lora --lora-modules '{"name": "a", "path": "org/a", "base_model_name": "x"}')").vllm.lora.adapter_paths,
            std::vector<std::string>{"org/a"});
  EXPECT_THROW(parse_engine_command("vllm serve x --enable-lora --lora-modules org/a"), InputError);  // vLLM: "Invalid format for --lora-modules"
  EXPECT_EQ(parse_engine_command("vllm serve Qwen/Qwen3-0.6B --enable-lora").vllm.lora.max_loras, 1u);  // vLLM's default
  EngineRun off = parse_engine_command("vllm serve Qwen/Qwen3-0.6B --max-loras 4");
  EXPECT_EQ(off.vllm.lora.max_loras, 0u);
  ASSERT_EQ(off.notes.size(), 1u);
  EXPECT_THROW(parse_engine_command("vllm serve x --enable-lora --max-lora-rank 24"), InputError);  // not a rank vLLM accepts
  EXPECT_THROW(parse_engine_command("vllm serve x --enable-lora --max-loras 0"), InputError);
}

TEST(VllmLora, TheEngineAnswerShowsTheSlotsAndTheCacheShrinksByThem) {
  const std::string base = "estimate qwen3-0.6b --json --gpu-memory 24GB --engine-command \"vllm serve Qwen/Qwen3-0.6B --max-model-len 8192";
  const CliResult plain = run_cli(base + "\"");
  const CliResult lora = run_cli(base + " --enable-lora --max-loras 4 --max-lora-rank 16\"");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  ASSERT_EQ(lora.exit_code, 0) << lora.output;
  const json a = json::parse(plain.output)["engine"], b = json::parse(lora.output)["engine"];
  const json& lines = b["devices"][0]["lines"];
  uint64_t slots = 0;
  for (const auto& l : lines) {
    if (l["label"].get<std::string>().rfind("LoRA slots", 0) == 0) {
      slots = l["bytes"].get<uint64_t>();
      EXPECT_NE(l["source"].get<std::string>().find("github.com/vllm-project/vllm/blob/main/vllm/lora/"), std::string::npos);
      EXPECT_NE(l["formula"].get<std::string>().find("max_loras 4 x max_lora_rank 16"), std::string::npos);
    }
  }
  EXPECT_EQ(slots, kQwen3_06bFourSlotsRank16);
  // The slots come out of the KV pool: the pool's bytes drop by exactly as much.
  auto kv = [](const json& e) {
    for (const auto& l : e["devices"][0]["lines"]) if (l["kind"] == "kv") return l["bytes"].get<uint64_t>();
    return uint64_t{0};
  };
  EXPECT_EQ(kv(a) - kv(b), kQwen3_06bFourSlotsRank16);
  // The same slots from the CLI's own flags (and the API's parameters of the same names), at the
  // 256 sequences that are vLLM's default max_num_seqs on a card under 70 GiB (the pasted command
  // leaves it out; the scenario's sequences are the --max-num-seqs plan's command passes).
  const CliResult flags = run_cli("estimate qwen3-0.6b --json --gpu-memory 24GB --engine vllm --context 8192 --seqs 256 --max-loras 4 --max-lora-rank 16");
  ASSERT_EQ(flags.exit_code, 0) << flags.output;
  EXPECT_EQ(kv(json::parse(flags.output)["engine"]), kv(b));
  const CliResult bad = run_cli("estimate qwen3-0.6b --engine vllm --max-lora-rank 24");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--max-lora-rank"), std::string::npos) << bad.output;
}

// vLLM refuses at start an adapter whose rank exceeds --max-lora-rank (16 by default): PEFTHelper
// .validate_legal for r, the slot copy for a larger rank_pattern rank. vramcalc reads the
// --lora-modules adapters' adapter_config.json and exits 2 the same way.
TEST(VllmLora, AnAdapterAboveMaxLoraRankIsRefusedAsVllmDoes) {
  const std::string r32 = write_adapter("r32", R"({"r": 32, "lora_alpha": 64, "target_modules": ["q_proj", "v_proj"], "peft_type": "LORA"})");
  const std::string pattern = write_adapter("r16-pattern64", R"({"r": 16, "target_modules": ["q_proj", "down_proj"], "rank_pattern": {"down_proj": 64}})");
  const std::string base = "estimate qwen3-0.6b --json --gpu-memory 24GB --engine-command \"vllm serve Qwen/Qwen3-0.6B --enable-lora --lora-modules ";
  const CliResult refused = run_cli(base + "a=" + r32 + "\"");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("--max-lora-rank"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("LoRA rank 32 is greater than max_lora_rank 16."), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("give --max-lora-rank 32"), std::string::npos) << refused.output;
  const CliResult fits = run_cli(base + "a=" + r32 + " --max-lora-rank 32\"");
  ASSERT_EQ(fits.exit_code, 0) << fits.output;
  bool noted = false;
  const json fits_json = json::parse(fits.output);
  for (const auto& n : fits_json["engine"]["notes"]) noted |= n.get<std::string>().find("1 adapter config(s) read, largest rank 32") != std::string::npos;
  EXPECT_TRUE(noted) << fits.output;
  // r 16 fits the default, but rank_pattern gives down_proj 64: refused at 32, accepted at 64
  // (here from the CLI's own --max-lora-rank, which overrides the pasted command's).
  const CliResult by_pattern = run_cli(base + "a=" + r32 + " b=" + pattern + " --max-lora-rank 32\"");
  EXPECT_EQ(by_pattern.exit_code, 2) << by_pattern.output;
  EXPECT_NE(by_pattern.output.find("rank_pattern"), std::string::npos) << by_pattern.output;
  EXPECT_NE(by_pattern.output.find("give --max-lora-rank 64"), std::string::npos) << by_pattern.output;
  EXPECT_EQ(run_cli(base + "b=" + pattern + "\" --max-lora-rank 64").exit_code, 0);
  // An adapter whose config cannot be read is left unchecked, said in a note.
  const CliResult unread = run_cli(base + "a=" + (vc::testing::scratch_dir() / "vllm-adapters" / "missing").string() + "\"");
  ASSERT_EQ(unread.exit_code, 0) << unread.output;
  EXPECT_NE(unread.output.find("1 --lora-modules adapter config(s) not read"), std::string::npos) << unread.output;
}

// The server reads no file of its own: a local --lora-modules path is left unchecked (a note),
// not refused, since the check only refuses what vLLM refuses.
TEST(VllmLora, TheServerLeavesALocalAdapterUnchecked) {
  const std::string a = write_adapter("server-r32", R"({"r": 32, "target_modules": ["q_proj"]})");
  auto answer = vc::server::call_api("estimate", vc::server::RequestParams::from_pairs(
                                                     {{"model", "qwen3-0.6b"},
                                                      {"gpu-memory", "24GB"},
                                                      {"engine-command", "vllm serve Qwen/Qwen3-0.6B --enable-lora --lora-modules a=" + a}}));
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_NE(answer.body.find("1 --lora-modules adapter config(s) not read"), std::string::npos) << answer.body;
}

// vLLM refuses --enable-lora for a model class without SupportsLoRA ("KimiLinearForCausalLM does
// not support LoRA yet.", vllm/v1/worker/lora_model_runner_mixin.py): Kimi Linear's.
TEST(VllmLora, KimiLinearIsRefusedAsVllmRefusesIt) {
  const CliResult r = run_cli("estimate kimi-linear-48b-a3b --engine vllm --gpu-memory 141GB --max-loras 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("does not support LoRA yet"), std::string::npos) << r.output;
  EXPECT_EQ(run_cli("estimate kimi-linear-48b-a3b --engine vllm --gpu-memory 141GB").exit_code, 0);
  // Falcon's, GPT-NeoX's and GPT-2's classes implement SupportsPP only (models/falcon.py
  // FalconForCausalLM, gpt_neox.py GPTNeoXForCausalLM, gpt2.py GPT2LMHeadModel): refused alike.
  const Model falcon = model_from_config(nlohmann::json::parse(vc::testing::test_config_text("falcon-7b.json")), "falcon-7b config.json");
  ASSERT_TRUE(vllm_lora_refusal(falcon).has_value());
  EXPECT_NE(vllm_lora_refusal(falcon)->find("FalconForCausalLM does not support LoRA yet"), std::string::npos) << *vllm_lora_refusal(falcon);
  for (const char* type : {"gpt_neox", "gpt2"}) {
    SCOPED_TRACE(type);
    Model m;
    m.architecture = type;
    m.family = type;
    EXPECT_TRUE(vllm_lora_refusal(m).has_value());
  }
  EXPECT_FALSE(vllm_lora_refusal(entry("qwen3-0.6b")).has_value());
}

// Phi-2 (microsoft/phi-2 config.json: hidden 2,560, intermediate 10,240, 32 layers of 32 heads of 80,
// MHA): its MLP has no gate (phi.py PhiMLP: fc1 ColumnParallelLinear, fc2 RowParallelLinear, each
// wrapped alone). Per unit of rank and slot, one layer on TP 1:
//   qkv_proj  A 3 x 2,560 = 7,680;  B 96 x 80 = 7,680      o_proj (dense) A 2,560; B 2,560   attention 20,480
//   fc1       A 2,560;              B 10,240                fc2 A 10,240; B 2,560             MLP 25,600
// 46,080 x 32 layers = 1,474,560 values; one slot of rank 16 at 2 B: 47,185,920 B (read as gated, the
// MLP would be 2 x 2,560 + 2 x 10,240 + 10,240 + 2,560 = 38,400: 58,880 a layer, 60,293,120 B).
TEST(VllmLora, ANonGatedMlpIsTwoWrappedLinears) {
  const Model phi2 = model_from_config(vc::testing::phi2(), "phi-2 config.json");
  const LoraSlots s = vllm_lora_slots(phi2, slots(1, 16), 1, 1, 2);
  EXPECT_EQ(s.bytes, 47'185'920u);
  EXPECT_NE(s.assumption.find("PhiMLP"), std::string::npos) << s.assumption;
}
