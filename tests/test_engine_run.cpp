// Pasted engine commands (src/engines/engine_run.cpp) and vLLM's budget (src/engines/vllm_budget.cpp).
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "engines/engine_run.h"

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
  // cases.json vllm-llama31-8b-h100-tp1-mml8192: 79.19 GiB card x 0.95 = 75.23 GiB requested;
  // non-KV 17.12 GiB; 58.11 GiB for the cache; 476,016 tokens; 58.11x for 8,192 tokens.
  // Activation by our rule: 8192 x (4 x 14,336 + 16 x 4,096) x 2 B = 2,013,265,920 B (1.875 GiB).
  EngineRun r = parse_engine_command("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --gpu-memory-utilization 0.95");
  r.vllm.card_bytes = static_cast<uint64_t>(79.19 * 1073741824.0);
  const Model& m = *Catalogue::builtin().find("llama-3.1-8b");
  r.vllm.weight_bytes = m.native.bytes;
  VllmBudget b = vllm_budget(m, r.vllm);
  EXPECT_EQ(b.activation, 2'013'265'920u);
  EXPECT_NEAR(static_cast<double>(b.non_kv_total) / 1073741824.0, 17.12, 17.12 * 0.03);
  EXPECT_NEAR(static_cast<double>(b.kv.tokens), 476016.0, 476016.0 * 0.02);
  EXPECT_NEAR(b.kv.max_concurrency, 58.11, 58.11 * 0.03);
}
