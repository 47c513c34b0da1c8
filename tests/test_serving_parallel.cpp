// vLLM and SGLang data / expert parallel flags in a pasted command, under exactly the spellings each
// engine's own parser declares (vllm/engine/arg_utils.py; python/sglang/srt/server_args.py), what is
// refused (exit 2 / 400, naming what is accepted), and what plan makes of the degrees: DP replicas
// (memory per GPU one replica's, decode tokens added up), experts over TP x DP ranks in vLLM.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "cli_runner.h"
#include "core/error.h"
#include "engines/engine_run.h"
#include "plan/box_inputs.h"
#include "plan/plan_report.h"
#include "plan/serving_command.h"
#include "plan_fixtures.h"
#include "report/engine_report.h"
#include "server/api.h"
#include "server/request_params.h"

using namespace vc;
using namespace vc::test;

namespace {

bool has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

// The InputError a command raises: its subject (the flag) and message.
std::pair<std::string, std::string> refusal(const std::string& command) {
  try {
    parse_engine_command(command);
  } catch (const InputError& e) {
    return {e.subject(), e.what()};
  }
  ADD_FAILURE() << "accepted: " << command;
  return {};
}

PlanOptions options_for(const std::string& command) {
  BoxInputs in;
  in.engine_command = command;
  return in.to_options();
}

const Allocation& weights_line(const DeviceAllocation& d) {
  for (const auto& a : d.lines) if (a.kind == AllocKind::Weights) return a;
  throw std::runtime_error("no weights line on " + d.name);
}

}  // namespace

TEST(ServingParallelFlags, VllmSpellingsFromArgUtils) {
  // Every spelling vllm/engine/arg_utils.py declares, with =, and FlexibleArgumentParser's '_' as '-'.
  for (const char* c : {"vllm serve m -tp 2", "vllm serve m --tensor-parallel-size 2", "vllm serve m --tensor-parallel-size=2", "vllm serve m -tp=2",
                        "vllm serve m --tensor_parallel_size 2"}) {
    EXPECT_EQ(parse_engine_command(c).vllm.kv.tensor_parallel, 2u) << c;
  }
  for (const char* c : {"vllm serve m -pp 3", "vllm serve m --pipeline-parallel-size=3", "vllm serve m --pipeline_parallel_size=3"}) {
    EXPECT_EQ(parse_engine_command(c).vllm.kv.pipeline_parallel, 3u) << c;
  }
  for (const char* c : {"vllm serve m -dp 4", "vllm serve m --data-parallel-size 4", "vllm serve m --data-parallel-size=4", "vllm serve m -dp=4"}) {
    EXPECT_EQ(parse_engine_command(c).parallel.data_parallel, 4u) << c;
  }
  EXPECT_EQ(parse_engine_command("vllm serve m -dp 4 -dpl 2").parallel.data_parallel_local, 2u);
  EXPECT_EQ(parse_engine_command("vllm serve m -dp 4 --data-parallel-size-local=4").parallel.data_parallel_local, 4u);
  EXPECT_TRUE(parse_engine_command("vllm serve m --enable-expert-parallel").parallel.expert_parallel);
  EXPECT_TRUE(parse_engine_command("vllm serve m --enable_expert_parallel").parallel.expert_parallel);
  EXPECT_FALSE(parse_engine_command("vllm serve m --no-enable-expert-parallel").parallel.expert_parallel);
  // The data-parallel address flags take their values without leaving them behind as flags.
  const EngineRun r = parse_engine_command("vllm serve m -dp 2 -dpa 10.0.0.1 -dpp 13345 --data-parallel-backend ray");
  EXPECT_EQ(r.parallel.data_parallel, 2u);
  EXPECT_TRUE(r.notes.empty()) << r.notes.front();
}

TEST(ServingParallelFlags, SglangSpellingsFromServerArgs) {
  for (const char* c : {"sglang serve --model-path m --tp 4", "sglang serve --model-path m --tp-size 4", "sglang serve --model-path m --tensor-parallel-size=4",
                        "python -m sglang.launch_server --model-path m --tp-size=4"}) {
    EXPECT_EQ(parse_engine_command(c).sglang.tensor_parallel, 4u) << c;
  }
  for (const char* c : {"sglang serve --model-path m --pp-size 2", "sglang serve --model-path m --pipeline-parallel-size=2"}) {
    EXPECT_EQ(parse_engine_command(c).sglang.pipeline_parallel, 2u) << c;
  }
  for (const char* c : {"sglang serve --model-path m --dp 2", "sglang serve --model-path m --dp-size 2", "sglang serve --model-path m --data-parallel-size=2"}) {
    EXPECT_EQ(parse_engine_command(c).parallel.data_parallel, 2u) << c;
  }
  for (const char* c : {"sglang serve --model-path m --tp 8 --ep 4", "sglang serve --model-path m --tp 8 --ep-size 4",
                        "sglang serve --model-path m --tp 8 --expert-parallel-size=4"}) {
    const ServingParallel p = parse_engine_command(c).parallel;
    EXPECT_EQ(p.expert_parallel_size, 4u) << c;
    EXPECT_TRUE(p.expert_parallel) << c;
  }
  // --enable-ep-moe: server_args.py sets ep_size = tp_size.
  EXPECT_EQ(parse_engine_command("sglang serve --model-path m --tp 8 --enable-ep-moe").parallel.expert_parallel_size, 8u);
  EXPECT_FALSE(parse_engine_command("sglang serve --model-path m --tp 8 --ep 1").parallel.expert_parallel);
  EXPECT_TRUE(parse_engine_command("sglang serve --model-path m --tp 8 --dp 8 --enable-dp-attention").parallel.dp_attention);
  // dp_size 1 turns DP attention off (server_args.py _handle_data_parallelism).
  EXPECT_FALSE(parse_engine_command("sglang serve --model-path m --tp 8 --enable-dp-attention").parallel.dp_attention);
}

TEST(ServingParallelFlags, RefusesWhatTheEnginesRefuseOrContradicts) {
  // SGLang's argparse: --pp is a prefix of three flags; underscores are not read as dashes.
  auto [flag, message] = refusal("sglang serve --model-path m --pp 2");
  EXPECT_EQ(flag, "--pp");
  EXPECT_TRUE(has(message, "--pp-size")) << message;
  std::tie(flag, message) = refusal("sglang serve --model-path m --tp_size 2");
  EXPECT_EQ(flag, "--tp_size");
  EXPECT_TRUE(has(message, "--tensor-parallel-size")) << message;
  // Values: whole numbers 1 to 1024; switches take none (BooleanOptionalAction refuses one).
  EXPECT_EQ(refusal("vllm serve m -dp 0").first, "-dp");
  EXPECT_EQ(refusal("vllm serve m -dp two").first, "-dp");
  EXPECT_EQ(refusal("vllm serve m --data-parallel-size=").first, "--data-parallel-size");
  std::tie(flag, message) = refusal("vllm serve m --enable-expert-parallel=true");
  EXPECT_EQ(flag, "--enable-expert-parallel");
  EXPECT_TRUE(has(message, "--no-enable-expert-parallel")) << message;
  // One setting, two values: the engine keeps the last silently; here it is refused.
  std::tie(flag, message) = refusal("vllm serve m -tp 2 --tensor-parallel-size 4");
  EXPECT_EQ(flag, "--tensor-parallel-size");
  EXPECT_TRUE(has(message, "-tp gave 2")) << message;
  EXPECT_NO_THROW(parse_engine_command("vllm serve m -tp 2 --tensor-parallel-size 2"));  // the same value twice is no contradiction
  EXPECT_EQ(refusal("vllm serve m --enable-expert-parallel --no-enable-expert-parallel").first, "--no-enable-expert-parallel");
  // 4 replicas on this node out of 2: vLLM places -dpl of the -dp replicas per node.
  EXPECT_EQ(refusal("vllm serve m -dp 2 -dpl 4").first, "-dpl");
  EXPECT_EQ(refusal("vllm serve m -dp 4 -dpl 3").first, "-dpl");
  // SGLang: EP ranks split the TP ranks (8 % 3 != 0); DP attention asserts tp % dp == 0.
  EXPECT_EQ(refusal("sglang serve --model-path m --tp 8 --ep 3").first, "--ep");
  EXPECT_EQ(refusal("sglang serve --model-path m --tp 4 --ep 8").first, "--ep");
  EXPECT_EQ(refusal("sglang serve --model-path m --tp 8 --dp 3 --enable-dp-attention").first, "--dp");
  EXPECT_EQ(refusal("sglang serve --model-path m --tp 4 --ep-size 2 --enable-ep-moe").first, "--enable-ep-moe");
}

TEST(ServingParallelFlags, CliExitsTwoAndApiAnswers400) {
  const CliResult r = run_cli("plan llama-3.1-8b --gpu H200x2 --engine-command 'sglang serve --model-path m --pp 2'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(has(r.output, "--pp-size")) << r.output;
  const auto a = server::call_api("check", server::RequestParams::from_pairs({{"gpu", "H200"}, {"engine-command", "vllm serve m --enable-expert-parallel=1"}}));
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_TRUE(has(a.body, "--no-enable-expert-parallel")) << a.body;
}

// Data parallel on a dense model: two replicas of TP 4 on 8 H200s. Each replica is the plan of
// `-tp 4` on 4 H200s: the same per-GPU answer, and decode tokens add up over the replicas.
TEST(ServingParallelPlan, VllmDataParallelIsReplicas) {
  const Model m = llama_70b();
  const Plan dp = make_plan(m, Scenario{}, box_of("H200x8"), options_for("vllm serve x -tp 4 -dp 2"));
  const Plan one = make_plan(m, Scenario{}, box_of("H200x4"), options_for("vllm serve x -tp 4"));
  EXPECT_EQ(dp.replicas, 2u);
  EXPECT_EQ(dp.replicated_box, box_of("H200x8").describe());
  ASSERT_EQ(dp.engine.devices.size(), 4u);  // one replica's TP ranks
  EXPECT_EQ(engine_json(dp.engine), engine_json(one.engine));
  // By hand: BF16 weights 2 x 70,553,706,496 = 141,107,412,992 B, divided over the replica's TP 4.
  EXPECT_TRUE(has(weights_line(dp.engine.devices[0]).formula, "141,107,412,992 / (tp 4 x pp 1)")) << weights_line(dp.engine.devices[0]).formula;
  EXPECT_DOUBLE_EQ(dp.decode.expected_tok_s, one.decode.expected_tok_s);
  ASSERT_GT(one.decode.expected_tok_s, 0);
  // Two replicas decode twice one's tokens, and the range doubles with them.
  EXPECT_TRUE(has(dp.verdict, fmt::format("about {:.2f} tok/s (estimate, likely {:.2f}-{:.2f}) in all", 2 * one.decode.expected_tok_s, 2 * one.decode.low_tok_s,
                                          2 * one.decode.high_tok_s)))
      << dp.verdict;
  const nlohmann::json j = plan_json(dp, solve(dp));
  EXPECT_EQ(j.at("data_parallel").at("replicas"), 2);
  EXPECT_EQ(j.at("data_parallel").at("gpus_per_replica"), 4);
  EXPECT_DOUBLE_EQ(j.at("data_parallel").at("aggregate_decode_tok_s").get<double>(), 2 * one.decode.expected_tok_s);
  // Replicas on whole nodes: TP 8 x DP 2 over two nodes of 8, each replica one node.
  const Plan nodes = make_plan(m, Scenario{}, box_of("H200x8", 2), options_for("vllm serve x -tp 8 -dp 2"));
  EXPECT_EQ(nodes.replicas, 2u);
  EXPECT_EQ(nodes.engine.devices.size(), 8u);
  // Ranks the box does not have, or a replica split over nodes, are refused naming the command.
  EXPECT_THROW(make_plan(m, Scenario{}, box_of("H200x4"), options_for("vllm serve x -tp 4 -dp 2")), InputError);
  EXPECT_THROW(make_plan(m, Scenario{}, box_of("H200x3", 2), options_for("vllm serve x -tp 2 -dp 3")), InputError);
  EXPECT_THROW(make_plan(m, Scenario{}, box_of("H200x8"), options_for("vllm serve x -tp 4 -dp 2 -dpl 1")), InputError);
}

// vLLM shards an MoE's experts over TP x DP ranks: `-dp 4 --enable-expert-parallel` is the plan's
// own ep split (the command plan prints for --split ep), one engine over the 4 ranks.
TEST(ServingParallelPlan, VllmDataParallelOnMoeIsTheEpSplit) {
  const Model& moe = *Catalogue::builtin().find("qwen3-30b-a3b");
  const Plan dp = make_plan(moe, Scenario{}, box_of("H200x4"), options_for("vllm serve Qwen/Qwen3-30B-A3B -dp 4 --enable-expert-parallel"));
  EXPECT_EQ(dp.replicas, 1u);
  EXPECT_EQ(dp.options.split, SplitMode::Expert);
  ASSERT_EQ(dp.engine.devices.size(), 4u);
  BoxInputs ep;
  ep.engine = "vllm";
  ep.split = "ep";
  ep.gpu = "H200x4";
  const Plan own = make_plan(moe, Scenario{}, ep.to_box(), ep.to_options());
  ASSERT_EQ(own.engine.devices.size(), 4u);
  // Each DP rank holds 32 of the 128 experts a layer and the rest whole, as the plan's ep split answers.
  EXPECT_EQ(weights_line(dp.engine.devices[0]).bytes, weights_line(own.engine.devices[0]).bytes);
  EXPECT_TRUE(has(weights_line(dp.engine.devices[0]).formula, "+ 32 of 128 experts a layer")) << weights_line(dp.engine.devices[0]).formula;
  // Attention TP 2 inside DP 2 on an MoE is not modelled: refused, naming what is accepted.
  try {
    make_plan(moe, Scenario{}, box_of("H200x4"), options_for("vllm serve x -tp 2 -dp 2 --enable-expert-parallel"));
    FAIL() << "TP 2 x DP 2 on an MoE accepted";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "-dp N --enable-expert-parallel")) << e.what();
  }
}

TEST(ServingParallelPlan, SglangDpAttentionAndReplicas) {
  const Model& moe = *Catalogue::builtin().find("qwen3-30b-a3b");
  // The plan's own SGLang ep command: DP attention over all 8 TP ranks, experts over 8 EP ranks.
  const PlanOptions o = options_for("python -m sglang.launch_server --model-path m --tp 8 --dp 8 --ep 8 --enable-dp-attention");
  EXPECT_EQ(o.split, SplitMode::Expert);
  const Plan p = make_plan(moe, Scenario{}, box_of("H200x8"), o);
  EXPECT_EQ(p.replicas, 1u);
  EXPECT_EQ(p.engine.devices.size(), 8u);  // DP attention runs inside the TP ranks: 8 GPUs, not 64
  // DP attention over fewer groups than TP ranks (attention TP 2 inside each) is not modelled.
  EXPECT_THROW(options_for("python -m sglang.launch_server --model-path m --tp 8 --dp 4 --enable-dp-attention"), InputError);
  // --dp without DP attention: whole replicas (SGLang's DP controller), MoE or not.
  const Plan reps = make_plan(moe, Scenario{}, box_of("H200x4"), options_for("python -m sglang.launch_server --model-path m --tp 2 --dp 2"));
  EXPECT_EQ(reps.replicas, 2u);
  EXPECT_EQ(reps.engine.devices.size(), 2u);
}

// --enable-dp-lm-head is read from a pasted SGLang command (a switch, store_true in server_args.py).
TEST(ServingParallelFlags, SglangDpLmHeadIsRead) {
  EXPECT_TRUE(parse_engine_command("sglang serve --model-path m --tp 8 --dp 8 --enable-dp-attention --enable-dp-lm-head").sglang.enable_dp_lm_head);
  EXPECT_FALSE(parse_engine_command("sglang serve --model-path m --tp 8 --dp 8 --enable-dp-attention").sglang.enable_dp_lm_head);
}
