// What a pasted llama.cpp command leaves to llama.cpp (src/engines/engine_run.cpp, engines/llamacpp_fit.h):
// no -ngl is "auto", every layer on the GPUs (ggml-org/llama.cpp PR #15434, "llama: use max. GPU
// layers by default"); no -c is -c 0, the model's trained context (common/common.h: n_ctx 0); and
// --fit, on by default, lowers that context toward 4,096 tokens and then moves layers to the CPU
// until each GPU keeps 1,024 MiB free (common/common.h: fit_params_target, fit_params_min_ctx).
// Sources: engines/llamacpp_fit.h (common/fit.cpp replayed), plan.h llamacpp_fit_plan, engines/engine.h engine_request.
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
  // llama-server's -np defaults to -1, auto: 4 slots sharing one unified cache (tools/server/server.cpp:
  // "n_parallel is set to auto, using n_parallel = 4 and kv_unified = true"); llama-cli keeps 1.
  EXPECT_EQ(bare.llamacpp.n_seq, 4u);
  EXPECT_TRUE(bare.llamacpp.kv_unified);
  EXPECT_EQ(parse_engine_command("llama-server -m m.gguf -np -1").llamacpp.n_seq, 4u);
  const EngineRun two = parse_engine_command("llama-server -m m.gguf -np 2");
  EXPECT_EQ(two.llamacpp.n_seq, 2u);
  EXPECT_FALSE(two.llamacpp.kv_unified);
  EXPECT_EQ(parse_engine_command("llama-cli -m m.gguf").llamacpp.n_seq, 1u);
  try {  // 0 is refused, as llama.cpp's arg.cpp refuses it; the message names -np and what is accepted
    parse_engine_command("llama-server -m m.gguf -np 0");
    ADD_FAILURE() << "-np 0 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.subject(), "-np");
    EXPECT_NE(std::string(e.what()).find("-1 (auto"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(parse_engine_command("llama-cli -m m.gguf").llamacpp.kv_unified);
}

TEST(LlamaCppDefaults, NoContextFlagIsTheTrainedContextPerStream) {
  // common/fit.cpp (on by default): -c unset is n_ctx_train for each KV stream, -np of them unless
  // the cache is unified; with -fit off, llama_context takes n_ctx_train for all sequences together.
  const Model m = llama_70b();  // max_context 131,072 (its config's max_position_embeddings)
  EngineInputs in;
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf -np 4";
  const EngineRequest r = engine_request(m, Scenario{}, in, ScenarioGiven{});
  EXPECT_EQ(r.scenario.context, 131072u);  // 4 streams of 131,072
  EXPECT_EQ(r.scenario.sequences, 4u);
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf";  // auto: 4 slots, one unified stream of 131,072
  EXPECT_EQ(engine_request(m, Scenario{}, in, ScenarioGiven{}).scenario.context, 131072u / 4);
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf -np 4 -fit off";
  EXPECT_EQ(engine_request(m, Scenario{}, in, ScenarioGiven{}).scenario.context, 131072u / 4);
  // --context given: the flag wins.
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf -np 4";
  Scenario asked;
  asked.context = 8192;
  const EngineRequest given = engine_request(m, asked, in, ScenarioGiven{.context = true});
  EXPECT_EQ(given.scenario.context, 8192u);
}

namespace {
constexpr int64_t GiB = int64_t{1} << 30;
constexpr int64_t MiB = int64_t{1} << 20;

// A made-up model for llamacpp_fit's steps, its memory worked out by hand: the output layer 1 GiB
// and a 0.5 GiB compute buffer on every GPU holding a layer; each repeating layer 1 GiB of
// attention plus, dense, 1 GiB of FFN or, MoE, three 1 GiB expert tensors (up, gate, down);
// n_ctx x `per_token` of cache on the GPU that holds the output layer. -ts counts layers per GPU,
// the output layer last (fit.cpp's use of -ts).
struct HandModel {
  uint64_t layers = 10;
  bool moe = false;
  int64_t per_token = 0;
  std::size_t gpus = 1;
  LlamaCppFitUse operator()(uint64_t n_ctx, const LlamaCppPlacementSettings& p) const {
    LlamaCppFitUse u;
    u.gpu_used.assign(gpus, 0);
    u.gpu_model.assign(gpus, 0);
    const uint64_t ngl = std::min<uint64_t>(p.n_gpu_layers, layers + 1);
    std::vector<uint64_t> count(gpus, 0);
    if (gpus == 1 || p.tensor_split.empty()) {
      for (uint64_t i = 0; i < ngl; ++i) ++count[gpus - 1 - i % gpus];  // a default split: near even
    } else {
      for (std::size_t d = 0; d < gpus; ++d) count[d] = static_cast<uint64_t>(p.tensor_split[d]);
    }
    uint64_t il = layers + 1 - ngl;
    for (std::size_t d = 0; d < gpus; ++d) {
      for (uint64_t k = 0; k < count[d]; ++k, ++il) {
        int64_t bytes = 0;
        if (il == layers) {
          bytes = GiB + static_cast<int64_t>(n_ctx) * per_token;  // the output layer and the cache
        } else if (!moe) {
          bytes = 2 * GiB;
        } else {
          int64_t stays = 3;  // up, gate, down
          if (il < p.cpu_moe_layers) stays = 0;
          for (const auto& o : p.fit_overflow) {
            if (o.layer != il) continue;
            stays = o.fraction == LlamaCppLayerFraction::Gate ? 2 : o.fraction == LlamaCppLayerFraction::Up ? 1 : 0;
          }
          bytes = GiB + stays * GiB;
        }
        u.gpu_model[d] += bytes;
        u.gpu_used[d] += bytes;
      }
      if (count[d]) u.gpu_used[d] += GiB / 2;
    }
    return u;
  }
};
// A start with -c given and every layer asked for the GPUs, each GPU `free` bytes free.
LlamaCppFitStart layers_start(uint64_t layers, bool moe, std::vector<uint64_t> free) {
  LlamaCppFitStart s;
  s.layers = layers;
  s.moe = moe;
  s.n_ctx = 4096;
  s.gpu_free = std::move(free);
  s.placement.n_gpu_layers = 1u << 20;
  s.placement.devices = s.gpu_free.size();
  return s;
}
}  // namespace

TEST(LlamaCppFit, ContextInterpolatedOnTheProjectedMemory) {
  // One GPU of 24 GiB + 100 MiB, -c unset, n_ctx_train 131,072: 10 GiB of weights and compute (a
  // 9.5 GiB output layer stands in) and 128 KiB of cache a token. At 131,072: 10 + 16 = 26 GiB, over
  // the 23 GiB + 100 MiB target; at 4,096 (-fitc): 10.5 GiB. Interpolated: 4,096 + 126,976 x
  // (12,900 MiB / 15,872 MiB) = 4,096 + 103,200 = 107,296, rounded down to 256: 107,264.
  const HandModel hand{.layers = 0, .per_token = 128 * 1024};
  LlamaCppFitStart s;
  s.layers = 0;
  s.trained = 131072;
  s.gpu_free = {static_cast<uint64_t>(24 * GiB + 100 * MiB)};
  s.placement.n_gpu_layers = 1u << 20;
  auto measure = [&](uint64_t n_ctx, const LlamaCppPlacementSettings& p) {
    LlamaCppFitUse u = hand(n_ctx, p);
    u.gpu_used[0] += 9 * GiB;  // with the output layer's 1 GiB and no compute buffer counted twice: 10 GiB fixed
    u.gpu_used[0] -= GiB / 2;
    return u;
  };
  const LlamaCppFitOutcome f = llamacpp_fit(s, measure);
  EXPECT_EQ(f.n_ctx, 107264u);
  EXPECT_FALSE(f.layers_moved);
  // Two streams (-np 2, not unified): 2 x 131,072 tokens at half the cache a token is the same
  // memory; the floor is 2 x 4,096 and the rounding 512: 8,192 + 253,952 x 12,900 / 15,872 =
  // 214,592, rounded down to 512: 214,528.
  const HandModel half{.layers = 0, .per_token = 64 * 1024};
  s.sequences = 2;
  auto measure2 = [&](uint64_t n_ctx, const LlamaCppPlacementSettings& p) {
    LlamaCppFitUse u = half(n_ctx, p);
    u.gpu_used[0] += 9 * GiB - GiB / 2;
    return u;
  };
  EXPECT_EQ(llamacpp_fit(s, measure2).n_ctx, 214528u);
  // -c given: --fit leaves it, and with -ngl given moves no layers either.
  s.n_ctx = 200000;
  s.ngl_given = true;
  const LlamaCppFitOutcome given = llamacpp_fit(s, measure2);
  EXPECT_EQ(given.n_ctx, 200000u);
  EXPECT_FALSE(given.layers_moved);
}

TEST(LlamaCppFit, DenseLayersFilledBackToFrontByFalsePosition) {
  // 10 layers of 2 GiB, the output layer 1 GiB, 0.5 GiB compute; -c given. One GPU of 10 GiB: the
  // target is 9 GiB. All 11 offloaded: 21.5 GiB. False position from 0 (0 GiB) and 11 (21.5 GiB):
  // 11 x 9 / 21.5 = 4.6 -> 4 layers (0.5 + 1 + 3 x 2 = 7.5 GiB, holds); from 4 and 11:
  // 7 x 1.5 / 14 = 0.75 -> 1 -> 5 layers (9.5 GiB, over): -ngl 4.
  const HandModel hand{.layers = 10};
  LlamaCppFitStart s = layers_start(10, false, {static_cast<uint64_t>(10 * GiB)});
  const LlamaCppFitOutcome one = llamacpp_fit(s, hand);
  EXPECT_TRUE(one.layers_moved);
  EXPECT_EQ(one.placement.n_gpu_layers, 4u);
  EXPECT_TRUE(one.placement.tensor_split.empty());
  EXPECT_TRUE(one.placement.fit_overflow.empty());
  // Two GPUs of 8 GiB (targets 7 GiB), the last first. CUDA1: 11 x 7 / 21.5 -> 3 (output + 2 layers:
  // 5.5 GiB), then 8 x 1.5 / 16 -> 1 -> 4 (7.5, over): 3. CUDA0 (8 left, 16.5 GiB):
  // 8 x 7 / 16.5 -> 3 (6.5 GiB), then 5 x 0.5 / 10 -> 1 -> 4 (8.5, over): 3. -ngl 6 -ts 3,3.
  const HandModel two{.layers = 10, .gpus = 2};
  s = layers_start(10, false, {static_cast<uint64_t>(8 * GiB), static_cast<uint64_t>(8 * GiB)});
  const LlamaCppFitOutcome f = llamacpp_fit(s, two);
  EXPECT_EQ(f.placement.n_gpu_layers, 6u);
  EXPECT_EQ(f.placement.tensor_split, (std::vector<double>{3, 3}));
  // -ts given with two GPUs (5 and 6 layers: CUDA0 over its target): no layer step.
  s.split_given = true;
  s.placement.tensor_split = {5, 6};
  EXPECT_FALSE(llamacpp_fit(s, two).layers_moved);
}

TEST(LlamaCppFit, MoeDenseFirstThenWholeLayersThenOnePartLayer) {
  // 4 MoE layers (1 GiB attention + three 1 GiB expert tensors), output 1 GiB, compute 0.5 GiB; one
  // GPU of 12 GiB (target 11 GiB). Everything: 17.5 GiB. Experts all on the CPU: 5.5 GiB, a surplus
  // of 5.5 GiB, so step 4 runs.
  // Step 3: 5 layers, 4 partial (the output layer is never partial): fit.cpp's overrides start after
  //   the first offloaded layer, so layer 0 stays whole, layers 1-3 keep attention only (layer 4 is
  //   the output): 0.5 + 1 + 4 + 3 = 8.5 GiB, holds.
  // Step 4: all whole is 17.5 GiB; from 1 whole layer (8.5) and 5 (17.5): 4 x 2.5 / 9 -> 1 -> layers
  //   0-1 whole: 11.5 GiB, over. Then one more layer in part: layer 1 keeping up (9.5 GiB, under 11),
  //   then gate too (10.5 GiB, under 11): layer 1 sends only ffn_down to the CPU.
  const HandModel hand{.layers = 4, .moe = true};
  const LlamaCppFitOutcome f = llamacpp_fit(layers_start(4, true, {static_cast<uint64_t>(12 * GiB)}), hand);
  EXPECT_TRUE(f.layers_moved);
  EXPECT_EQ(f.placement.n_gpu_layers, 5u);
  ASSERT_EQ(f.placement.fit_overflow.size(), 4u);
  EXPECT_EQ(f.placement.fit_overflow[0].layer, 1u);
  EXPECT_EQ(f.placement.fit_overflow[0].fraction, LlamaCppLayerFraction::Gate);
  EXPECT_EQ(f.placement.fit_overflow[0].buffer, 0u);  // the CPU
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(f.placement.fit_overflow[i].layer, 1u + i);
    EXPECT_EQ(f.placement.fit_overflow[i].fraction, LlamaCppLayerFraction::Moe);
  }
  EXPECT_EQ(hand(4096, f.placement).gpu_used[0], 10 * GiB + GiB / 2);
}

TEST(LlamaCppFit, OverflowMovesTheTensorsFitCppPatternsName) {
  // fit.cpp's patterns: ATTN "blk.N.ffn_(gate|up|gate_up|down).*", UP "ffn_(gate|gate_up|down).*",
  // GATE "ffn_down.*", MOE "ffn_(up|down|gate_up|gate)_(ch|)exps".
  LlamaCppPlacementSettings s;
  s.fit_overflow = {{3, LlamaCppLayerFraction::Up, 2}, {4, LlamaCppLayerFraction::Moe, 0}};
  EXPECT_EQ(fit_overflow_buffer(s, 3, "blk.3.ffn_gate.weight"), "CUDA1");
  EXPECT_EQ(fit_overflow_buffer(s, 3, "blk.3.ffn_down_exps.weight"), "CUDA1");
  EXPECT_EQ(fit_overflow_buffer(s, 3, "blk.3.ffn_gate_inp.weight"), "CUDA1");  // ".*" after ffn_gate: the router too
  EXPECT_FALSE(fit_overflow_buffer(s, 3, "blk.3.ffn_up.weight"));
  EXPECT_FALSE(fit_overflow_buffer(s, 3, "blk.3.attn_q.weight"));
  EXPECT_EQ(fit_overflow_buffer(s, 4, "blk.4.ffn_gate_up_exps.weight"), "CPU");
  EXPECT_EQ(fit_overflow_buffer(s, 4, "ffn_up_exps.weight"), "CPU");  // a catalogue model's made-up part name
  EXPECT_FALSE(fit_overflow_buffer(s, 4, "blk.4.ffn_up_shexp.weight"));
  EXPECT_FALSE(fit_overflow_buffer(s, 5, "blk.5.ffn_up_exps.weight"));
}

TEST(LlamaCppDefaults, FitLowersTheTrainedContextWhereAGpuIsShort) {
  // Llama 3.1 70B at Q4_K_M on one H100, -np 1: the weights (~42 GB) plus 131,072 tokens of F16
  // cache (80 layers x 8 KV heads x 128 x 2 x 2 B = 327,680 B a token: 42.9 GB) exceed 80 GB.
  const Model m = llama_70b();
  const auto [s, o] = pasted("llama-server -m Llama-3.1-70B-Q4_K_M.gguf -np 1", "Q4_K_M");
  ASSERT_TRUE(s.context_from_model);
  const Box box = box_of("h100-sxm");
  std::vector<std::string> notes;
  const LlamaCppFitted fitted = llamacpp_fit_plan(m, s, box, o, notes);
  EXPECT_FALSE(fitted.scenario.context_from_model);
  const uint64_t ctx = fitted.scenario.context;
  EXPECT_LT(ctx, 131072u);
  EXPECT_GT(ctx, 4096u);
  EXPECT_EQ(ctx % 256, 0u);  // "round down context for CUDA backend"
  // The cache grows linearly with the context, so the interpolation lands on the most that leaves
  // 1 GiB of the H100's free memory (its capacity less the CUDA context, kLlamaCppCudaContextBytes),
  // to the 256-token step: that context does, 256 tokens more do not.
  auto holds = [&](uint64_t c) {
    Scenario t = fitted.scenario;
    t.context = c;
    const LlamaCppFitUse u = llamacpp_fit_use(run_engine(plan_engine_request(m, t, box, fitted.options)), 1);
    return u.gpu_used[0] + static_cast<int64_t>(kLlamaCppFitMargin + kLlamaCppCudaContextBytes) <= static_cast<int64_t>(box.gpus[0].memory_bytes);
  };
  EXPECT_TRUE(holds(ctx));
  EXPECT_FALSE(holds(ctx + 256));
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("interpolated"), std::string::npos) << notes.back();
  // The plan and estimate carry the same context.
  const Plan p = make_plan(m, s, box, o);
  EXPECT_EQ(p.estimate.scenario.context, ctx);
  EXPECT_TRUE(p.fits_on_devices);
  EngineInputs in;
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf -np 1";
  in.gpu = "h100-sxm";
  EXPECT_EQ(engine_request(m, Scenario{}, in, ScenarioGiven{}).scenario.context, ctx);
}

TEST(LlamaCppDefaults, FitOffKeepsTheTrainedContext) {
  const Model m = llama_70b();
  const auto [s, o] = pasted("llama-server -m Llama-3.1-70B-Q4_K_M.gguf -fit off -np 1", "Q4_K_M");
  std::vector<std::string> notes;
  EXPECT_EQ(llamacpp_fit_plan(m, s, box_of("h100-sxm"), o, notes).scenario.context, 131072u);
}

TEST(LlamaCppDefaults, WhenTheFloorContextStillDoesNotFitLayersMoveToTheCpu) {
  // Q8_0 70B (~75 GB of weights) on one 24 GB RTX 4090: the context drops to the -fitc floor
  // (4,096 cells shared by the 4 auto slots), then --fit's layer step keeps the most layers that
  // leave the GPU 1 GiB free: that many hold, one more does not.
  const Model m = llama_70b();
  const auto [s, o] = pasted("llama-server -m Llama-3.1-70B-Q8_0.gguf", "Q8_0");
  Box box = box_of("RTX 4090");
  box.ram_bytes = 256'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  const Plan p = make_plan(m, s, box, o);
  EXPECT_EQ(p.estimate.scenario.context * p.estimate.scenario.sequences, 4096u);
  ASSERT_TRUE(p.llamacpp_offload);
  EXPECT_TRUE(p.llamacpp_offload->fitted);
  EXPECT_FALSE(p.llamacpp_offload->given);
  ASSERT_TRUE(p.llamacpp_offload->n_gpu_layers);
  const uint64_t ngl = *p.llamacpp_offload->n_gpu_layers;
  EXPECT_LT(ngl, 81u);
  EXPECT_GT(ngl, 0u);
  EXPECT_TRUE(p.llamacpp_offload->fits);
  auto holds_with = [&](uint64_t layers) {  // the 4090's free memory (less its CUDA context) keeps 1 GiB
    LlamaCppPlacementSettings pl = p.llamacpp_offload->placement;
    pl.n_gpu_layers = layers;
    const LlamaCppFitUse u = llamacpp_fit_use(run_engine(plan_engine_request(m, p.estimate.scenario, box, p.options, pl)), 1);
    return u.gpu_used[0] + static_cast<int64_t>(kLlamaCppFitMargin + kLlamaCppCudaContextBytes) <= static_cast<int64_t>(box.gpus[0].memory_bytes);
  };
  EXPECT_TRUE(holds_with(ngl));
  EXPECT_FALSE(holds_with(ngl + 1));
  // estimate's request makes the same placement.
  EngineInputs in;
  in.command = "llama-server -m Llama-3.1-70B-Q8_0.gguf";
  in.gpu = "RTX 4090";
  Scenario q8;
  q8.quant = "Q8_0";
  const EngineRequest r = engine_request(m, q8, in, ScenarioGiven{.quant = true});
  EXPECT_EQ(r.command->placement.n_gpu_layers, ngl);
  EXPECT_TRUE(r.command->llamacpp_defaults.layers_fitted);
}

TEST(LlamaCppDefaults, EstimateWithoutAGpuKeepsTheTrainedContext) {
  // No box: nothing to fit against, the context --fit starts from (one unified stream of n_ctx_train
  // over the 4 auto slots), with the note saying where it came from.
  const Model m = llama_70b();
  EngineInputs in;
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf";
  const EngineRequest c = engine_request(m, Scenario{}, in, ScenarioGiven{});
  EXPECT_EQ(c.scenario.context * c.scenario.sequences, 131072u);
  bool said = false;
  for (const auto& n : c.command->notes) said = said || n.find("trained with, 131,072 tokens") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(LlamaCppDefaults, WithoutAGpuTheContextIsFittedToTheRam) {
  // A box with 16 GB of RAM and no GPU: nothing goes to a GPU whatever -ngl says (before
  // 2026-12-02 plan sized a pasted command's layers on a CUDA0 the box does not have), and --fit's
  // host path lowers the context against the RAM (fit.cpp: "projected to use ... of host memory").
  const Model m = *Catalogue::builtin().find("llama-3.1-8b");
  const auto [s, o] = pasted("llama-server -m Llama-3.1-8B-Q4_K_M.gguf", "Q4_K_M");
  Box box;
  box.ram_bytes = 16'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  const Plan p = make_plan(m, s, box, o);
  for (const auto& d : p.engine.devices) EXPECT_EQ(d.name, "host");
  const uint64_t n_ctx = p.estimate.scenario.context * p.estimate.scenario.sequences;
  EXPECT_LT(n_ctx, 131072u);
  EXPECT_GE(n_ctx, 4096u);
  EXPECT_EQ(n_ctx % 256, 0u);
  // What --fit projects (the breakdown: not the prompt cache, which fills later) leaves the RAM 1 GiB.
  const LlamaCppFitUse use = llamacpp_fit_use(p.engine, 0);
  EXPECT_LE(use.host_used + static_cast<int64_t>(kLlamaCppFitMargin), static_cast<int64_t>(box.ram_bytes));
  // llama.cpp's breakdown, which --fit projects, counts the mapped span with the originals of the
  // repacked Q4_K tensors, which the host's lines leave out (they are not held once copied): the
  // projection adds them back, each the CPU_REPACK copy less its padding to 32 B.
  const DeviceAllocation& host = p.engine.devices.at(0);
  uint64_t breakdown = host.mapped_not_held, repacked = 0;
  for (const auto& l : host.lines) {
    if (l.kind != AllocKind::Other && l.kind != AllocKind::RuntimeReserve) breakdown += l.bytes;
    if (l.label == "Repacked CPU weights (CPU_REPACK)") repacked = l.bytes;
  }
  ASSERT_GT(repacked, 0u);
  EXPECT_LE(host.mapped_not_held, repacked);
  EXPECT_GE(host.mapped_not_held + 32 * 32 * 4, repacked);  // 32 layers, a few tensors each, under 32 B apiece
  EXPECT_EQ(use.host_used, static_cast<int64_t>(breakdown));
  // The verdict is llama.cpp's host answer (prompt cache included: 8 GiB by default fills later), as
  // check reads it: here over the 16 GB.
  ASSERT_EQ(p.engine.devices.size(), 1u);
  EXPECT_GT(p.engine.devices[0].total_bytes, box.ram_bytes);
  EXPECT_EQ(p.verdict.rfind("No GPU, and llama.cpp needs", 0), 0u) << p.verdict;
}

TEST(LlamaCppDefaults, ADraftModelCountsInTheFitAsFitCppsExtraModel) {
  // common_init_from_params passes the draft (-md) to common_fit_params as its "extra model": every
  // projection includes it, so the context --fit settles is smaller with a draft than without.
  const Model m = llama_70b();
  EngineInputs in;
  in.command = "llama-server -m Llama-3.1-70B-Q4_K_M.gguf -np 1";
  in.gpu = "h100-sxm";
  EngineRequest r = engine_request(m, Scenario{}, in, ScenarioGiven{});
  const uint64_t alone = r.scenario.context;
  ASSERT_LT(alone, 131072u);
  r.companions.draft = std::make_shared<const Model>(*Catalogue::builtin().find("llama-3.1-8b"));
  refit_llamacpp(m, r);
  EXPECT_LT(r.scenario.context, alone);
  EXPECT_EQ(r.scenario.context % 256, 0u);
  // The fit's notes are replaced, not repeated.
  uint64_t lowered = 0;
  for (const auto& n : r.command->notes) lowered += n.find("--fit lowers the context") != std::string::npos ? 1 : 0;
  EXPECT_EQ(lowered, 1u);
  // With the draft the H100's free memory (less its CUDA context) keeps 1 GiB at that context.
  const LlamaCppFitUse u = llamacpp_fit_use(run_engine(r), 1);
  EXPECT_LE(u.gpu_used[0] + static_cast<int64_t>(kLlamaCppFitMargin + kLlamaCppCudaContextBytes), static_cast<int64_t>(r.box->gpus[0].memory_bytes));
}
