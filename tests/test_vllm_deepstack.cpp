// Qwen3-VL's DeepStack input buffers (src/engines/vllm_deepstack.cpp), which vLLM allocates in the
// model's __init__ and counts in "Model loading took": levels x max_num_batched_tokens x hidden_size
// x dtype bytes, worked by hand from the published config.json values.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue_entry.h"
#include "catalogue/catalogue.h"
#include "cli_runner.h"
#include "engine_line.h"
#include "core/units.h"
#include "engines/engine_run.h"
#include "engines/vllm_budget.h"
#include "engines/vllm_deepstack.h"

using namespace vc;
using vc::test::entry;

namespace {


VllmMmLimits limits(const std::string& text) {
  VllmMmLimits l;
  read_vllm_mm_limits(l, "--limit-mm-per-prompt", text);
  return l;
}

}  // namespace

// Qwen/Qwen3-VL-8B-Instruct: deepstack_visual_indexes [8, 16, 24] (3 levels), text hidden_size 4,096.
// At 8,192 batched tokens in bf16: 3 x 8,192 x 4,096 x 2 B = 201,326,592 B (192 MiB); at 2,048 (a
// card under 70 GiB): a quarter, 50,331,648 B.
TEST(VllmDeepstack, Qwen3Vl8bKeepsThreeLevelsOfBatchedTokens) {
  const Model& m = entry("qwen3-vl-8b");
  const VllmDeepstack d = vllm_deepstack(m, 8192, 2, {});
  EXPECT_EQ(d.levels, 3u);
  EXPECT_EQ(d.hidden, 4096u);
  EXPECT_EQ(d.bytes, 201'326'592u);
  EXPECT_NE(d.formula().find("3 DeepStack levels x 8,192 tokens"), std::string::npos) << d.formula();
  EXPECT_EQ(vllm_deepstack(m, 2048, 2, {}).bytes, 50'331'648u);
  // One modality on keeps the tower and its buffers; both off: no `visual`, no buffers.
  EXPECT_EQ(vllm_deepstack(m, 8192, 2, limits("image=0")).bytes, 201'326'592u);
  EXPECT_EQ(vllm_deepstack(m, 8192, 2, limits("image=0,video=0")).bytes, 0u);
  EXPECT_EQ(vllm_deepstack(m, 8192, 2, limits("image=0,video=0")).formula(), "");
  // Qwen3.5 lists no deepstack_visual_indexes, and a text-only model has no tower: none.
  EXPECT_EQ(vllm_deepstack(entry("qwen3.5-27b"), 8192, 2, {}).bytes, 0u);
  EXPECT_EQ(vllm_deepstack(entry("llama-3.1-8b"), 8192, 2, {}).bytes, 0u);
}

// The budget's weights carry the buffers whole on every TP rank: the same checkpoint share with
// the tower on and off differs by exactly 201,326,592 B at TP 1 and at TP 2.
TEST(VllmDeepstack, BudgetWeightsCarryTheBuffersOnEveryRank) {
  const Model& m = entry("qwen3-vl-8b");
  for (const char* tp : {"1", "2"}) {
    EngineRun on = parse_engine_command(std::string("vllm serve Qwen/Qwen3-VL-8B-Instruct -tp ") + tp + " --max-model-len 32768");
    on.vllm.card_bytes = parse_bytes("79.19GiB", "--gpu-memory");
    on.vllm.weight_bytes = m.native.bytes;
    EngineRun off = on;
    off.vllm.mm_limits = limits("image=0,video=0");
    const VllmBudget with = vllm_budget(m, on.vllm), without = vllm_budget(m, off.vllm);
    EXPECT_EQ(with.max_num_batched_tokens, 8192u) << tp;
    EXPECT_EQ(with.deepstack.bytes, 201'326'592u) << tp;
    EXPECT_EQ(without.deepstack.bytes, 0u) << tp;
    EXPECT_EQ(with.weights - without.weights, 201'326'592u) << tp;
  }
}

// The CLI shows them as a weights line of their own beside the checkpoint's share.
TEST(VllmDeepstack, TheVllmDeviceHasADeepStackWeightsLine) {
  const nlohmann::json line = vc::testing::engine_line("estimate qwen3-vl-8b --engine vllm --gpu h100-sxm --context 32K --json", "label",
                                                       "DeepStack input buffers (built with the model)");
  ASSERT_TRUE(line.is_object());
  EXPECT_EQ(line["kind"], "weights");
  EXPECT_EQ(line["bytes"].get<uint64_t>(), 201'326'592u);
  EXPECT_NE(line["source"].get<std::string>().find("qwen3_vl.py"), std::string::npos);
  // Qwen3.5 has none.
  const CliResult q = run_cli("estimate qwen3.5-27b --engine vllm --gpu h100-sxm --context 32K --json");
  ASSERT_EQ(q.exit_code, 0) << q.output;
  EXPECT_EQ(q.output.find("DeepStack input buffers"), std::string::npos);
}
