// check with a pasted --engine-command applies every setting the command carries exactly as plan
// does (BoxInputs::apply_command, one place): vLLM --max-model-len, SGLang --context-length,
// llama.cpp -c / -np, an fp8 --kv-cache-dtype; a --context given on the command line still wins.
// Each expected value is read off the command in the test (the engine's own flag), and the check
// row's engine answer is compared with plan's for the same tier.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "engines/engine.h"
#include "engines/engine_run.h"
#include "cli_runner.h"
#include "plan/box_inputs.h"
#include "plan/check.h"
#include "report/engine_report.h"
#include "report/json_plan.h"
#include "server/api.h"
#include "server/request_params.h"

using namespace vc;
using nlohmann::json;

namespace {

struct Checked {
  CheckRow row;
  Plan plan;  // plan's answer for the row's tier, on the same inputs
};

// check_model on one catalogue model, and plan for the tier check chose, both from the same inputs.
Checked check_and_plan(const std::string& model_id, const std::string& gpu, const std::string& command, const ScenarioGiven& given = {},
                       Scenario base = {}) {
  BoxInputs in;
  in.gpu = gpu;
  in.engine_command = command;
  const Box box = in.to_box();
  const PlanOptions o = in.to_options();
  in.apply_command(base, given);
  const Model* found = Catalogue::builtin().find(model_id);
  if (!found) throw std::runtime_error("no catalogue model " + model_id);
  const Model& m = *found;
  CheckRow row = check_model(m, box, o, base, CheckPreference::Quality);
  Scenario at_tier = base;
  at_tier.quant = row.quant;
  Plan p = make_plan(m, at_tier, box, o);
  return {std::move(row), std::move(p)};
}

json setting_of(const EngineAnswer& a, const std::string& name) { return engine_json(a).at("settings").at(name); }

// The check row runs on the GPU with the very answer plan gives for that tier: same devices, bytes,
// notes and decode speed.
void expect_row_is_plans_answer(const Checked& c) {
  ASSERT_EQ(c.row.fit, FitKind::Gpu);
  ASSERT_TRUE(c.row.engine);
  EXPECT_EQ(engine_json(*c.row.engine), engine_json(c.plan.engine));
  EXPECT_DOUBLE_EQ(c.row.decode_tok_s, c.plan.decode.expected_tok_s);
}

const json& row_of(const json& check, const std::string& model) {
  for (const auto& r : check.at("rows")) if (r.at("model") == model) return r;
  throw std::runtime_error("no row for " + model);
}

}  // namespace

TEST(CheckEngineCommand, VllmMaxModelLenSizesTheRowAsPlanDoes) {
  const Checked c = check_and_plan("llama-3.1-8b", "H200", "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384 --gpu-memory-utilization 0.8");
  expect_row_is_plans_answer(c);
  EXPECT_EQ(setting_of(*c.row.engine, "max_model_len"), 16384);  // the command's --max-model-len, not check's 8,192 default
  EXPECT_EQ(setting_of(*c.row.engine, "gpu_memory_utilization"), 0.8);
}

TEST(CheckEngineCommand, SglangContextLengthAndFp8Cache) {
  const Checked c = check_and_plan("qwen3-8b", "H200", "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --context-length 20000 --kv-cache-dtype fp8_e5m2");
  expect_row_is_plans_answer(c);
  EXPECT_EQ(setting_of(*c.row.engine, "context_length"), 20000);  // --context-length
  EXPECT_EQ(setting_of(*c.row.engine, "kv_cache_dtype"), "fp8_e5m2");
  EXPECT_EQ(c.plan.estimate.scenario.cache_dtype, "FP8_E5M2");  // the speed's cache bytes: 1 a value
}

TEST(CheckEngineCommand, LlamaCppContextOverSequences) {
  // llama.cpp's -c is the whole cache over -np sequences: 65,536 / 2 = 32,768 tokens each.
  const Checked c = check_and_plan("llama-3.1-8b", "H200", "llama-server -m Llama-3.1-8B-Q4_K_M.gguf -c 65536 -np 2 -ngl 99");
  ASSERT_EQ(c.row.fit, FitKind::Gpu);
  ASSERT_TRUE(c.row.engine);
  EXPECT_EQ(setting_of(*c.row.engine, "n_ctx"), 65536);
  EXPECT_EQ(setting_of(*c.row.engine, "n_parallel"), 2);
  EXPECT_EQ(c.plan.estimate.scenario.context, 32768u);
  EXPECT_EQ(c.plan.estimate.scenario.sequences, 2u);
  EXPECT_EQ(engine_json(*c.row.engine), engine_json(c.plan.engine));
}

TEST(CheckEngineCommand, GivenContextWinsAsInPlan) {
  Scenario base;
  base.context = 4096;
  const Checked c = check_and_plan("llama-3.1-8b", "H200", "vllm serve x --max-model-len 16384", ScenarioGiven{true, false, false}, base);
  ASSERT_TRUE(c.row.engine);
  EXPECT_EQ(setting_of(*c.row.engine, "max_model_len"), 4096);  // --context 4096 given
}

// The CLI and the API: the same settings reach every row, and the API's document is the CLI's.
TEST(CheckEngineCommand, CliAndApiApplyTheCommand) {
  const std::string vllm = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16384";
  CliResult r = run_cli("check --gpu H200 --engine-command '" + vllm + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json cli = json::parse(r.output);
  EXPECT_EQ(row_of(cli, "llama-3.1-8b").at("engine_answer").at("settings").at("max_model_len"), 16384);
  auto a = server::call_api("check", server::RequestParams::from_pairs({{"gpu", "H200"}, {"engine-command", vllm}}));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(json::parse(a.body), cli);

  const std::string sglang = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --context-length 20000";
  r = run_cli("check --gpu H200 --engine-command '" + sglang + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(row_of(json::parse(r.output), "qwen3-8b").at("engine_answer").at("settings").at("context_length"), 20000);
  a = server::call_api("check", server::RequestParams::from_pairs({{"gpu", "H200"}, {"engine-command", sglang}, {"context", "4096"}}));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(row_of(json::parse(a.body), "qwen3-8b").at("engine_answer").at("settings").at("context_length"), 4096);  // context given wins
}

// The weights tier a pasted llama.cpp command loads, read off its model as llama.cpp names it:
// -hf ORG/REPO:TAG (common/arg.cpp: the tag is the quant, case-insensitive, Q4_K_M when absent) or
// the -m file's name (the quantizer's tag, as every published GGUF is named). Plan, check and
// estimate then size that tier instead of the native checkpoint, unless --quant is given or the
// model was read from the file itself.
TEST(CheckEngineCommand, LlamaCppModelNamesTheWeightsTier) {
  EXPECT_EQ(command_model_tier("Qwen2.5-7B-Instruct-Q4_K_M.gguf"), "Q4_K_M");
  EXPECT_EQ(command_model_tier("/models/Llama-3.3-70B-Instruct-Q8_0-00001-of-00002.gguf"), "Q8_0");
  EXPECT_EQ(command_model_tier("gemma-3-12b-it-qat-q4_0.gguf"), "Q4_0");
  EXPECT_EQ(command_model_tier("hf:bartowski/Qwen2.5-7B-Instruct-GGUF:q5_k_m"), "Q5_K_M");
  EXPECT_EQ(command_model_tier("hf:bartowski/Qwen2.5-7B-Instruct-GGUF"), "Q4_K_M");
  EXPECT_EQ(command_model_tier("model.gguf"), "");
  EXPECT_EQ(parse_engine_command("llama-server -hf bartowski/Qwen2.5-7B-Instruct-GGUF:Q6_K -c 8192").model,
            "hf:bartowski/Qwen2.5-7B-Instruct-GGUF:Q6_K");

  BoxInputs in;
  in.gpu = "RTX4090";
  in.engine_command = "llama-server -m Qwen2.5-7B-Instruct-Q8_0.gguf -c 8192";
  Scenario from_command;
  in.apply_command(from_command, ScenarioGiven{});
  EXPECT_EQ(from_command.quant, "Q8_0");
  Scenario with_flag;
  with_flag.quant = "Q6_K";
  in.apply_command(with_flag, ScenarioGiven{.quant = true});
  EXPECT_EQ(with_flag.quant, "Q6_K");  // --quant wins

  // A model read from a GGUF is that file's tensors: its name sets no tier.
  Model from_file = *Catalogue::builtin().find("qwen2.5-7b");
  NamedTensor tensor;
  tensor.name = "token_embd.weight";
  from_file.tensors.push_back(tensor);
  EngineInputs inputs;
  inputs.engine = "llamacpp";
  inputs.command = in.engine_command;
  const EngineRequest r = engine_request(from_file, Scenario{}, inputs);
  EXPECT_EQ(r.scenario.quant, "");
  // plan sizes the tier the command loads: Q8_0, not the native BF16 checkpoint.
  const Checked c = check_and_plan("qwen2.5-7b", "RTX4090", in.engine_command);
  EXPECT_EQ(c.plan.estimate.scenario.quant, "Q8_0");
}
