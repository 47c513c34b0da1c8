// Public engine logs (tests/data/engine-logs.json): the pasted-log reader and validate over the
// stored cases. Printed figures are the engines' own (each case names its public source).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "engines/engine_log.h"
#include "engines/validate.h"
#include "engines/vllm_budget.h"
#include "engines/vllm_graphs.h"

using namespace vc;

namespace {

const std::string kLogs = std::string(VRAMCALC_TEST_DATA_DIR) + "/engine-logs.json";

nlohmann::json case_by_id(const std::string& id) {
  std::ifstream in(kLogs);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto doc = nlohmann::json::parse(ss.str());
  for (const auto& c : doc["cases"]) {
    if (c["id"] == id) return c;
  }
  throw std::runtime_error("no case " + id);
}

std::string raw_log(const nlohmann::json& c) {
  std::string text;
  for (const auto& line : c["raw"]) text += line.get<std::string>() + "\n";
  return text;
}

const ValidationRow* find_row(const std::vector<ValidationRow>& rows, const std::string& id, const std::string& figure) {
  for (const auto& r : rows) {
    if (r.case_id == id && r.figure == figure) return &r;
  }
  return nullptr;
}

// The validation rows of the public-log file, computed once for the tests that read them.
const std::vector<ValidationRow>& engine_log_rows() {
  static const std::vector<ValidationRow> rows = validate_engine_logs(kLogs);
  return rows;
}

// Case `id`'s SGLang token pool from the free memory its log printed: SGLang's figure as printed
// and ours as worked out by hand (to the token), within the 3% target.
const ValidationRow* expect_sglang_pool_from_free_memory(const std::string& id, double printed, double by_hand) {
  const ValidationRow* r = find_row(engine_log_rows(), id, "sglang token pool (from printed free memory)");
  EXPECT_NE(r, nullptr) << id;
  if (!r) return nullptr;
  EXPECT_DOUBLE_EQ(r->printed, printed) << id;
  EXPECT_NEAR(r->ours, by_hand, 1) << id;
  EXPECT_TRUE(r->met) << id;
  return r;
}

}  // namespace

// vllm-llama31-8b-h100-tp1-mml8192 (llm-d-planner's vLLM 0.19 log): the settings come from the
// "non-default args" line, the card from "Requested memory: 0.95 (util), 75.23 GiB" (79.19 GiB).
TEST(EngineLog, VllmLogSettingsAndFigures) {
  EngineLog log = parse_engine_log(raw_log(case_by_id("vllm-llama31-8b-h100-tp1-mml8192")));
  EXPECT_EQ(log.engine, "vllm");
  EXPECT_EQ(log.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(log.run.vllm.kv.max_model_len, 8192u);
  EXPECT_DOUBLE_EQ(log.run.vllm.gpu_memory_utilization, 0.95);
  ASSERT_TRUE(log.card_bytes.has_value());
  EXPECT_NEAR(static_cast<double>(*log.card_bytes) / 1073741824.0, 79.19, 0.01);
  EXPECT_DOUBLE_EQ(log.printed.at("kv_tokens"), 476016);
  EXPECT_DOUBLE_EQ(log.printed.at("activation_gib"), 1.89);
  Model m = log_model(log, "");
  auto rows = compare_engine_log(log, m, std::nullopt);
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) EXPECT_TRUE(r.met) << r.figure << ": printed " << r.printed << ", ours " << r.ours;
}

TEST(EngineLog, SglangLineAndRefusals) {
  EngineLog log = parse_engine_log(raw_log(case_by_id("sglang-21348-qwen3-235b-a22b-fp8-4xh100")));
  EXPECT_EQ(log.engine, "sglang");
  EXPECT_DOUBLE_EQ(log.printed.at("kv_tokens"), 367404);
  EXPECT_THROW(parse_engine_log("hello world\n"), InputError);
  EXPECT_THROW(parse_engine_log("INFO vllm started, nothing printed\n"), InputError);
  EXPECT_THROW(log_model(log, ""), InputError);  // this log names no model: --model is asked for
}

// What a pasted SGLang log says beyond its figures: four L4s where custom_all_reduce.py printed
// "not supported on more than two PCIe-only GPUs" are joined by PCIe (0.13 GiB of communicators, not
// 2 GiB); a log without "Load weight begin" had avail mem + mem usage of the "end" line free before
// the weights (19.08 + 3.76 = 22.84 GiB on the two RTX 4090s of ktransformers #1870), and a hybrid
// model's "Mamba Cache is allocated. max_mamba_cache_size: 82" is its state slots.
TEST(EngineLog, SglangLinkAndStateSlotsFromTheLog) {
  const EngineLog l4 = parse_engine_log(raw_log(case_by_id("sglang-llmsinclouds-qwq32b-4xl4-tp4")));
  EXPECT_EQ(l4.run.sglang.gpu_link, GpuLink::Pcie);
  const EngineLog hybrid = parse_engine_log(raw_log(case_by_id("sglang-ktransformers1870-qwen35-397b-fp8-2x4090")));
  EXPECT_EQ(hybrid.run.sglang.gpu_link, GpuLink::Unknown);
  ASSERT_TRUE(hybrid.free_before_weights.has_value());
  EXPECT_EQ(*hybrid.free_before_weights, static_cast<uint64_t>((19.08 + 3.76) * static_cast<double>(1ull << 30)));
  EXPECT_DOUBLE_EQ(hybrid.printed.at("state_slots"), 82);
  EXPECT_FALSE(hybrid.notes.empty());
}

// Every stored case is either computed or listed with why; the set-aside share is about 30%.
TEST(EngineLogs, EveryCaseComputedOrExplained) {
  auto rows = validate_engine_logs(kLogs);
  size_t computed = 0, aside = 0, fitted = 0;
  for (const auto& r : rows) {
    if (!r.computed) {
      EXPECT_FALSE(r.note.empty()) << r.case_id;
    }
    computed += r.computed;
    aside += r.part == "set-aside";
    fitted += r.part == "fitted";
  }
  EXPECT_GT(computed, 20u);
  EXPECT_GT(aside, 0u);
  EXPECT_GT(fitted, aside);
  // Set aside, never fitted on: Qwen2.5-7B on one H100 (vLLM 0.19) printed a 2.21 GiB torch peak
  // and 16.7 GiB non-KV in all.
  const ValidationRow* act = find_row(rows, "vllm-qwen25-7b-h100-tp1", "vllm activation (torch peak increase)");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->part, "set-aside");
  EXPECT_TRUE(act->met) << act->ours;
  const ValidationRow* nkv = find_row(rows, "vllm-qwen25-7b-h100-tp1", "vllm non-KV total (from the card)");
  ASSERT_NE(nkv, nullptr);
  EXPECT_TRUE(nkv->met) << nkv->ours;
}

// SGLang's pool from the free memory a public log printed (docs.sglang.ai "Sending Requests",
// Llama 3.1 8B on one H100, mem_fraction_static 0.88): by hand, 0.88 x 78.81 GiB - (78.81 - 63.72)
// GiB of weights = 54.2628 GiB / 131,072 B a token (32 layers x 8 KV heads x 128 x 2 x 2 B) =
// 444,520 tokens; SGLang printed 444,500 (the GiB figures are printed to 2 decimals).
TEST(EngineLogs, SglangPoolFromPrintedFreeMemory) {
  expect_sglang_pool_from_free_memory("sglang-docs-send-request-llama31-8b-h100", 444500, 444520);
}

// Set aside, never fitted on: Qwen3-14B on one RTX A6000 launched by Xinference (xorbitsai/inference
// #3481; mem_fraction_static 0.88, Xinference's for one GPU). By hand: 0.88 x (19.67 + 27.57) GiB
// - 27.57 GiB = 14.0012 GiB / 163,840 B a token (40 layers x 8 KV heads x 128 x 2 x 2 B) = 91,758
// tokens; SGLang printed 91,749.
TEST(EngineLogs, SglangPoolSetAsideQwen3OnA6000) {
  const ValidationRow* r = expect_sglang_pool_from_free_memory("sglang-xinference3481-qwen3-14b-a6000", 91749, 91758);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->part, "set-aside");
}

// Routed experts on the CPU (kvcache-ai/ktransformers #1971, Qwen3-30B-A3B with kt-kernel on one RTX
// 3090, mem_fraction_static 0.7): by hand, 0.7 x (17.29 + 2.91) GiB - 2.91 GiB = 11.23 GiB / 98,304
// B a token (48 layers x 4 KV heads x 128 x 2 x 2 B) = 122,661 tokens; SGLang printed 122,420. The
// weights on the GPU are only what the log printed, so there is no row from the card.
TEST(EngineLogs, SglangPoolExpertsOnCpu) {
  expect_sglang_pool_from_free_memory("sglang-ktransformers1971-qwen3-30b-a3b-3090-kt", 122420, 122661);
  EXPECT_EQ(find_row(engine_log_rows(), "sglang-ktransformers1971-qwen3-30b-a3b-3090-kt", "sglang token pool (from the card)"), nullptr);
}

// Qwen3-32B on one H100 (RyanRosario/llm-d, the GKE pod-snapshot guide; mem_fraction_static 0.90 in
// its manifest): by hand, 0.90 x (17.40 + 61.07) GiB - 61.07 GiB = 9.553 GiB / 262,144 B a token
// (64 layers x 8 KV heads x 128 x 2 x 2 B) = 39,129 tokens; the guide reports 9.54 GB for 39,078.
TEST(EngineLogs, SglangPoolQwen3On1H100) {
  expect_sglang_pool_from_free_memory("sglang-llmd-gke-qwen3-32b-h100", 39078, 39129);
}

// GLM-5-FP8 on 8 x MI355X (ajith-sirra-amd/Issues, Trail 2, fp8_e4m3 cache, mem_fraction_static
// 0.908): SGLang sizes the pool with the latent priced unpacked, 78 layers x ((512 + 64) x 1 B + 132
// B index key) = 55,224 B a token (pool_configurator.py _compute_cell_size), then allocates the
// packed 61,464 B (78 x (656 + 132)): by hand, 0.908 x 283.48 GiB - 89.58 GiB = 167.82 GiB / 55,224 B
// = 3,262,986 tokens, where SGLang printed 3,262,823 (and 3,262,823 x 61,464 B = 186.77 GiB, as
// printed). At the packed size it would be 2,931,719 (-10.1%). The weights are the FP8 checkpoint,
// not the catalogue's BF16 bytes: no row from the card.
TEST(EngineLogs, SglangSparseAttentionPoolOnMi355x) {
  const ValidationRow* r = expect_sglang_pool_from_free_memory("sglang-amd-glm5-fp8-mi355x-tp8", 3262823, 3262986);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(find_row(engine_log_rows(), "sglang-amd-glm5-fp8-mi355x-tp8", "sglang token pool (from the card)"), nullptr);
}

// gemma-3-4b-it on a 141 GB card (sgl-project/sglang PR #4826): Gemma 3 is not on SGLang's hybrid
// SWA list, so every one of its 34 layers holds every token, 34 x 4 KV heads x (256 + 256) x 2 B =
// 139,264 B a token: by hand, 0.836 x 139.21 GiB - 8.13 GiB = 108.25 GiB / 139,264 B = 834,616
// tokens; SGLang printed 834,615 (K and V 54.12 GiB each over all 34 layers).
TEST(EngineLogs, SglangGemma3PoolCoversEveryLayer) {
  expect_sglang_pool_from_free_memory("sglang-4826-gemma3-4b-it-h200", 834615, 834616);
}

// A hybrid model's state pool from a public log (kvcache-ai/ktransformers #1870, Qwen3.5-397B-A17B
// at TP 2): slots = floor((0.85 x 22.84 GiB - 3.76 GiB) x 0.9 / 1.9 / 96,030,720 B a request) = 82,
// as SGLang printed ("Mamba Cache is allocated. max_mamba_cache_size: 82").
TEST(EngineLogs, SglangStateSlotsFromPrintedFreeMemory) {
  auto rows = validate_engine_logs(kLogs);
  const ValidationRow* r = find_row(rows, "sglang-ktransformers1870-qwen35-397b-fp8-2x4090", "sglang state slots (from printed free memory)");
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(r->printed, 82);
  EXPECT_DOUBLE_EQ(r->ours, 82);
  // --cpu-offload-gb keeps the weights in host memory: no row from the card.
  EXPECT_EQ(find_row(rows, "sglang-ktransformers1870-qwen35-397b-fp8-2x4090", "sglang token pool (from the card)"), nullptr);
}

// vLLM 0.19's CUDA graphs (vllm_graphs.h): capture sizes [1, 2, 4] + 8 to 248 by 8 + 256 to the
// largest by 16, the largest min(2 x max_num_seqs, 512, max_num_batched_tokens); FULL decode graphs
// for the sizes up to max_num_seqs. Counted by hand: 1,024 sequences: 3 + 31 + 17 = 51, all 51
// full; 256: 51, of them 3 + 31 + 1 (256) = 35 full; 64: largest 128, 3 + 16 = 19, 3 + 8 = 11
// full; 8,192 tokens cut to 100: 3 + 12 (8 to 96) = 15, all full.
TEST(EngineLogs, VllmGraphsCountCaptureSizesAndStageLayers) {
  const auto sizes = [](uint64_t seqs, uint64_t tokens) {
    const VllmGraphCapture g = vllm_graph_sizes(seqs, tokens);
    return std::pair{g.sizes, g.full_sizes};
  };
  EXPECT_EQ(sizes(1024, 8192), (std::pair<uint64_t, uint64_t>{51, 51}));
  EXPECT_EQ(sizes(256, 8192), (std::pair<uint64_t, uint64_t>{51, 35}));
  EXPECT_EQ(sizes(64, 8192), (std::pair<uint64_t, uint64_t>{19, 11}));
  EXPECT_EQ(sizes(1024, 100), (std::pair<uint64_t, uint64_t>{15, 15}));
  // Speculative decoding, q = 1 + num_speculative_tokens (adjust_cudagraph_sizes_for_spec_decode),
  // worked by hand. q = 4, 1,024 sequences: the largest stays 512; 1, 2 and 4 all become 4, the
  // multiples of 8 and 16 stay: 51 - 2 = 49 sizes, all full (up to 4,096). q = 3, 64 sequences:
  // largest min(2 x 64 x 3, 512) = 384, 43 sizes up to it; 1 and 2 become 3, 4 becomes 6, the rest
  // round to distinct multiples of 3 (the largest, 384, is one): 42; full up to 192: 3, 6 and the
  // 24 sizes from 8 to 192 = 26. q = 4, 2 sequences: largest 16; 1, 2, 4, 8, 16 give 4, 8, 16,
  // full up to 8: two.
  const auto spec_sizes = [](uint64_t seqs, uint64_t tokens, uint64_t q) {
    const VllmGraphCapture g = vllm_graph_sizes(seqs, tokens, q);
    return std::pair{g.sizes, g.full_sizes};
  };
  EXPECT_EQ(spec_sizes(1024, 8192, 4), (std::pair<uint64_t, uint64_t>{49, 49}));
  EXPECT_EQ(spec_sizes(64, 8192, 3), (std::pair<uint64_t, uint64_t>{42, 26}));
  EXPECT_EQ(spec_sizes(2, 8192, 4), (std::pair<uint64_t, uint64_t>{3, 2}));
  EXPECT_EQ(spec_sizes(256, 8192, 1), sizes(256, 8192));
  // Mixtral 8x7B (32 routed-expert layers) in two pipeline stages on 80 GiB cards (vLLM's
  // defaults there: 1,024 sequences, 8,192 tokens): rank 0 captures its 16 layers, all MoE:
  // 216 MiB + (51 + 51) x 16 x (174 + 56) KiB = 226,492,416 + 384,368,640 = 610,861,056 B.
  const Model& m = *Catalogue::builtin().find("mixtral-8x7b");
  VllmBudgetSettings s;
  s.card_bytes = 80ull << 30;
  s.weight_bytes = m.native.bytes;
  s.kv.pipeline_parallel = 2;
  const VllmBudget b = vllm_budget(m, s);
  const VllmGraphCapture g = vllm_graph_capture(m, 2, nullptr, b.max_num_seqs, b.max_num_batched_tokens);
  EXPECT_EQ(g.layers, 16u);
  EXPECT_EQ(g.moe_layers, 16u);
  EXPECT_EQ(b.cuda_graphs, 610'861'056u);
}

// Issue 13: Kimi-VL-A3B-Instruct and RedHat's W8A8 Mistral Small 3.1 computed from the config
// values stored with their cases (tools/engine-logs/models.json says where each value comes from).
// KV tokens from the printed KV memory, by hand: Kimi-VL keeps one MLA latent a layer, 27 layers x
// (512 + 64) x 2 B = 31,104 B a token, whole on every TP rank: 41.32 GiB = 44,367,012,167.68 B /
// 31,104 = 1,426,408.6, in blocks of 16: 1,426,400 (vLLM printed 1,426,368 from its unrounded
// memory); at TP 2, 54.78 GiB / 31,104 B = 1,891,061.5: 1,891,056 (printed 1,890,896). The W8A8
// Mistral keeps 40 layers x 8 KV heads x 128 x 2 x 2 B = 163,840 B a token (TP 2: 4 heads,
// 81,920 B): 48.73 GiB / 163,840 = 319,356.9: 319,344; 59.02 GiB / 81,920 = 773,586.9: 773,584.
TEST(EngineLogs, KimiVlAndW8a8MistralFromStoredConfigs) {
  const auto& rows = engine_log_rows();
  const std::string kv = "vllm kv_tokens (from printed KV memory)";
  const struct {
    const char* id;
    double by_hand;
  } cases[] = {{"vllm019-moonshotai-kimi-vl-a3b-i-h100-80gb-tp1pp1dp1-8192", 1'426'400},
               {"vllm-kimi-vl-a3b-h100-tp2", 1'891'056},
               {"vllm019-w8a8-mistral-small-24b-h100-80gb-tp1pp1dp1-8192", 319'344},
               {"vllm019-w8a8-mistral-small-24b-h100-80gb-tp2pp1dp1-8192", 773'584}};
  for (const auto& c : cases) {
    const ValidationRow* r = find_row(rows, c.id, kv);
    ASSERT_NE(r, nullptr) << c.id;
    EXPECT_TRUE(r->computed) << c.id;
    EXPECT_DOUBLE_EQ(r->ours, c.by_hand) << c.id;
    const ValidationRow* w = find_row(rows, c.id, "vllm weights (per GPU)");
    ASSERT_NE(w, nullptr) << c.id;
    EXPECT_TRUE(w->met) << c.id << " " << w->ours;
  }
  // The W8A8 weights on one GPU, by hand: the text model's linear layers at one byte a weight
  // (compressed-tensors int8, per channel), 40 x (q 5,120 x 4,096 + k, v 2 x 5,120 x 1,024 + o
  // 4,096 x 5,120 + gate, up, down 3 x 5,120 x 32,768) = 22,229,811,200 B; the embedding and the
  // untied head 2 x 131,072 x 5,120 x 2 B = 2,684,354,560; the RMSNorms (40 x 2 + 1) x 5,120 x 2 B =
  // 829,440; the Pixtral tower and projector at 16 bits, 438,958,080 x 2 B = 877,916,160
  // (test_config_tower.cpp); the rotary table 131,072 x 128 x 2 B = 33,554,432: 25,826,465,792 B,
  // 24.0529 GiB (vLLM printed 24.07).
  const ValidationRow* w = find_row(rows, "vllm019-w8a8-mistral-small-24b-h100-80gb-tp1pp1dp1-8192", "vllm weights (per GPU)");
  ASSERT_NE(w, nullptr);
  EXPECT_NEAR(w->ours, 25'826'465'792.0 / (1024.0 * 1024.0 * 1024.0), 1e-9);
}
