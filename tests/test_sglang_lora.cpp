// SGLang's LoRA memory pool (src/engines/sglang_lora.cpp): --enable-lora / --lora-paths preallocate
// A and B buffers per target module and layer, out of the token pool's share.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "cli_runner.h"
#include "core/error.h"
#include "engines/engine_run.h"
#include "engines/sglang_lora.h"
#include "engines/sglang_lora_adapters.h"
#include "server/api.h"
#include "server/request_params.h"
#include "test_data.h"

#include <filesystem>
#include <fstream>

using namespace vc;
using json = nlohmann::json;

namespace {

// Worked by hand from Qwen3-0.6B's config.json (hidden 1,024, 28 layers, 16 query / 8 KV heads of
// 128, intermediate 3,072, vocab 151,936, bfloat16), per unit of rank and one slot, one layer on
// TP 1, with the shapes of SGLang's mem_pool.py (A [slots, R x stacked, in], B [slots, out, R]):
//   qkv_proj  A 3 x 1,024 = 3,072; B (16 + 8 + 8) x 128 = 4,096     7,168
//   o_proj    A 16 x 128 = 2,048;  B 1,024                          3,072
//   gate_up   A 2 x 1,024 = 2,048; B 2 x 3,072 = 6,144
//   down      A 3,072;             B 1,024                         12,288
// 22,528 x 28 layers = 630,784; x 8 slots (SGLang's default) x rank 16 x 2 B = 161,480,704 B.
constexpr uint64_t kAllModulesDefaultSlotsRank16 = 161'480'704;
// "all" adds embed_tokens and lm_head (lora_manager.py init_lora_shapes: target_modules.update(EMBEDDING_NAMES)):
// embed_tokens A 151,936 + B 1,024 and lm_head A 1,024 + B 151,936 = 305,920; 630,784 + 305,920 =
// 936,704; x 8 x 16 x 2 B.
constexpr uint64_t kAllDefaultSlotsRank16 = 239'796'224;
// q_proj v_proj only: the packed qkv_proj buffer, 7,168 x 28 = 200,704; x 2 slots x rank 8 x 2 B.
constexpr uint64_t kQkvTwoSlotsRank8 = 6'422'528;
// o_proj + embed_tokens (A 151,936 + B 1,024) + lm_head (A 1,024 + B 151,936): 3,072 x 28 +
// 305,920 = 391,936; x 1 slot x rank 16 x 2 B.
constexpr uint64_t kOprojEmbeddingsOneSlotRank16 = 12'541'952;
// TP 2: 8 query / 4 KV heads and half the MLP width on a rank: qkv 3,072 + 2,048 = 5,120, o_proj
// 1,024 + 1,024 = 2,048, gate_up 2,048 + 3,072, down 1,536 + 1,024: 14,848 x 28 = 415,744 (all 28
// layers on every rank, even with --pp 2); x 8 x 16 x 2 B.
constexpr uint64_t kAllModulesTp2 = 106'430'464;
// "all" at TP 2: 415,744 + embed_tokens (151,936 + 1,024, unsharded) + lm_head (1,024 + 151,936 / 2 =
// 75,968) = 415,744 + 152,960 + 76,992 = 645,696; x 8 x 16 x 2 B.
constexpr uint64_t kAllTp2 = 165'298'176;
// One token of Qwen3-0.6B's pool: 28 layers x 8 KV heads x (128 + 128) x 2 B = 114,688 B, so the
// default pool above is exactly 1,408 tokens.
constexpr uint64_t kPoolTokensTaken = 1'408;

// Qwen3-30B-A3B (hidden 2,048, 48 layers, 32 / 4 heads of 128, 128 experts of width 768, no shared
// experts, no router slot in SGLang): attention A 6,144 + B 5,120 + A 4,096 + B 2,048 = 17,408;
// experts 128 x (A 4,096 + B 1,536 + A 768 + B 2,048) = 1,081,344; 1,098,752 x 48 = 52,740,096;
// x 1 slot x rank 8 x 2 B. "all" adds embed_tokens (151,936 + 2,048) and lm_head (2,048 + 151,936):
// 52,740,096 + 307,968 = 53,048,064; x 8 x 2 B.
constexpr uint64_t kMoeOneSlotRank8 = 848'769'024;

// DeepSeek-V3 at TP 8, from its config.json (hidden 7,168, 61 layers of which the first 3
// (first_k_dense_replace) dense, 128 heads, q_lora_rank 1,536, kv_lora_rank 512, qk_nope 128,
// qk_rope 64, v_head_dim 128, intermediate 18,432, 256 routed experts of 2,048 and 1 shared,
// bfloat16), per unit of rank and slot, one layer on one rank (lora/utils.py get_default_hidden_dim,
// mem_pool.py get_lora_A_shape / get_lora_B_shape):
//   fused_qkv_a_proj_with_mqa (replicated, stacked 2): A 2 x 7,168 = 14,336; B 1,536 + 512 + 64 = 2,112   16,448
//   q_b_proj   A 1,536; B 128 / 8 = 16 heads x (128 + 64) = 3,072                                      4,608
//   kv_b_proj  A 512;   B 16 x (128 + 128) = 4,096                                                     4,608
//   o_proj     A 16 x 128 = 2,048; B 7,168                                                             9,216
// latent 34,880 x 61 layers = 2,127,680.
// MLP: experts on all 61 layers, 256 x (gate_up A 14,336 + B 2 x 2,048 / 8 = 512; down A 256 + B 7,168)
// = 256 x 22,272 = 5,701,632 -> 347,799,552; the dense buffers at intermediate 18,432 on the 3 dense
// layers (A 14,336 + B 4,608 + A 2,304 + B 7,168 = 28,416 -> 85,248) and at the shared expert's
// 2,048 on the 58 MoE layers (14,848 + 7,424 = 22,272 -> 1,291,776): 349,176,576.
// "all" (auto_detect_lora_target_modules: the latent projections, o_proj, gate_up, down, and
// embed_tokens A 129,280 + B 7,168 = 136,448 and lm_head A 7,168 + B 129,280 / 8 = 16,160, 23,328):
// 2,127,680 + 349,176,576 + 159,776 = 351,464,032; x 4 slots x rank 16 x 2 B.
constexpr uint64_t kDeepseekV3AllTp8 = 44'987'396'096;
constexpr uint64_t kDeepseekV3EmbeddingsTp8 = 159'776;  // per unit of rank and slot
// Before the latent projections were counted, only the MLP: 349,176,576 x 4 x 16 x 2 B.
constexpr uint64_t kDeepseekV3MlpOnlyTp8 = 44'694'601'728;
// q_a_proj kv_a_proj_with_mqa q_b_proj kv_b_proj o_proj: the latent 2,127,680 x 1 slot x rank 8 x 2 B.
constexpr uint64_t kDeepseekV3LatentOneSlotRank8 = 34'042'880;
// DeepSeek-V3.2's DSA indexer (index_n_heads 64, index_head_dim 128), whole on every rank
// (REPLICATED_LINEAR_LORA_NAMES): wq_b A 1,536 + B 64 x 128 = 8,192 (9,728), wk A 7,168 + B 128
// (7,296), weights_proj A 7,168 + B 64 (7,232): 24,256 x 61 = 1,479,616; x 1 slot x rank 8 x 2 B.
constexpr uint64_t kDeepseekV32IndexerOneSlotRank8 = 23'673'856;

// Two PEFT adapters, rank 8 on q_proj v_proj and rank 16 on o_proj: SGLang takes r = 16 (the
// largest) and the union of the modules, normalized: qkv_proj and o_proj
// (lora_manager.py LoRAManager.init_lora_shapes). Qwen3-0.6B, per layer and unit of rank (the
// shapes above): qkv 7,168 + o 3,072 = 10,240; x 28 layers = 286,720; x 2 slots x 16 x 2 B.
constexpr uint64_t kTwoAdaptersTwoSlots = 18'350'080;

const Model& model(const char* id) { return *Catalogue::builtin().find(id); }

// An adapter folder holding only `config` as its adapter_config.json (what SGLang reads first).
std::string write_adapter(const std::string& name, const std::string& config) {
  const std::filesystem::path dir = vc::testing::scratch_dir() / "sglang-adapters" / name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "adapter_config.json") << config;
  return dir.string();
}

SglangLoraSettings settings(uint64_t slots, uint64_t rank, std::vector<std::string> targets) {
  SglangLoraSettings s;
  s.max_loras_per_batch = slots;
  s.max_lora_rank = rank;
  set_sglang_lora_targets(s, targets);
  return s;
}

}  // namespace

TEST(SglangLora, PoolOfADenseModelIsWorkedByHand) {
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), settings(8, 16, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}), 1, 2).bytes,
            kAllModulesDefaultSlotsRank16);
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), settings(2, 8, {"q_proj", "v_proj"}), 1, 2).bytes, kQkvTwoSlotsRank8);
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), settings(1, 16, {"o_proj", "embed_tokens", "lm_head"}), 1, 2).bytes, kOprojEmbeddingsOneSlotRank16);
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), settings(8, 16, {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"}), 2, 2).bytes, kAllModulesTp2);
  // Prefixed PEFT names normalize as SGLang's do; no target list means every decoder linear module.
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), settings(2, 8, {"self_attn.q_proj", "model.layers.0.self_attn.k_proj"}), 1, 2).bytes, kQkvTwoSlotsRank8);
  SglangLoraSettings untargeted;
  untargeted.max_loras_per_batch = 8;
  untargeted.max_lora_rank = 16;
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), untargeted, 1, 2).bytes, kAllModulesDefaultSlotsRank16);
  untargeted.max_loras_per_batch = 0;
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), untargeted, 1, 2).bytes, 0u);
}

TEST(SglangLora, PoolOfAMoeModelHasPerExpertBuffersAndNoRouter) {
  EXPECT_EQ(sglang_lora_pool(model("qwen3-30b-a3b"), settings(1, 8, {"all"}), 1, 2).bytes, kMoeOneSlotRank8);
}

TEST(SglangLora, LatentAttentionProjectionsAreCountedAsSglangSizesThem) {
  const Model& v3 = model("deepseek-v3");
  const LoraSlots all = sglang_lora_pool(v3, settings(4, 16, {"all"}), 8, 2);
  EXPECT_EQ(all.bytes, kDeepseekV3AllTp8);
  EXPECT_EQ(all.bytes - kDeepseekV3MlpOnlyTp8, (61u * 34'880u + kDeepseekV3EmbeddingsTp8) * 4u * 16u * 2u);  // the latent projections and embeddings
  EXPECT_NE(all.assumption.find("latent (MLA) projections of 61 layers counted"), std::string::npos) << all.assumption;
  EXPECT_EQ(sglang_lora_pool(v3, settings(1, 8, {"q_a_proj", "kv_a_proj_with_mqa", "q_b_proj", "kv_b_proj", "o_proj"}), 8, 2).bytes,
            kDeepseekV3LatentOneSlotRank8);
  // PEFT's prefixed names normalize the same way; the packed name is accepted too.
  EXPECT_EQ(sglang_lora_pool(v3, settings(1, 8, {"self_attn.q_a_proj", "fused_qkv_a_proj_with_mqa", "model.layers.0.self_attn.q_b_proj", "kv_b_proj", "o_proj"}), 8, 2)
                .bytes,
            kDeepseekV3LatentOneSlotRank8);
  // An MLA model has no qkv_proj: q/k/v_proj alone add nothing, and the line says why.
  const LoraSlots qkv = sglang_lora_pool(v3, settings(1, 8, {"q_proj", "k_proj", "v_proj"}), 8, 2);
  EXPECT_EQ(qkv.bytes, 0u);
  EXPECT_NE(qkv.assumption.find("qkv_proj not counted on 61 latent (MLA) layers"), std::string::npos) << qkv.assumption;
  // Without an indexer, the indexer's names add nothing either.
  EXPECT_EQ(sglang_lora_pool(v3, settings(1, 8, {"wq_b", "wk", "weights_proj"}), 8, 2).bytes, 0u);
}

TEST(SglangLora, TheDsaIndexerIsCountedWholeOnEveryRank) {
  const Model& v32 = model("deepseek-v3.2");
  // Replicated: the same on TP 1 and TP 8.
  EXPECT_EQ(sglang_lora_pool(v32, settings(1, 8, {"wq_b", "wk", "weights_proj"}), 8, 2).bytes, kDeepseekV32IndexerOneSlotRank8);
  EXPECT_EQ(sglang_lora_pool(v32, settings(1, 8, {"indexer.wq_b", "indexer.wk", "indexer.weights_proj"}), 1, 2).bytes, kDeepseekV32IndexerOneSlotRank8);
  // "all" adds the indexer to what DeepSeek-V3 has (V3.2 has V3's geometry): 24,256 x 61 x 4 x 16 x 2 B more.
  EXPECT_EQ(sglang_lora_pool(v32, settings(4, 16, {"all"}), 8, 2).bytes, kDeepseekV3AllTp8 + kDeepseekV32IndexerOneSlotRank8 * 8);
}

TEST(SglangLora, PastedCommandsTurnThePoolOnAsSglangDoes) {
  const std::string launch = "python -m sglang.launch_server --model-path Qwen/Qwen3-0.6B ";
  EngineRun paths = parse_engine_command(launch + "--lora-paths a=org/a b=org/b --max-loras-per-batch 4 --max-loaded-loras 4");
  EXPECT_EQ(paths.sglang.lora.max_loras_per_batch, 4u);  // --lora-paths alone turns LoRA on
  EXPECT_EQ(paths.sglang.lora.adapters, 2u);
  EXPECT_FALSE(paths.sglang.lora.max_lora_rank.has_value());
  EXPECT_TRUE(paths.notes.empty()) << paths.notes.front();  // the pairs are not taken for flags
  EngineRun given = parse_engine_command(launch + "--enable-lora --max-lora-rank 64 --lora-target-modules q_proj k_proj v_proj o_proj --port 30000");
  EXPECT_EQ(given.sglang.lora.max_loras_per_batch, 8u);  // SGLang's default
  EXPECT_EQ(*given.sglang.lora.max_lora_rank, 64u);
  EXPECT_EQ(given.sglang.lora.target_modules, (std::set<std::string>{"qkv_proj", "o_proj"}));
  EngineRun off = parse_engine_command(launch + "--max-loras-per-batch 4");
  EXPECT_EQ(off.sglang.lora.max_loras_per_batch, 0u);
  ASSERT_EQ(off.notes.size(), 1u);
  // What SGLang refuses: no adapters and not both the rank and the modules; "all" beside others.
  EXPECT_THROW(parse_engine_command(launch + "--enable-lora"), InputError);
  EXPECT_THROW(parse_engine_command(launch + "--enable-lora --max-lora-rank 16"), InputError);
  EXPECT_THROW(parse_engine_command(launch + "--enable-lora --max-lora-rank 16 --lora-target-modules all q_proj"), InputError);
  EXPECT_THROW(parse_engine_command(launch + "--enable-lora --max-lora-rank 0 --lora-target-modules all"), InputError);
}

TEST(SglangLora, TheEngineAnswerShowsThePoolAndTheTokenPoolShrinksByIt) {
  const std::string base = "estimate qwen3-0.6b --json --gpu-memory 24GB --engine-command \"python -m sglang.launch_server --model-path Qwen/Qwen3-0.6B "
                           "--context-length 8192 --mem-fraction-static 0.8";
  const CliResult plain = run_cli(base + "\"");
  const CliResult lora = run_cli(base + " --enable-lora --max-lora-rank 16 --lora-target-modules q_proj k_proj v_proj o_proj gate_proj up_proj down_proj\"");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  ASSERT_EQ(lora.exit_code, 0) << lora.output;
  const json a = json::parse(plain.output)["engine"], b = json::parse(lora.output)["engine"];
  uint64_t pool = 0;
  for (const auto& l : b["devices"][0]["lines"]) {
    if (l["label"].get<std::string>().rfind("LoRA memory pool", 0) == 0) {
      pool = l["bytes"].get<uint64_t>();
      EXPECT_EQ(l["kind"], "weights");
      EXPECT_NE(l["source"].get<std::string>().find("github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/mem_pool.py"), std::string::npos);
      EXPECT_NE(l["formula"].get<std::string>().find("max_loras_per_batch 8 x max_lora_rank 16"), std::string::npos);
    }
  }
  EXPECT_EQ(pool, kAllModulesDefaultSlotsRank16);
  EXPECT_EQ(a["kv_tokens"].get<uint64_t>() - b["kv_tokens"].get<uint64_t>(), kPoolTokensTaken);
  // The lines still add up to the card.
  EXPECT_EQ(b["devices"][0]["total_bytes"], a["devices"][0]["total_bytes"]);
}

TEST(SglangLora, LoraPathEntriesInEachFormSglangAccepts) {
  // server_args.py --lora-paths: <PATH> | <NAME>=<PATH> | JSON {"lora_name", "lora_path", "pinned"}.
  EXPECT_EQ(sglang_lora_path_entry("/a/b"), "/a/b");
  EXPECT_EQ(sglang_lora_path_entry("sql=org/sql-lora"), "org/sql-lora");
  EXPECT_EQ(sglang_lora_path_entry(R"({"lora_name": "x", "lora_path": "org/x", "pinned": true})"), "org/x");
  EXPECT_THROW(sglang_lora_path_entry(R"({"lora_name": "x"})"), InputError);
  EXPECT_THROW(sglang_lora_path_entry("name="), InputError);
  // A path that is not a folder is a Hub repository id for SGLang (snapshot_download); the server
  // never looks at its own disk, so only ORG/REPO and remote specs pass there.
  EXPECT_EQ(sglang_adapter_spec("org/x", AdapterReads::RemoteOnly), "hf:org/x");
  EXPECT_EQ(sglang_adapter_spec("hf:org/x@main", AdapterReads::RemoteOnly), "hf:org/x@main");
  EXPECT_EQ(sglang_adapter_spec("/etc/passwd", AdapterReads::RemoteOnly), "/etc/passwd");
  const std::string local = write_adapter("spec", R"({"r": 8, "target_modules": ["q_proj"]})");
  EXPECT_EQ(sglang_adapter_spec(local, AdapterReads::AnyPath), local);
}

TEST(SglangLora, WithoutRankOrModulesTheAdaptersGiveThemAsSglangInfersThem) {
  const std::string a = write_adapter("rank8", R"({"r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"], "peft_type": "LORA"})");
  const std::string b = write_adapter("rank16", R"({"r": 16, "lora_alpha": 32, "target_modules": ["o_proj"]})");
  std::optional<EngineRun> run = parse_engine_command("python -m sglang.launch_server --model-path Qwen/Qwen3-0.6B --lora-paths first=" + a + " " + b +
                                                      " --max-loras-per-batch 2");
  EXPECT_TRUE(sglang_lora_reads_adapters(run->sglang.lora));
  read_command_lora_adapters(run, AdapterReads::AnyPath);
  const SglangLoraSettings& l = run->sglang.lora;
  ASSERT_TRUE(l.max_lora_rank.has_value());
  EXPECT_EQ(*l.max_lora_rank, 16u);
  EXPECT_EQ(l.target_modules, (std::set<std::string>{"qkv_proj", "o_proj"}));
  EXPECT_TRUE(l.rank_from_adapters && l.targets_from_adapters);
  const LoraSlots pool = sglang_lora_pool(model("qwen3-0.6b"), l, 1, 2);
  EXPECT_EQ(pool.bytes, kTwoAdaptersTwoSlots);
  EXPECT_NE(pool.assumption.find("largest r of the 2 --lora-paths adapters"), std::string::npos) << pool.assumption;
  // Given flags win: the rank from --max-lora-rank, nothing read for it.
  std::optional<EngineRun> given = parse_engine_command("sglang serve --model-path Qwen/Qwen3-0.6B --lora-paths " + a +
                                                        " --max-lora-rank 32 --lora-target-modules q_proj");
  EXPECT_FALSE(sglang_lora_reads_adapters(given->sglang.lora));
}

TEST(SglangLora, AnUnreadableAdapterWithoutARankIsRefusedNamingTheFlag) {
  const std::string launch = "python -m sglang.launch_server --model-path Qwen/Qwen3-0.6B ";
  const std::string missing = (vc::testing::scratch_dir() / "sglang-adapters" / "none-here").string();
  std::optional<EngineRun> run = parse_engine_command(launch + "--lora-paths " + missing);
  try {
    read_command_lora_adapters(run, AdapterReads::AnyPath);
    ADD_FAILURE() << "an adapter that cannot be read leaves SGLang's rank unknown";
  } catch (const InputError& e) {
    EXPECT_EQ(e.subject(), "--max-lora-rank");
  }
  // Not read at all (the engine answer asked without reading): the pool refuses, naming the flag too.
  SglangLoraSettings unread;
  unread.max_loras_per_batch = 8;
  unread.adapter_paths = {missing};
  EXPECT_THROW(sglang_lora_pool(model("qwen3-0.6b"), unread, 1, 2), InputError);
  // The CLI: exit 2 with the flag named.
  const CliResult cli = run_cli("estimate qwen3-0.6b --gpu-memory 24GB --engine-command \"" + launch + "--lora-paths " + missing + "\"");
  EXPECT_EQ(cli.exit_code, 2) << cli.output;
  EXPECT_NE(cli.output.find("--max-lora-rank"), std::string::npos) << cli.output;
  // With the rank given, an unread adapter leaves the targets to the largest set, and says so.
  std::optional<EngineRun> ranked = parse_engine_command(launch + "--lora-paths " + missing + " --max-lora-rank 16");
  read_command_lora_adapters(ranked, AdapterReads::AnyPath);
  EXPECT_EQ(ranked->sglang.lora.unread_adapters, 1u);
  const LoraSlots pool = sglang_lora_pool(model("qwen3-0.6b"), ranked->sglang.lora, 1, 2);
  EXPECT_EQ(pool.bytes, kAllModulesDefaultSlotsRank16);
  EXPECT_NE(pool.assumption.find("1 adapter config(s) not read"), std::string::npos) << pool.assumption;
}

TEST(SglangLora, AShorthandTargetListNeedsTheFlagAsSglangRequires) {
  // lora_manager.py: target_modules "all-linear" cannot be resolved; SGLang asks for --lora-target-modules.
  const std::string a = write_adapter("all-linear", R"({"r": 8, "target_modules": "all-linear"})");
  std::optional<EngineRun> run = parse_engine_command("sglang serve --model-path Qwen/Qwen3-0.6B --lora-paths " + a);
  try {
    read_command_lora_adapters(run, AdapterReads::AnyPath);
    ADD_FAILURE() << "a shorthand target list needs --lora-target-modules";
  } catch (const InputError& e) {
    EXPECT_EQ(e.subject(), "--lora-target-modules");
  }
  std::optional<EngineRun> named = parse_engine_command("sglang serve --model-path Qwen/Qwen3-0.6B --lora-paths " + a + " --lora-target-modules all");
  read_command_lora_adapters(named, AdapterReads::AnyPath);
  EXPECT_EQ(*named->sglang.lora.max_lora_rank, 8u);
}

TEST(SglangLora, TheServerReadsNoLocalAdapter) {
  const std::string a = write_adapter("server", R"({"r": 8, "target_modules": ["q_proj"]})");
  auto answer = vc::server::call_api("estimate", vc::server::RequestParams::from_pairs(
                                                     {{"model", "qwen3-0.6b"},
                                                      {"gpu-memory", "24GB"},
                                                      {"engine-command", "sglang serve --model-path Qwen/Qwen3-0.6B --lora-paths " + a}}));
  EXPECT_EQ(answer.status, 400) << answer.body;
  const json j = json::parse(answer.body);
  EXPECT_EQ(j["error"]["field"], "engine-command") << answer.body;
  EXPECT_NE(j["error"]["message"].get<std::string>().find("--lora-paths"), std::string::npos) << answer.body;
}

// Qwen3-Next-80B-A3B from its config.json (hidden 2,048, 48 layers of which 12 attention and 36 Gated
// DeltaNet, 16 query / 2 KV heads of 256, vocab 151,936). SGLang's Qwen3NextForCausalLM has no
// get_hidden_dim, so lora/utils.py get_default_hidden_dim sizes qkv_proj / o_proj from the config on
// every one of the 48 layers (mem_pool.py init_buffers), without the output gate. At TP 4, per unit of
// rank and slot, one layer:
//   qkv_proj  A 3 x 2,048 = 6,144; B 16 / 4 = 4 query heads x 256 = 1,024 + one replicated K and V
//             head (2 KV heads < 4 ranks: _column_parallel_lora_b_per_rank_dim) 256 + 256 = 512   7,680
//   o_proj    A 4 x 256 = 1,024; B 2,048                                                       3,072
// 10,752 x 48 layers = 516,096; x 1 slot x rank 16 x 2 B.
constexpr uint64_t kQwen3NextAttentionTp4 = 16'515'072;
// Before this change only the 12 attention layers were counted: 10,752 x 12 x 16 x 2 B.
constexpr uint64_t kQwen3NextAttentionTp4AttentionLayersOnly = 4'128'768;

// Qwen3.5-27B from its config.json (hidden 5,120, 64 layers of which 16 attention and 48 Gated
// DeltaNet, 24 query / 4 KV heads of 256 with attn_output_gate, intermediate 17,408, linear 16 key
// heads of 128 (2,048) and 48 value heads of 128 (6,144), vocab 248,320), "all" at TP 1: what
// Qwen3_5ForCausalLM.get_hidden_dim gives, for every one of the 64 layers, per unit of rank and slot:
//   qkv_proj      A 3 x 5,120 = 15,360; B (2 x 24 + 2 x 4) x 256 = 14,336           29,696
//   o_proj        A 24 x 256 = 6,144;   B 5,120                                     11,264
//   in_proj_qkvz  A 4 x 5,120 = 20,480 (stacked 4); B 2 x 2,048 + 2 x 6,144 = 16,384  36,864
//   out_proj      A 6,144; B 5,120                                                  11,264
//   gate_up_proj  A 2 x 5,120 = 10,240; B 2 x 17,408 = 34,816                       45,056
//   down_proj     A 17,408; B 5,120                                                 22,528
// 156,672 x 64 = 10,027,008; embed_tokens (248,320 + 5,120) + lm_head (5,120 + 248,320) = 506,880;
// 10,533,888 x 1 slot x rank 8 x 2 B.
constexpr uint64_t kQwen35AllOneSlotRank8 = 168'542'208;

// Nemotron-H-56B from its config.json (hidden 8,192, 118 layers: 54 Mamba2, 10 attention, 54 MLP;
// 64 query / 8 KV heads of 128; mamba_num_heads 256 x mamba_head_dim 64 = d_inner 16,384), q/k/v/o and
// the Mamba mixer's in_proj and out_proj at TP 8, as NemotronHForCausalLM.get_hidden_dim sizes them on
// every one of the 118 layers, per unit of rank and slot:
//   qkv_proj  A 3 x 8,192 = 24,576; B (64 / 8 + 2 x 8 / 8) x 128 = 1,280                 25,856
//   o_proj    A 8 x 128 = 1,024; B 8,192                                               9,216
//   in_proj   A 2 x 8,192 = 16,384 (stacked 2); B 2 x 16,384 / 8 = 4,096               20,480
//   out_proj  A 16,384 / 8 = 2,048 (row-parallel); B 8,192                            10,240
// 65,792 x 118 = 7,763,456; x 1 slot x rank 16 x 2 B.
constexpr uint64_t kNemotronHMixersTp8 = 248'430'592;
// "all" on Nemotron-H-56B at TP 8 (auto_detect_lora_target_modules plus supported_lora_modules: qkv_proj,
// o_proj, in_proj, out_proj, up_proj, gate_up_proj, down_proj, fc1_latent_proj, fc2_latent_proj, and
// embed_tokens / lm_head), on every layer:
//   the four above 65,792 + fc1 / fc2_latent_proj (replicated, no moe_latent_size: hidden -> hidden)
//   2 x (8,192 + 8,192) = 32,768: 98,560 x 118 = 11,630,080
//   down_proj A 32,768 / 8 = 4,096, B 8,192: 12,288; up_proj (stacked 1) A 8,192, B 4,096: 12,288;
//   gate_up_proj A 2 x 8,192 = 16,384, B 2 x 16,384 / 8 = 4,096 on the 54 Mamba layers (20,480), 2 x
//   32,768 / 8 = 8,192 on the other 64 (24,576): 54 x 45,056 + 64 x 49,152 = 5,578,752
//   embed_tokens 131,072 + 8,192 = 139,264; lm_head 8,192 + 131,072 / 8 = 24,576: 163,840
// 17,372,672 x 1 slot x rank 16 x 2 B.
constexpr uint64_t kNemotronHAllTp8 = 555'925'504;

TEST(SglangLora, HybridModelsGetAttentionBuffersOnEveryLayer) {
  const Model& next = model("qwen3-next-80b-a3b");
  const LoraSlots qkvo = sglang_lora_pool(next, settings(1, 16, {"q_proj", "k_proj", "v_proj", "o_proj"}), 4, 2);
  EXPECT_EQ(qkvo.bytes, kQwen3NextAttentionTp4);
  EXPECT_EQ(qkvo.bytes, kQwen3NextAttentionTp4AttentionLayersOnly * 4);  // 48 layers where 12 were counted
  EXPECT_NE(qkvo.assumption.find("the attention buffers on all 48 layers, the 36 recurrent ones included"), std::string::npos) << qkvo.assumption;
  EXPECT_EQ(qkvo.assumption.find("not counted"), std::string::npos) << qkvo.assumption;
}

TEST(SglangLora, GatedDeltaNetModulesAreSizedAsQwen35SizesThem) {
  const LoraSlots all = sglang_lora_pool(model("qwen3.5-27b"), settings(1, 8, {"all"}), 1, 2);
  EXPECT_EQ(all.bytes, kQwen35AllOneSlotRank8);
  EXPECT_NE(all.assumption.find("in_proj_qkvz and out_proj"), std::string::npos) << all.assumption;
  // PEFT's split names normalize to the packed module (get_normalized_target_modules): in_proj_qkv and
  // in_proj_z alone are the in_proj_qkvz buffer, 36,864 x 64 layers x 1 x 8 x 2 B.
  EXPECT_EQ(sglang_lora_pool(model("qwen3.5-27b"), settings(1, 8, {"linear_attn.in_proj_qkv", "in_proj_z"}), 1, 2).bytes, 36'864u * 64u * 16u);
}

TEST(SglangLora, Mamba2ModulesAreSizedAsNemotronHSizesThem) {
  const Model& nh = model("nemotron-h-56b");
  EXPECT_EQ(sglang_lora_pool(nh, settings(1, 16, {"q_proj", "k_proj", "v_proj", "o_proj", "in_proj", "out_proj"}), 8, 2).bytes, kNemotronHMixersTp8);
  const LoraSlots all = sglang_lora_pool(nh, settings(1, 16, {"all"}), 8, 2);
  EXPECT_EQ(all.bytes, kNemotronHAllTp8);
  EXPECT_NE(all.assumption.find("the MLP buffers on all 118 layers by layer type"), std::string::npos) << all.assumption;
}

TEST(SglangLora, MixerModulesSglangCannotSizeAreRefusedNamingTheFlag) {
  auto refused = [](const char* id, std::vector<std::string> targets) {
    try {
      sglang_lora_pool(model(id), settings(1, 16, std::move(targets)), 1, 2);
    } catch (const InputError& e) {
      return e.subject() == "--lora-target-modules";
    }
    return false;
  };
  // Qwen3-Next, Granite 4.0-H: no get_hidden_dim, and the default knows no mixer module; "all" finds
  // in_proj_qkvz / in_proj and out_proj in the model (auto_detect_lora_target_modules).
  EXPECT_TRUE(refused("qwen3-next-80b-a3b", {"all"}));
  EXPECT_TRUE(refused("qwen3-next-80b-a3b", {"in_proj_qkvz"}));
  EXPECT_TRUE(refused("qwen3-next-80b-a3b", {"out_proj"}));
  EXPECT_TRUE(refused("granite-4.0-h-small", {"all"}));
  EXPECT_TRUE(refused("granite-4.0-h-small", {"in_proj", "out_proj"}));
  // Qwen3.5 sizes in_proj_qkvz but not in_proj; Nemotron-H in_proj but not in_proj_qkvz.
  EXPECT_TRUE(refused("qwen3.5-27b", {"in_proj"}));
  EXPECT_TRUE(refused("nemotron-h-56b", {"in_proj_qkvz"}));
  EXPECT_FALSE(refused("qwen3.5-27b", {"in_proj_qkvz"}));
  // Modules the adapters named: the refusal names --lora-paths.
  SglangLoraSettings from_adapters = settings(1, 16, {"q_proj", "in_proj_qkvz"});
  from_adapters.targets_from_adapters = true;
  try {
    sglang_lora_pool(model("qwen3-next-80b-a3b"), from_adapters, 1, 2);
    ADD_FAILURE() << "Qwen3-Next cannot size in_proj_qkvz";
  } catch (const InputError& e) {
    EXPECT_EQ(e.subject(), "--lora-paths");
  }
  // The CLI: exit 2 with the flag named.
  const CliResult cli = run_cli("estimate qwen3-next-80b-a3b --gpu 'H100 SXM x4' --engine-command \"python -m sglang.launch_server --model-path "
                                "Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4 --enable-lora --max-lora-rank 16 --lora-target-modules all\"");
  EXPECT_EQ(cli.exit_code, 2) << cli.output;
  EXPECT_NE(cli.output.find("--lora-target-modules"), std::string::npos) << cli.output;
  EXPECT_NE(cli.output.find("get_default_hidden_dim"), std::string::npos) << cli.output;
}

TEST(SglangLora, AllAddsTheEmbeddingAndTheHead) {
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), settings(8, 16, {"all"}), 1, 2).bytes, kAllDefaultSlotsRank16);
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), settings(8, 16, {"all"}), 2, 2).bytes, kAllTp2);
  // The same as naming every module and both embeddings.
  EXPECT_EQ(sglang_lora_pool(model("qwen3-0.6b"), settings(8, 16, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "embed_tokens", "lm_head"}), 1, 2).bytes,
            kAllDefaultSlotsRank16);
  const LoraSlots all = sglang_lora_pool(model("qwen3-0.6b"), settings(8, 16, {"all"}), 1, 2);
  EXPECT_NE(all.assumption.find("embed_tokens and lm_head"), std::string::npos) << all.assumption;
  // Through the CLI, the line carries it.
  const CliResult cli = run_cli("estimate qwen3-0.6b --json --gpu-memory 24GB --engine-command \"python -m sglang.launch_server --model-path Qwen/Qwen3-0.6B "
                                "--context-length 8192 --mem-fraction-static 0.8 --enable-lora --max-lora-rank 16 --lora-target-modules all\"");
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  const json answer = json::parse(cli.output);
  uint64_t pool = 0;
  for (const auto& l : answer["engine"]["devices"][0]["lines"])
    if (l["label"].get<std::string>().rfind("LoRA memory pool", 0) == 0) pool = l["bytes"].get<uint64_t>();
  EXPECT_EQ(pool, kAllDefaultSlotsRank16);
}
