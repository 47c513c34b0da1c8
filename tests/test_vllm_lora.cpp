// vLLM's LoRA slots (src/engines/vllm_lora.cpp): --enable-lora --max-loras N --max-lora-rank R
// preallocates A and B buffers per linear module and rank, out of the KV cache's share.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "cli_runner.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_run.h"
#include "engines/vllm_lora.h"

using namespace vc;
using json = nlohmann::json;

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

const Model& qwen3_06b() { return *Catalogue::builtin().find("qwen3-0.6b"); }

}  // namespace

TEST(VllmLora, SlotsOfADenseModelAreWorkedByHand) {
  const LoraSlotSettings four{4, 16};
  EXPECT_EQ(vllm_lora_slots(qwen3_06b(), four, 1, 1, 2).bytes, kQwen3_06bFourSlotsRank16);
  EXPECT_EQ(vllm_lora_slots(qwen3_06b(), four, 2, 1, 2).bytes, kQwen3_06bFourSlotsRank16Tp2);
  // Linear in the slots and the rank; nothing without --enable-lora.
  EXPECT_EQ(vllm_lora_slots(qwen3_06b(), {1, 64}, 1, 1, 2).bytes, kQwen3_06bFourSlotsRank16);
  EXPECT_EQ(vllm_lora_slots(qwen3_06b(), {0, 16}, 1, 1, 2).bytes, 0u);
}

TEST(VllmLora, PastedCommandsTurnTheSlotsOnOnlyWithEnableLora) {
  EngineRun on = parse_engine_command("vllm serve Qwen/Qwen3-0.6B --enable-lora --max-loras 4 --max-lora-rank 16 --lora-modules a=org/a b=org/b");
  EXPECT_EQ(on.vllm.lora.max_loras, 4u);
  EXPECT_EQ(on.vllm.lora.max_lora_rank, 16u);
  EXPECT_TRUE(on.notes.empty()) << on.notes.front();  // --lora-modules' pairs are not taken for flags
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
  // The same slots from the CLI's own flags (and the API's parameters of the same names).
  const CliResult flags = run_cli("estimate qwen3-0.6b --json --gpu-memory 24GB --engine vllm --context 8192 --max-loras 4 --max-lora-rank 16");
  ASSERT_EQ(flags.exit_code, 0) << flags.output;
  EXPECT_EQ(kv(json::parse(flags.output)["engine"]), kv(b));
  const CliResult bad = run_cli("estimate qwen3-0.6b --engine vllm --max-lora-rank 24");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--max-lora-rank"), std::string::npos) << bad.output;
}
