// --cpu-offload-gb for vLLM and SGLang (src/engines/serving_cpu_offload.h): the flag, the
// offloader's walk over the decoder layers, the GPU's weights and the host's pinned line.
#include <gtest/gtest.h>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "engines/engine.h"
#include "engines/engine_run.h"
#include "engines/serving_cpu_offload.h"
#include "engines/sglang_weights.h"
#include "plan/engine_command.h"
#include "plan/plan.h"
#include "plan_fixtures.h"

using namespace vc;

namespace {

constexpr uint64_t kGiB = 1ull << 30;

const Model& llama8b() { return *Catalogue::builtin().find("llama-3.1-8b"); }

std::string refusal(const std::string& command) {
  try {
    parse_engine_command(command);
  } catch (const InputError& e) {
    return e.subject();
  }
  return "";
}

const DeviceAllocation* device(const EngineAnswer& a, const std::string& name) {
  for (const auto& d : a.devices)
    if (d.name == name) return &d;
  return nullptr;
}

EngineAnswer answer(const std::string& command, const std::string& gpu_memory) {
  EngineInputs in;
  in.command = command;
  in.gpu_memory = gpu_memory;
  Scenario s;
  s.context = 8192;
  return run_engine(engine_request(llama8b(), s, in));
}

}  // namespace

// The flag as each engine's parser takes it: vLLM a float of GiB per GPU, >= 0 (config/offload.py;
// '_' read as '-', '=' form); SGLang an int (server_args.py). int(N x 1024**3): 4 -> 4,294,967,296 B;
// 2.5 -> 2,684,354,560 B. Bad values exit 2 naming the flag.
TEST(CpuOffload, FlagParsedPerEngine) {
  EXPECT_EQ(parse_engine_command("vllm serve m --cpu-offload-gb 4").vllm.cpu_offload_cap, 4 * kGiB);
  EXPECT_EQ(parse_engine_command("vllm serve m --cpu_offload_gb=2.5").vllm.cpu_offload_cap, 2'684'354'560u);
  EXPECT_EQ(parse_engine_command("vllm serve m --cpu-offload-gb 0").vllm.cpu_offload_cap, 0u);
  EXPECT_EQ(parse_engine_command("python -m sglang.launch_server --model-path m --cpu-offload-gb 4").sglang.cpu_offload_cap, 4 * kGiB);
  EXPECT_EQ(refusal("vllm serve m --cpu-offload-gb -1"), "--cpu-offload-gb");
  EXPECT_EQ(refusal("vllm serve m --cpu-offload-gb lots"), "--cpu-offload-gb");
  EXPECT_EQ(refusal("vllm serve m --cpu-offload-gb nan"), "--cpu-offload-gb");
  EXPECT_EQ(refusal("vllm serve m --cpu-offload-gb"), "--cpu-offload-gb");  // needs a value
  EXPECT_EQ(refusal("sglang serve --model-path m --cpu-offload-gb 2.5"), "--cpu-offload-gb");  // argparse type=int
  // No longer ignored with a note.
  for (const auto& n : parse_engine_command("vllm serve m --cpu-offload-gb 4").notes) EXPECT_EQ(n.find("cpu-offload"), std::string::npos) << n;
}

// The walk by hand: cap 10 over layers {4, 4, 2} and {6, 1}: 4 (0 < 10), 4 (4 < 10), 2 (8 < 10:
// moved, now 10, the layer whole), then 6? 10 >= 10: the module check stops. Cap 9: 4, 4, then 2
// (8 < 9: crosses, moved whole) = 10 B, the second layer untouched. Cap 11: the first layer
// whole (10 < 11), then 6 (crosses: 16 B), and 1 stays.
TEST(CpuOffload, WalkMovesTheCrossingParameterWhole) {
  const std::vector<std::vector<uint64_t>> layers = {{4, 4, 2}, {6, 1}};
  const CpuOffload ten = cpu_offload_walk(layers, 10);
  EXPECT_EQ(ten.bytes, 10u);
  EXPECT_EQ(ten.params, 3u);
  EXPECT_EQ(ten.layers_whole, 1u);
  EXPECT_EQ(ten.kept_in_last, 0u);
  EXPECT_EQ(cpu_offload_walk(layers, 9).bytes, 10u);
  const CpuOffload eleven = cpu_offload_walk(layers, 11);
  EXPECT_EQ(eleven.bytes, 16u);
  EXPECT_EQ(eleven.params, 4u);
  EXPECT_EQ(eleven.layers_whole, 1u);
  EXPECT_EQ(eleven.moved_in_last, 1u);
  EXPECT_EQ(eleven.kept_in_last, 1u);
  EXPECT_EQ(cpu_offload_walk(layers, 100).bytes, 17u);  // everything the layers hold, no more
}

// Llama 3.1 8B, bf16, one GPU, --cpu-offload-gb 4 (cap 4,294,967,296 B). A decoder layer's
// parameters in creation order (hidden 4,096, 32 query heads and 8 KV heads of 128, MLP 14,336):
// qkv_proj (4,096 + 2 x 1,024) x 4,096 x 2 B = 50,331,648; o_proj 4,096 x 4,096 x 2 = 33,554,432;
// gate_up_proj 2 x 14,336 x 4,096 x 2 = 234,881,024; down_proj 117,440,512; two norms of 8,192:
// 436,224,000 B a layer. 9 layers whole: 3,926,016,000 B (< cap); layer 10: qkv -> 3,976,347,648,
// o -> 4,009,902,080, gate_up -> 4,244,783,104 (all under the cap when moved), down_proj crosses ->
// 4,362,223,616 B; its two norms stay. 9 x 6 + 4 = 58 parameters.
TEST(CpuOffload, Llama31_8BFourGiBOnOneGpu) {
  const Model& m = llama8b();
  const SglangRankWeights w = sglang_rank_weights(m, m.native.bytes, 1, 1, "auto", 1, false, 4 * kGiB);
  EXPECT_EQ(w.offload.bytes, 4'362'223'616u);
  EXPECT_EQ(w.offload.params, 58u);
  EXPECT_EQ(w.offload.layers_whole, 9u);
  EXPECT_EQ(w.offload.moved_in_last, 4u);
  EXPECT_EQ(w.offload.kept_in_last, 2u);
  EXPECT_EQ(w.offload.stage_layers, 32u);
  // SGLang: the moved tensors leave the GPU's figure; the allocator's segments of the rest.
  const SglangRankWeights none = sglang_rank_weights(m, m.native.bytes, 1, 1, "auto");
  EXPECT_EQ(none.tensors.size(), w.tensors.size() + 58);
  EXPECT_LT(w.total, none.total - w.offload.bytes + 64 * (1ull << 20));
  EXPECT_GT(w.total + 64 * (1ull << 20), none.total - w.offload.bytes);
}

// vLLM on one 80 GB card: rank 0's weights are the checkpoint less the moved 4,362,223,616 B, the
// KV pool gains exactly that, and the host holds it pinned.
TEST(CpuOffload, VllmAnswerMovesWeightsToTheHost) {
  const std::string base = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192";
  const EngineAnswer off = answer(base, "80GB");
  const EngineAnswer on = answer(base + " --cpu-offload-gb 4", "80GB");
  ASSERT_EQ(off.devices.size(), 1u);
  ASSERT_EQ(on.devices.size(), 2u);
  const DeviceAllocation* gpu = device(on, "rank 0 (tp0 pp0)");
  const DeviceAllocation* host = device(on, "host");
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(off.devices[0].bytes(AllocKind::Weights) - gpu->bytes(AllocKind::Weights), 4'362'223'616u);
  // 16,060,522,496 B (8,030,261,248 parameters x 2 B) - 4,362,223,616 B, + the RoPE table the
  // offloader does not move (a buffer, not a parameter: 131,072 x 128 x 2 = 33,554,432 B, vllm_rope.h).
  EXPECT_EQ(gpu->bytes(AllocKind::Weights), 11'698'298'880u + 33'554'432u);
  EXPECT_EQ(gpu->bytes(AllocKind::Kv) - off.devices[0].bytes(AllocKind::Kv), 4'362'223'616u);
  EXPECT_EQ(host->total_bytes, 4'362'223'616u);
  EXPECT_GT(*on.kv_tokens, *off.kv_tokens);
  // TP 2: the cap is per GPU; each rank moves its own half-width layers, the host holds both.
  const EngineAnswer tp2 = answer(base + " -tp 2 --cpu-offload-gb 4", "80GB");
  const DeviceAllocation* host2 = device(tp2, "host");
  ASSERT_NE(host2, nullptr);
  const SglangRankWeights half = sglang_rank_weights(llama8b(), llama8b().native.bytes, 2, 1, "auto", 1, false, 4 * kGiB);
  // A rank's layer at TP 2: qkv (16 x 128 + 4 x 256) x 4,096 x 2 = 25,165,824; o 16,777,216; gate_up
  // 117,440,512; down 58,720,256; the norms whole 16,384: 218,120,192 B. 19 whole = 4,144,283,648;
  // then qkv -> 4,169,449,472, o -> 4,186,226,688, gate_up crosses -> 4,303,667,200 B.
  EXPECT_EQ(half.offload.bytes, 4'303'667'200u);
  EXPECT_EQ(half.offload.layers_whole, 19u);
  EXPECT_EQ(host2->total_bytes, 2 * half.offload.bytes);
}

// SGLang the same way: the weights line drops, the host line holds what moved.
TEST(CpuOffload, SglangAnswerMovesWeightsToTheHost) {
  const std::string base = "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 8192";
  const EngineAnswer off = answer(base, "80GB");
  const EngineAnswer on = answer(base + " --cpu-offload-gb 4", "80GB");
  const DeviceAllocation* host = device(on, "host");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->total_bytes, 4'362'223'616u);
  EXPECT_GT(off.devices[0].bytes(AllocKind::Weights), on.devices[0].bytes(AllocKind::Weights) + 4'300'000'000u);
  EXPECT_GT(*on.kv_tokens, *off.kv_tokens);
}

// Decode with a pasted vLLM command (issue 18): the 4,362,223,616 B moved cross the RTX 4090's host
// link (32 GB/s, PCIe 4.0 x16) every token, so even at the link's full rate the token takes at least
// 4,362,223,616 / 32e9 = 0.1363 s: under 7.34 tok/s, where the same command without the flag reads
// everything from GDDR at more than five times that.
TEST(CpuOffload, PlanDecodeCrossesTheHostLink) {
  const std::string command = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192";
  auto decode = [&](const std::string& c) {
    Scenario s;
    PlanOptions o;
    o.engine = EngineKind::Vllm;
    o.command = parse_engine_command(c);
    apply_command_to_scenario(*o.command, s, ScenarioGiven{});
    return make_plan(llama8b(), s, vc::test::box_of("RTX 4090"), o).decode;
  };
  const Speed with = decode(command + " --cpu-offload-gb 4");
  const Speed without = decode(command);
  EXPECT_GT(with.expected_tok_s, 0);
  EXPECT_LT(with.expected_tok_s, 32e9 / 4'362'223'616.0);
  EXPECT_NE(with.formula.find("host link"), std::string::npos) << with.formula;
  EXPECT_EQ(without.formula.find("host link"), std::string::npos) << without.formula;
  EXPECT_GT(without.expected_tok_s, 5 * with.expected_tok_s);
}

// The command a plan prints realises the figures it printed: a pasted --cpu-offload-gb, which those
// figures assume, stays in it (vLLM as given, 2.5; SGLang a whole number of GiB, 4).
TEST(CpuOffload, PrintedCommandKeepsThePastedOffload) {
  auto command_of = [&](EngineKind engine, const std::string& c) {
    Scenario s;
    PlanOptions o;
    o.engine = engine;
    o.command = parse_engine_command(c);
    apply_command_to_scenario(*o.command, s, ScenarioGiven{});
    const auto cmds = engine_commands(make_plan(llama8b(), s, vc::test::box_of("RTX 4090"), o));
    for (const auto& e : cmds)
      if (e.engine == (engine == EngineKind::Vllm ? "vllm" : "sglang")) return e.command;
    return std::string("none");
  };
  const std::string v = command_of(EngineKind::Vllm, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --cpu-offload-gb 2.5");
  EXPECT_NE(v.find(" --cpu-offload-gb 2.5"), std::string::npos) << v;
  const std::string g = command_of(EngineKind::Sglang, "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 8192 --cpu-offload-gb 4");
  EXPECT_NE(g.find(" --cpu-offload-gb 4"), std::string::npos) << g;
  EXPECT_EQ(command_of(EngineKind::Vllm, "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192").find("--cpu-offload-gb"), std::string::npos);
}

// vLLM's --cpu-offload-params segment rule (config/offload.py docstring; uva.py _offload_param:
// f".{seg}." in f".{name}."): for "mlp.experts.w2_weight", "experts" and "experts.w2_weight"
// match, "expert" and "w2" do not; "w2_weight" does not match "...w2_weight_scale"; "gate" is not
// "gate_up_proj" but is the router's "mlp.gate.weight".
TEST(CpuOffload, ParamsMatchWholeSegments) {
  EXPECT_TRUE(offload_name_matches("mlp.experts.w2_weight", {"experts"}));
  EXPECT_TRUE(offload_name_matches("mlp.experts.w2_weight", {"experts.w2_weight"}));
  EXPECT_FALSE(offload_name_matches("mlp.experts.w2_weight", {"expert"}));
  EXPECT_FALSE(offload_name_matches("mlp.experts.w2_weight", {"w2"}));
  EXPECT_FALSE(offload_name_matches("mlp.experts.w2_weight_scale", {"w2_weight"}));
  EXPECT_FALSE(offload_name_matches("mlp.gate_up_proj.weight", {"gate"}));
  EXPECT_TRUE(offload_name_matches("mlp.gate.weight", {"gate"}));
  EXPECT_TRUE(offload_name_matches("mlp.down_proj.weight", {"attn", "mlp"}));  // any of the set
  EXPECT_FALSE(offload_name_matches("self_attn.qkv_proj.weight", {"mlp", "attn"}));
}

// The filtered walk by hand: layers {a 4, m 4, n 2} and {a 6, m 1}, only "m" may move. Cap 5:
// a skipped, m moved (4 < 5), n skipped; the second layer: 4 < 5, a skipped, m moved -> 5 B, two
// parameters. Cap 4: m moved (0 < 4) -> 4; at n the cap is reached (4 >= 4); the second layer is
// not entered. Without a filter cap 5 moves a (4) then m (4 < 5: crosses) = 8 B.
TEST(CpuOffload, FilteredWalkSkipsUnmatchedParameters) {
  const std::vector<std::vector<NamedParam>> layers = {{{"a", 4}, {"m", 4}, {"n", 2}}, {{"a", 6}, {"m", 1}}};
  OffloadRule rule;
  rule.cap = 5;
  rule.segments = {"m"};
  const CpuOffload five = cpu_offload_walk(layers, rule);
  EXPECT_EQ(five.bytes, 5u);
  EXPECT_EQ(five.params, 2u);
  EXPECT_EQ(five.layers_touched, 2u);
  EXPECT_EQ(five.matched_params, 2u);
  EXPECT_EQ(five.cap_reached_in, 2u);
  rule.cap = 4;
  const CpuOffload four = cpu_offload_walk(layers, rule);
  EXPECT_EQ(four.bytes, 4u);
  EXPECT_EQ(four.params, 1u);
  EXPECT_EQ(four.cap_reached_in, 1u);
  rule.cap = 5;
  rule.segments.clear();
  EXPECT_EQ(cpu_offload_walk(layers, rule).bytes, 8u);
}

// Llama 3.1 8B bf16, one GPU, --cpu-offload-gb 4 --cpu-offload-params mlp: only mlp.gate_up_proj
// (234,881,024 B) and mlp.down_proj (117,440,512 B) move, 352,321,536 B a layer. 12 layers:
// 4,227,858,432 B < cap 4,294,967,296; layer 13: qkv and o skipped, gate_up moved (still under the
// cap when moved) -> 4,462,739,456 B, then down_proj meets the cap. 12 x 2 + 1 = 25 parameters in
// 13 layers; 32 x 2 = 64 match. The GPU keeps 16,060,522,496 - 4,462,739,456 = 11,597,783,040 B,
// and the KV pool gains exactly the moved bytes.
TEST(CpuOffload, VllmParamsFilterMovesOnlyTheMlp) {
  const Model& m = llama8b();
  OffloadRule rule;
  rule.cap = 4 * kGiB;
  rule.segments = {"mlp"};
  const CpuOffload o = sglang_rank_weights(m, m.native.bytes, 1, 1, "auto", 1, false, rule).offload;
  EXPECT_EQ(o.bytes, 4'462'739'456u);
  EXPECT_EQ(o.params, 25u);
  EXPECT_EQ(o.layers_touched, 13u);
  EXPECT_EQ(o.matched_params, 64u);
  EXPECT_EQ(o.cap_reached_in, 13u);
  const std::string base = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192";
  const EngineAnswer off = answer(base, "80GB");
  const EngineAnswer on = answer(base + " --cpu-offload-gb 4 --cpu-offload-params mlp", "80GB");
  const DeviceAllocation* gpu = device(on, "rank 0 (tp0 pp0)");
  const DeviceAllocation* host = device(on, "host");
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(gpu->bytes(AllocKind::Weights), 11'597'783'040u + 33'554'432u);  // + the RoPE table, as above
  EXPECT_EQ(gpu->bytes(AllocKind::Kv) - off.devices[0].bytes(AllocKind::Kv), 4'462'739'456u);
  EXPECT_EQ(host->total_bytes, 4'462'739'456u);
  // A segment no parameter has: nothing moves, and a note says so.
  const EngineAnswer none = answer(base + " --cpu-offload-gb 4 --cpu-offload-params mlp,attn", "80GB");
  EXPECT_EQ(device(none, "host"), nullptr);
  bool noted = false;
  for (const auto& n : none.notes) noted = noted || n.find("no parameter of a decoder layer matches") != std::string::npos;
  EXPECT_TRUE(noted);
}

// The flags as vLLM's argparse takes them (arg_utils.py: set[str] -> nargs="+"; Literal -> choices;
// config/offload.py: group_size ge=0, num_in_group ge=1, prefetch_step ge=0, and the validator:
// num_in_group <= group_size and prefetch_step >= 1 with the prefetch backend). Bad input exits 2
// naming the flag.
TEST(CpuOffload, VllmOffloadFlagsParsed) {
  const EngineRun two = parse_engine_command("vllm serve m --cpu-offload-gb 4 --cpu-offload-params experts.w13_weight experts.w2_weight --max-model-len 8192");
  EXPECT_EQ(two.vllm.offload.cpu_offload_params, (std::vector<std::string>{"experts.w13_weight", "experts.w2_weight"}));
  EXPECT_EQ(two.vllm.kv.max_model_len, 8192u);
  EXPECT_EQ(parse_engine_command("vllm serve m --cpu_offload_params=mlp").vllm.offload.cpu_offload_params, std::vector<std::string>{"mlp"});
  EXPECT_EQ(parse_engine_command("vllm serve m --cpu-offload-params a --cpu-offload-params b").vllm.offload.cpu_offload_params,
            std::vector<std::string>{"b"});  // argparse's store: the last wins
  EXPECT_EQ(refusal("vllm serve m --cpu-offload-params"), "--cpu-offload-params");
  EXPECT_EQ(refusal("vllm serve m --cpu-offload-params --max-model-len 10"), "--cpu-offload-params");
  EXPECT_EQ(refusal("vllm serve m --offload-params"), "--offload-params");
  EXPECT_EQ(refusal("vllm serve m --offload-backend disk"), "--offload-backend");
  EXPECT_EQ(refusal("vllm serve m --offload-group-size -1"), "--offload-group-size");
  EXPECT_EQ(refusal("vllm serve m --offload-group-size 2 --offload-num-in-group 3"), "--offload-num-in-group");
  EXPECT_EQ(refusal("vllm serve m --offload-group-size 2 --offload-num-in-group 0"), "--offload-num-in-group");
  EXPECT_EQ(refusal("vllm serve m --offload-group-size 2 --offload-prefetch-step 0"), "--offload-prefetch-step");
  EXPECT_EQ(refusal("vllm serve m --offload-backend prefetch"), "--offload-num-in-group");  // group size 0 < num_in_group 1
  const EngineRun p = parse_engine_command("vllm serve m --offload-group-size 8 --offload-num-in-group 2 --offload-prefetch-step 2 --offload-params mlp");
  EXPECT_EQ(p.vllm.offload.group_size, 8u);
  EXPECT_EQ(p.vllm.offload.num_in_group, 2u);
  EXPECT_EQ(p.vllm.offload.prefetch_step, 2u);
  EXPECT_EQ(p.vllm.offload.offload_params, std::vector<std::string>{"mlp"});
  // create_offloader: auto picks prefetch when a group size is given, even beside --cpu-offload-gb.
  EXPECT_TRUE(vllm_offload_rule(4 * kGiB, parse_engine_command("vllm serve m --cpu-offload-gb 4 --offload-group-size 4").vllm.offload).prefetch());
  EXPECT_FALSE(vllm_offload_rule(4 * kGiB, parse_engine_command("vllm serve m --offload-backend uva --offload-group-size 4").vllm.offload).prefetch());
}

// The prefetch backend on Llama 3.1 8B bf16, one GPU, --offload-group-size 4 (num_in_group 1,
// prefetch_step 1): layers i with i mod 4 >= 3, 3, 7, ..., 31: 8 layers of 436,224,000 B whole
// (6 parameters each) = 3,489,792,000 B pinned on the host; the static pool is 1 slot of each of
// the 6 distinct (name, size): 436,224,000 B on the GPU. Weights 16,060,522,496 - 3,489,792,000 =
// 12,570,730,496 B; the KV pool gains 3,489,792,000 - 436,224,000 = 3,053,568,000 B.
// With --offload-group-size 8 --offload-num-in-group 2 --offload-prefetch-step 2 --offload-params
// mlp: layers 6, 7, 14, 15, 22, 23, 30, 31, their two MLP tensors: 8 x 352,321,536 = 2,818,572,288
// B; the pool 2 slots x (234,881,024 + 117,440,512) = 704,643,072 B.
TEST(CpuOffload, VllmPrefetchBackendMovesGroupsAndKeepsStaging) {
  const std::string base = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192";
  const EngineAnswer off = answer(base, "80GB");
  const EngineAnswer on = answer(base + " --offload-group-size 4", "80GB");
  const DeviceAllocation* gpu = device(on, "rank 0 (tp0 pp0)");
  const DeviceAllocation* host = device(on, "host");
  ASSERT_NE(gpu, nullptr);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->total_bytes, 3'489'792'000u);
  uint64_t staging = 0, weights = 0;
  for (const auto& l : gpu->lines) {
    if (l.label.find("staging") != std::string::npos) staging += l.bytes;
    else if (l.kind == AllocKind::Weights) weights += l.bytes;
  }
  EXPECT_EQ(staging, 436'224'000u);
  EXPECT_EQ(weights, 12'570'730'496u + 33'554'432u);  // + the RoPE table (131,072 x 128 x 2 B), not offloaded
  EXPECT_EQ(gpu->bytes(AllocKind::Kv) - off.devices[0].bytes(AllocKind::Kv), 3'053'568'000u);
  const Model& m = llama8b();
  OffloadRule rule;
  rule.group_size = 8;
  rule.num_in_group = 2;
  rule.prefetch_step = 2;
  rule.segments = {"mlp"};
  const CpuOffload o = sglang_rank_weights(m, m.native.bytes, 1, 1, "auto", 1, false, rule).offload;
  EXPECT_EQ(o.bytes, 2'818'572'288u);
  EXPECT_EQ(o.layers_touched, 8u);
  EXPECT_EQ(o.params, 16u);
  EXPECT_EQ(o.staging_keys, 2u);
  EXPECT_EQ(o.staging, 704'643'072u);
}

// Online --quantization fp8 with an offloader is refused, naming the flag that turned it on: the
// offloader walks the 16-bit parameters as created and quantizing replaces them afterwards.
TEST(CpuOffload, VllmOffloadWithOnlineQuantizationRefused) {
  const std::string base = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --quantization fp8";
  auto subject = [&](const std::string& extra) {
    try {
      answer(base + extra, "80GB");
    } catch (const InputError& e) {
      return e.subject();
    }
    return std::string();
  };
  EXPECT_EQ(subject(" --cpu-offload-gb 4"), "--cpu-offload-gb");
  EXPECT_EQ(subject(" --offload-group-size 4"), "--offload-group-size");
  EXPECT_EQ(subject(""), "");  // without offload it runs
}

// Decode with the prefetch backend on an RTX 4090: the 3,489,792,000 B offloaded cross the host link
// (32 GB/s) every token, copied into the GPU's buffers and read there too: under 32e9 / 3,489,792,000
// = 9.17 tok/s, and the placement says copied, not UVA.
TEST(CpuOffload, PlanDecodeWithPrefetchCopies) {
  Scenario s;
  PlanOptions o;
  o.engine = EngineKind::Vllm;
  o.command = parse_engine_command("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --offload-group-size 4");
  apply_command_to_scenario(*o.command, s, ScenarioGiven{});
  const Plan p = make_plan(llama8b(), s, vc::test::box_of("RTX 4090"), o);
  EXPECT_GT(p.decode.expected_tok_s, 0);
  EXPECT_LT(p.decode.expected_tok_s, 32e9 / 3'489'792'000.0);
  EXPECT_NE(p.decode.assumption.find("copied to the GPU"), std::string::npos) << p.decode.assumption;
  // Copied, so the GPU still reads every weight from its own memory: 16.08 GB in the formula
  // (16,060,522,496 B + the KV read), where UVA would read 3.49 GB less there.
  EXPECT_NE(p.decode.formula.find("4090: 16.08 GB"), std::string::npos) << p.decode.formula;
  // The printed command keeps the pasted offload flags, which the figures assume.
  bool kept = false;
  for (const auto& e : engine_commands(p))
    if (e.engine == "vllm") kept = e.command.find(" --offload-group-size 4") != std::string::npos;
  EXPECT_TRUE(kept);
  PlanOptions f = o;
  f.command = parse_engine_command("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --cpu-offload-gb 4 --cpu-offload-params mlp");
  for (const auto& e : engine_commands(make_plan(llama8b(), s, vc::test::box_of("RTX 4090"), f)))
    if (e.engine == "vllm") {
      EXPECT_NE(e.command.find(" --cpu-offload-gb 4 --cpu-offload-params mlp"), std::string::npos) << e.command;
    }
}
