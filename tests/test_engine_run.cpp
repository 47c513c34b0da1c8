// Pasted engine commands (src/engines/engine_run.cpp) and vLLM's budget (src/engines/vllm_budget.cpp).
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_run.h"
#include "engines/serving_dtype.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "published_configs.h"

using namespace vc;

TEST(EngineCommand, LlamaServerFlagsMapOneToOne) {
  EngineRun r = parse_engine_command("llama-server -m model.gguf -c 32768 -np 4 -ctk q8_0 -fa off -ngl 99 -ts 3,1 -ot exps=CPU --jinja");
  EXPECT_EQ(r.engine, EngineKind::LlamaCpp);
  EXPECT_EQ(r.model, "model.gguf");
  EXPECT_EQ(r.llamacpp.n_ctx, 32768u);
  EXPECT_EQ(r.llamacpp.n_seq, 4u);
  EXPECT_EQ(r.llamacpp.type_k, "Q8_0");
  EXPECT_FALSE(r.llamacpp.flash_attn);
  EXPECT_EQ(r.placement.n_gpu_layers, 99u);
  EXPECT_EQ(r.placement.devices, 2u);
  ASSERT_EQ(r.placement.overrides.size(), 1u);
  ASSERT_EQ(r.notes.size(), 1u);  // --jinja ignored with a note
  EXPECT_THROW(parse_engine_command("llama-server -c lots"), InputError);
  EXPECT_THROW(parse_engine_command("llama-server -fa maybe"), InputError);
  EXPECT_THROW(parse_engine_command("ollama run x"), InputError);
}

// --numa takes one of llama.cpp's three modes (common/arg.cpp); a flag not read takes its value
// along into one note ("--alias my-model", "--temp 0.7", "--seed -1"), not a note per word.
TEST(EngineCommand, LlamaCppNumaAndIgnoredFlagsWithTheirValues) {
  EngineRun r = parse_engine_command("llama-server -m model.gguf --numa isolate --alias my-model --temp 0.7 --seed -1 --jinja -c 4096");
  EXPECT_EQ(r.llamacpp_numa, "isolate");
  EXPECT_EQ(r.llamacpp.n_ctx, 4096u);
  std::vector<std::string> ignored;  // the "ignored ..." notes, in order (llama-server's -np note besides)
  for (const auto& n : r.notes)
    if (n.rfind("ignored ", 0) == 0) ignored.push_back(n.substr(0, n.find(" (")));
  EXPECT_EQ(ignored, (std::vector<std::string>{"ignored --alias my-model", "ignored --temp 0.7", "ignored --seed -1", "ignored --jinja"}));
  EXPECT_EQ(parse_engine_command("llama-server -m model.gguf --numa distribute").llamacpp_numa, "distribute");
  EXPECT_EQ(parse_engine_command("llama-server -m model.gguf").llamacpp_numa, "");
  EXPECT_THROW(parse_engine_command("llama-server -m model.gguf --numa interleave"), InputError);
  EXPECT_THROW(parse_engine_command("llama-server -m model.gguf --numa"), InputError);
  // vLLM's and SGLang's notes alike.
  const EngineRun v = parse_engine_command("vllm serve ORG/REPO --served-model-name m --port 8000");
  ASSERT_FALSE(v.notes.empty());
  EXPECT_EQ(v.notes[0].substr(0, v.notes[0].find(" (")), "ignored --served-model-name m");
  EXPECT_EQ(v.notes[1].substr(0, v.notes[1].find(" (")), "ignored --port 8000");
}

TEST(EngineCommand, VllmServe) {
  EngineRun r = parse_engine_command("vllm serve ORG/REPO --max-model-len 32768 --gpu-memory-utilization 0.9 -tp 2 --kv-cache-dtype fp8");
  EXPECT_EQ(r.engine, EngineKind::Vllm);
  EXPECT_EQ(r.model, "ORG/REPO");
  EXPECT_EQ(r.vllm.kv.max_model_len, 32768u);
  EXPECT_DOUBLE_EQ(r.vllm.gpu_memory_utilization, 0.9);
  EXPECT_EQ(r.vllm.kv.tensor_parallel, 2u);
  EXPECT_EQ(r.vllm.kv.kv_cache_dtype, "fp8");
  EXPECT_THROW(parse_engine_command("vllm serve x --gpu-memory-utilization 1.5"), InputError);
}

TEST(VllmBudget, Llama31_8BOnOneH100) {
  // tests/data/engine-logs.json vllm-llama31-8b-h100-tp1-mml8192 (set aside, never fitted on):
  // 79.19 GiB card x 0.95 = 75.23 GiB requested; non-KV 17.12 GiB; torch peak 1.89 GiB; 476,016 tokens.
  // Activation by our rule, by hand: the card is above 70 GiB, so 8,192 tokens and 1,024 sequences;
  // forward 8192 x (3 x 14,336 + 4 x 4,096) x 2 = 973,078,528 B; sampler 8192 x 4096 x 2 +
  // 1024 x 128,256 x 14.55 = 67,108,864 + 1,910,911,795 = 1,978,020,659 B; + 50 MiB = 2,030,449,459 B.
  EngineRun r = parse_engine_command("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --gpu-memory-utilization 0.95");
  r.vllm.card_bytes = parse_bytes("79.19GiB", "--gpu-memory");
  const Model& m = *Catalogue::builtin().find("llama-3.1-8b");
  r.vllm.weight_bytes = m.native.bytes;
  VllmBudget b = vllm_budget(m, r.vllm);
  EXPECT_EQ(b.max_num_seqs, 1024u);
  EXPECT_EQ(b.forward_peak, 973'078'528u);
  EXPECT_EQ(b.sampler_peak, 1'978'020'659u);
  EXPECT_EQ(b.activation, 2'030'449'459u);
  EXPECT_NEAR(static_cast<double>(b.activation) / 1073741824.0, 1.89, 1.89 * 0.01);
  EXPECT_NEAR(static_cast<double>(b.non_kv_total) / 1073741824.0, 17.12, 17.12 * 0.03);
  EXPECT_NEAR(static_cast<double>(b.kv.tokens), 476016.0, 476016.0 * 0.02);
  EXPECT_NEAR(b.kv.max_concurrency, 58.11, 58.11 * 0.03);
  // The same model with --max-num-seqs 256: the sampler shrinks to 67,108,864 + 477,727,948 B, below
  // the forward pass, which now sets the peak.
  r.vllm.max_num_seqs = 256;
  EXPECT_EQ(vllm_budget(m, r.vllm).activation, 973'078'528u + 52'428'800u);
}

// Phi-2 (microsoft/phi-2 config.json: hidden 2,560, intermediate 10,240, 32 layers, vocabulary
// 51,200, float16) has a non-gated MLP (vLLM's models/phi.py PhiMLP: fc1, the activation, fc2), so
// the forward pass keeps fc1's output and the activation's, 2 x 10,240 values a token, not a gated
// MLP's 3 x 10,240. By hand on an H100 (8,192 tokens, 1,024 sequences): forward 8,192 x (2 x 10,240
// + 4 x 2,560) x 2 = 8,192 x 30,720 x 2 = 503,316,480 B, 167,772,160 B (8,192 x 10,240 x 2) below
// the gated reading's 671,088,640; sampler 8,192 x 2,560 x 2 + 1,024 x 51,200 x 14.55 = 41,943,040 +
// 762,839,040 = 804,782,080 B, the larger, so the peak is 804,782,080 + 50 MiB = 857,210,880 B either
// way (tests/data/engine-logs.json vllm019-microsoft-phi-2: torch peak 0.79 GiB). With
// --max-num-seqs 64 the sampler is 41,943,040 + 64 x 51,200 x 14.55 = 89,620,480 B and the forward
// pass sets the peak: 503,316,480 + 52,428,800 = 555,745,280 B (723,517,440 read as gated).
TEST(VllmBudget, Phi2NonGatedMlpForwardPass) {
  EngineRun r = parse_engine_command("vllm serve microsoft/phi-2 --max-model-len 2048 --gpu-memory-utilization 0.95");
  r.vllm.card_bytes = parse_bytes("79.19GiB", "--gpu-memory");
  const Model m = model_from_config(vc::testing::phi2(), "phi-2 config.json");
  ASSERT_FALSE(m.layers[0].feed_forward.gated);
  r.vllm.weight_bytes = checked_mul(m.params.derived_total, 2);
  const VllmBudget b = vllm_budget(m, r.vllm);
  EXPECT_EQ(b.forward_peak, 503'316'480u);
  EXPECT_EQ(b.sampler_peak, 804'782'080u);
  EXPECT_EQ(b.activation, 857'210'880u);
  r.vllm.max_num_seqs = 64;
  EXPECT_EQ(vllm_budget(m, r.vllm).activation, 555'745'280u);
  Model gated = m;  // the same geometry read as gated: the 3 x width rule
  for (auto& l : gated.layers) l.feed_forward.gated = true;
  EXPECT_EQ(vllm_budget(gated, r.vllm).activation, 723'517'440u);
}

// Settings vLLM honours are honoured, the ones it refuses are refused (issue 13).
TEST(EngineCommand, VllmDtypesHonouredOrRefused) {
  EXPECT_THROW(parse_engine_command("vllm serve x --kv-cache-dtype bogus"), InputError);
  EXPECT_THROW(parse_engine_command("vllm serve x --dtype float64"), InputError);
  EXPECT_THROW(vllm_cache_dtype_from_scenario("q8_0"), InputError);
  EXPECT_THROW(vllm_cache_dtype_from_scenario("f32"), InputError);
  EXPECT_EQ(vllm_cache_dtype_from_scenario("F16"), "auto");
  EXPECT_EQ(vllm_cache_dtype_from_scenario("fp8"), "fp8");
  EngineRun r = parse_engine_command("vllm serve x --dtype float32 --max-num-seqs 64 --max-num-batched-tokens 4096");
  EXPECT_EQ(r.vllm.max_num_seqs, 64u);
  EXPECT_EQ(r.vllm.max_num_batched_tokens, 4096u);
  const Model& m = *Catalogue::builtin().find("llama-3.1-8b");
  // float32: every unquantized weight at 4 bytes (the bf16 checkpoint doubles), and the cache
  // (auto follows --dtype) at 4 bytes a value: 32 layers x 8 heads x 256 x 4 B = 262,144 B a token.
  EXPECT_EQ(loaded_weight_bytes(m, m.native.bytes, "float32"), 2 * m.native.bytes);
  EXPECT_EQ(loaded_weight_bytes(m, m.native.bytes, "auto"), m.native.bytes);
  EXPECT_EQ(vllm_kv(m, r.vllm.kv).bytes_per_token, 262144u);
  r.vllm.kv.kv_cache_dtype = "fp8_e5m2";
  EXPECT_EQ(vllm_kv(m, r.vllm.kv).bytes_per_token, 65536u);
}
