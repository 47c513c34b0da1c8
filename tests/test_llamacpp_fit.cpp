// What a pasted llama.cpp command leaves to llama.cpp (src/engines/engine_run.cpp, engines/llamacpp_fit.h):
// no -ngl is "auto", every layer on the GPUs (ggml-org/llama.cpp PR #15434, "llama: use max. GPU
// layers by default"); no -c is -c 0, the model's trained context (common/common.h: n_ctx 0); and
// --fit, on by default, lowers that context toward 4,096 tokens and then moves layers to the CPU
// until each GPU keeps 1,024 MiB free (common/common.h: fit_params_target, fit_params_min_ctx).
// Sources: engines/llamacpp_fit.h, plan.h llamacpp_fit_scenario, engines/engine.h engine_request.
#include <gtest/gtest.h>

#include "core/error.h"
#include "engines/engine.h"
#include "engines/llamacpp_fit.h"
#include "plan/plan.h"
#include "plan_fixtures.h"

using namespace vc;
using namespace vc::test;

namespace {
// A pasted llama.cpp command at a weights tier, as plan and check take it: the options carrying the
// command, and the scenario it sets (apply_command_to_scenario, nothing given by flags).
struct Pasted {
  Scenario scenario;
  PlanOptions options;
};
Pasted pasted(const std::string& command, const std::string& quant) {
  Pasted p;
  p.scenario.quant = quant;
  p.options.engine = EngineKind::LlamaCpp;
  p.options.command = parse_engine_command(command);
  apply_command_to_scenario(*p.options.command, p.scenario, ScenarioGiven{});
  return p;
}
}  // namespace

TEST(LlamaCppDefaults, WhatTheCommandLeavesToLlamaCpp) {
  const EngineRun bare = parse_engine_command("llama-server -m model.gguf");
  EXPECT_EQ(bare.placement.n_gpu_layers, 1u << 20);  // every layer (was 0, the CPU, before)
  EXPECT_TRUE(bare.llamacpp_defaults.ngl);
  EXPECT_TRUE(bare.llamacpp_defaults.ctx);
  EXPECT_TRUE(bare.llamacpp_defaults.fit);
  EXPECT_TRUE(parse_engine_command("llama-server -m m.gguf -ngl auto").llamacpp_defaults.ngl);
  EXPECT_TRUE(parse_engine_command("llama-server -m m.gguf -ngl -1").llamacpp_defaults.ngl);  // -1: auto (common/arg.cpp)
  EXPECT_FALSE(parse_engine_command("llama-server -m m.gguf -ngl all").llamacpp_defaults.ngl);
  const EngineRun twenty = parse_engine_command("llama-server -m m.gguf -ngl 20 -c 8192 -fit off");
  EXPECT_EQ(twenty.placement.n_gpu_layers, 20u);
  EXPECT_FALSE(twenty.llamacpp_defaults.ngl);
  EXPECT_FALSE(twenty.llamacpp_defaults.ctx);
  EXPECT_FALSE(twenty.llamacpp_defaults.fit);
  EXPECT_EQ(twenty.llamacpp.n_ctx, 8192u);
  EXPECT_TRUE(parse_engine_command("llama-server -m m.gguf -c 0").llamacpp_defaults.ctx);
  EXPECT_THROW(parse_engine_command("llama-server -m m.gguf -fit maybe"), InputError);
}

TEST(LlamaCppDefaults, NoContextFlagIsTheTrainedContextPerSequence) {
  const Model m = llama_70b();  // max_context 131,072 (its config's max_position_embeddings)
  EngineInputs in;
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf -np 4";
  const EngineRequest r = engine_request(m, Scenario{}, in, ScenarioGiven{});
  EXPECT_EQ(r.scenario.context, 131072u / 4);  // -c 0: n_ctx_train over the 4 sequences
  EXPECT_EQ(r.scenario.sequences, 4u);
  // --context given: the flag wins.
  Scenario asked;
  asked.context = 8192;
  const EngineRequest given = engine_request(m, asked, in, ScenarioGiven{.context = true});
  EXPECT_EQ(given.scenario.context, 8192u);
}

TEST(LlamaCppDefaults, FitLowersTheTrainedContextToTheMostThatKeeps1GiBFree) {
  // Llama 3.1 70B at Q4_K_M on one H100: the weights (~42 GB) plus 131,072 tokens of F16 cache
  // (80 layers x 8 KV heads x 128 x 2 x 2 B = 327,680 B a token: 42.9 GB) exceed 80 GB.
  const Model m = llama_70b();
  const auto [s, o] = pasted("llama-server -m Llama-3.1-70B-Q4_K_M.gguf", "Q4_K_M");
  ASSERT_TRUE(s.context_from_model);
  const Box box = box_of("h100-sxm");
  std::vector<std::string> notes;
  const Scenario fitted = llamacpp_fit_scenario(m, s, box, o, notes);
  EXPECT_FALSE(fitted.context_from_model);
  EXPECT_LT(fitted.context, 131072u);
  EXPECT_GT(fitted.context, 4096u);
  // The defining property: at this context every GPU keeps 1 GiB free, one token more does not.
  auto holds = [&](uint64_t ctx) {
    Scenario t = fitted;
    t.context = ctx;
    return llamacpp_fit_holds(run_engine(plan_engine_request(m, t, box, o)));
  };
  EXPECT_TRUE(holds(fitted.context));
  EXPECT_FALSE(holds(fitted.context + 1));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("--fit"), std::string::npos) << notes[0];
  // The plan carries the same context and says why.
  const Plan p = make_plan(m, s, box, o);
  EXPECT_EQ(p.estimate.scenario.context, fitted.context);
  EXPECT_TRUE(p.fits_on_devices);
  EXPECT_FALSE(p.llamacpp_offload && (p.llamacpp_offload->n_gpu_layers || p.llamacpp_offload->n_cpu_moe));
}

TEST(LlamaCppDefaults, FitOffKeepsTheTrainedContext) {
  const Model m = llama_70b();
  const auto [s, o] = pasted("llama-server -m Llama-3.1-70B-Q4_K_M.gguf -fit off", "Q4_K_M");
  std::vector<std::string> notes;
  EXPECT_EQ(llamacpp_fit_scenario(m, s, box_of("h100-sxm"), o, notes).context, 131072u);
}

TEST(LlamaCppDefaults, WhenTheFloorContextStillDoesNotFitLayersMoveToTheCpu) {
  // Q8_0 70B (~75 GB of weights) on one 24 GB RTX 4090: the context drops to the 4,096 floor,
  // then --fit's layer step (plan's offload search) keeps only some layers on the GPU.
  const Model m = llama_70b();
  const auto [s, o] = pasted("llama-server -m Llama-3.1-70B-Q8_0.gguf", "Q8_0");
  Box box = box_of("RTX 4090");
  box.ram_bytes = 256'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  const Plan p = make_plan(m, s, box, o);
  EXPECT_EQ(p.estimate.scenario.context, 4096u);
  ASSERT_TRUE(p.llamacpp_offload);
  ASSERT_TRUE(p.llamacpp_offload->n_gpu_layers);
  EXPECT_LT(*p.llamacpp_offload->n_gpu_layers, 81u);
  EXPECT_GT(*p.llamacpp_offload->n_gpu_layers, 0u);
  EXPECT_TRUE(p.llamacpp_offload->fits);
}

TEST(LlamaCppDefaults, EstimateOnAGpuStartsWhereFitLeavesTheContext) {
  // The same 70B at Q4_K_M on one H100 through estimate's request (the pasted command itself):
  // the context is lowered to the most that holds, and one token more does not hold.
  const Model m = llama_70b();
  EngineInputs in;
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf";
  in.gpu = "h100-sxm";
  const EngineRequest r = engine_request(m, Scenario{}, in, ScenarioGiven{});
  EXPECT_FALSE(r.scenario.context_from_model);
  EXPECT_LT(r.scenario.context, 131072u);
  EXPECT_GT(r.scenario.context, 4096u);
  auto holds = [&](uint64_t ctx) {
    EngineRequest probe = r;
    probe.scenario.context = ctx;
    return llamacpp_fit_holds(run_engine(probe));
  };
  EXPECT_TRUE(holds(r.scenario.context));
  EXPECT_FALSE(holds(r.scenario.context + 1));
  // Without a GPU nothing is lowered: the trained context, with the note saying where it came from.
  EngineInputs cpu = in;
  cpu.gpu.clear();
  const EngineRequest c = engine_request(m, Scenario{}, cpu, ScenarioGiven{});
  EXPECT_EQ(c.scenario.context, 131072u);
  ASSERT_FALSE(c.command->notes.empty());
  EXPECT_NE(c.command->notes.back().find("trained with, 131,072 tokens"), std::string::npos) << c.command->notes.back();
}
