// plan with a pasted vLLM or SGLang command: the command's TP / PP / EP is the split, its flags
// (--gpu-memory-utilization, --kv-cache-dtype, --max-model-len / --context-length) are what the
// engine answers for; degrees the box cannot run are refused naming --engine-command.
#include <gtest/gtest.h>

#include <variant>

#include "core/error.h"
#include "plan/box_inputs.h"
#include "plan/serving_command.h"
#include "plan_fixtures.h"

using namespace vc;
using namespace vc::test;

namespace {

PlanOptions options_for(const std::string& command, const std::string& engine = "rule", const std::string& split = "layer") {
  BoxInputs in;
  in.engine_command = command;
  in.engine = engine;
  in.split = split;
  return in.to_options();
}

const SettingValue& setting(const EngineAnswer& a, const std::string& name) {
  for (const auto& s : a.settings) if (s.name == name) return s.value;
  throw std::runtime_error("no setting " + name);
}

bool has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

}  // namespace

TEST(PlanServingCommand, VllmCommandSetsEngineSplitAndTheAnswer) {
  const PlanOptions o = options_for("vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2 --max-model-len 16384 --gpu-memory-utilization 0.8 --kv-cache-dtype fp8");
  EXPECT_EQ(o.engine, EngineKind::Vllm);  // implied by the command, as a llama.cpp command implies llamacpp
  EXPECT_EQ(o.split, SplitMode::Tensor);   // -tp 2
  Scenario s;  // 8,192 tokens, F16 cache by default
  apply_command_to_scenario(*o.command, s, {});
  EXPECT_EQ(s.context, 16384u);        // --max-model-len
  EXPECT_EQ(s.cache_dtype, "FP8_E4M3");  // vLLM's fp8 cache is e4m3 (vllm/config/cache.py)
  const Plan p = make_plan(llama_70b(), s, box_of("H200x2"), o);
  ASSERT_EQ(p.engine.devices.size(), 2u);  // one answer per TP rank
  EXPECT_EQ(std::get<double>(setting(p.engine, "gpu_memory_utilization")), 0.8);
  EXPECT_EQ(std::get<std::string>(setting(p.engine, "kv_cache_dtype")), "fp8");
  EXPECT_EQ(std::get<uint64_t>(setting(p.engine, "tensor_parallel_size")), 2u);
  EXPECT_EQ(std::get<uint64_t>(setting(p.engine, "max_model_len")), 16384u);
  // Not given: the settings show what vLLM resolves for a card of 70 GiB and more
  // (vllm/engine/arg_utils.py defaults: 8,192 batched tokens, 1,024 sequences), not 0.
  EXPECT_EQ(std::get<uint64_t>(setting(p.engine, "max_num_batched_tokens")), 8192u);
  EXPECT_EQ(std::get<uint64_t>(setting(p.engine, "max_num_seqs")), 1024u);
  // The decode speed is one rank's reads plus the all-reduce of tensor parallelism.
  EXPECT_TRUE(has(p.decode.formula, "all-reduce (TP 2)")) << p.decode.formula;
}

TEST(PlanServingCommand, GivenContextWinsOverMaxModelLen) {
  const PlanOptions o = options_for("vllm serve x --max-model-len 16384");
  Scenario s;
  s.context = 4096;
  apply_command_to_scenario(*o.command, s, {.context = true});
  EXPECT_EQ(s.context, 4096u);
  EXPECT_EQ(s.cache_dtype, "F16");  // no fp8 in the command
  const Plan p = make_plan(llama_70b(), s, box_of("H200"), o);
  EXPECT_EQ(o.split, SplitMode::Layer);  // one GPU, nothing divided
  EXPECT_EQ(std::get<uint64_t>(setting(p.engine, "max_model_len")), 4096u);  // the plan's context
}

TEST(PlanServingCommand, SglangExpertParallelAndPipelineAcrossNodes) {
  const PlanOptions ep = options_for("python -m sglang.launch_server --model-path x --tp 8 --ep 8 --mem-fraction-static 0.85 --context-length 32768");
  EXPECT_EQ(ep.engine, EngineKind::Sglang);
  EXPECT_EQ(ep.split, SplitMode::TensorExpert);
  Scenario s;
  apply_command_to_scenario(*ep.command, s, {});
  EXPECT_EQ(s.context, 32768u);
  const Plan p = make_plan(llama_70b(), s, box_of("H200x8"), ep);
  EXPECT_EQ(p.engine.engine, EngineKind::Sglang);
  EXPECT_EQ(p.engine.devices.size(), 8u);
  // TP within a node, PP across nodes: the plan's tensor split over 2 nodes.
  const PlanOptions tp_pp = options_for("vllm serve x --tensor-parallel-size 8 --pipeline-parallel-size 2");
  EXPECT_EQ(tp_pp.split, SplitMode::Tensor);
  EXPECT_NO_THROW(serving_layout(*tp_pp.command, box_of("H200x8", 2), llama_70b(), tp_pp.split));
  EXPECT_EQ(options_for("vllm serve x -pp 4").split, SplitMode::Pipeline);
}

TEST(PlanServingCommand, RefusesWhatTheBoxOrTheFlagsCannotRun) {
  // TP 4 on 2 GPUs: vLLM would wait for ranks that do not exist.
  const PlanOptions tp4 = options_for("vllm serve x -tp 4");
  try {
    make_plan(llama_70b(), Scenario{}, box_of("H200x2"), tp4);
    FAIL() << "TP 4 on 2 GPUs accepted";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "--engine-command")) << e.what();
    EXPECT_TRUE(has(e.what(), "TP 4 x PP 1 = 4 ranks")) << e.what();
  }
  EXPECT_THROW(make_plan(llama_70b(), Scenario{}, Box{}, tp4), InputError);  // no GPUs named
  // TP 2 x PP 2 inside one 4-GPU node is not a split plan places.
  const PlanOptions tp2_pp2 = options_for("vllm serve x -tp 2 -pp 2");
  EXPECT_THROW(serving_layout(*tp2_pp2.command, box_of("H200x4"), llama_70b(), tp2_pp2.split), InputError);
  // A vLLM command with --engine sglang, a split that disagrees.
  EXPECT_THROW(options_for("vllm serve x -tp 2", "sglang"), InputError);
  EXPECT_THROW(options_for("vllm serve x -tp 2", "rule", "pp"), InputError);
  EXPECT_NO_THROW(options_for("vllm serve x -tp 2", "vllm", "tp"));
  // --n-cpu-moe is llama.cpp's placement.
  BoxInputs in;
  in.engine_command = "vllm serve x";
  in.n_cpu_moe = "4";
  EXPECT_THROW(in.to_options(), InputError);
}
