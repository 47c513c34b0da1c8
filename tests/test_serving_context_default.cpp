// A pasted vLLM / SGLang command without --max-model-len / --context-length: each engine sizes a
// request of the model's own maximum context (vLLM's ModelConfig derives max_model_len from the
// config's max_position_embeddings; SGLang's context_len likewise), not vramcalc's default
// context (src/engines/engine.cpp apply_command_to_scenario, run_engine).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace {

nlohmann::json estimate_json(const std::string& args) {
  const CliResult r = run_cli("estimate llama-3.1-8b --gpu h100-sxm --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output, nullptr, false);
}

}  // namespace

TEST(ServingContextDefault, VllmWithoutMaxModelLenTakesTheModelsMaximum) {
  // Llama 3.1 8B's published config: max_position_embeddings 131,072.
  const nlohmann::json d = estimate_json("--engine-command \"vllm serve meta-llama/Llama-3.1-8B-Instruct\"");
  EXPECT_EQ(d["engine"]["settings"]["max_model_len"], 131072);
  // The command's own --max-model-len stays.
  const nlohmann::json given = estimate_json("--engine-command \"vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384\"");
  EXPECT_EQ(given["engine"]["settings"]["max_model_len"], 16384);
  // --context answers for a command that leaves max_model_len to vLLM (as it does for llama.cpp's -c).
  const nlohmann::json asked = estimate_json("--context 32768 --engine-command \"vllm serve meta-llama/Llama-3.1-8B-Instruct\"");
  EXPECT_EQ(asked["engine"]["settings"]["max_model_len"], 32768);
}

TEST(ServingContextDefault, SglangWithoutContextLengthTakesTheModelsMaximum) {
  const nlohmann::json d = estimate_json("--engine-command \"python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct\"");
  EXPECT_EQ(d["engine"]["settings"]["context_length"], 131072);
  const nlohmann::json given =
      estimate_json("--engine-command \"python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 8192\"");
  EXPECT_EQ(given["engine"]["settings"]["context_length"], 8192);
}

TEST(ServingContextDefault, VllmRefusesToStartWhereOneRequestOfTheModelsMaximumDoesNotFit) {
  // On a 24 GB card the 16 GB of BF16 weights leave a pool of fewer than 131,072 tokens (128 KiB a
  // token: 32 layers x 8 KV heads x 128 x 2 x 2 B), so vLLM stops at start-up ("larger than the
  // maximum number of tokens that can be stored in KV cache"), as the answer says.
  const CliResult r = run_cli("estimate llama-3.1-8b --gpu rtx-4090 --engine-command \"vllm serve meta-llama/Llama-3.1-8B-Instruct\"");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fewer than max_model_len 131072: vLLM refuses to start"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Does not fit with vllm"), std::string::npos) << r.output;
}
