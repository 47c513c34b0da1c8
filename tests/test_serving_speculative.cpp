// Speculative decoding in vLLM and SGLang (src/engines/serving_speculative.*): the drafter's
// weights per GPU and its cache, from --speculative-config and SGLang's --speculative-* flags.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "cli_runner.h"
#include "core/error.h"
#include "engines/engine_run.h"
#include "engines/serving_speculative.h"
#include "engines/vllm_speculative_budget.h"

using namespace vc;
using json = nlohmann::json;

namespace {

// Llama 3.2 1B Instruct (config.json: vocab 128,256, hidden 2,048, 16 layers, 32 query / 8 KV
// heads of 64, intermediate 8,192, tied embeddings, bfloat16):
//   embedding 128,256 x 2,048 = 262,668,288
//   a layer: q 2,048 x 2,048 + k, v 2,048 x 512 each + o 2,048 x 2,048 = 10,485,760;
//            MLP 3 x 2,048 x 8,192 = 50,331,648; two norms 4,096          = 60,821,504
//   16 layers 973,144,064 + final norm 2,048 + embedding = 1,235,814,400 params x 2 B.
constexpr uint64_t kLlama32_1bBytes = 2'471'628'800;
// K + V a token at bf16: the 1B draft 16 layers x 8 heads x 64 x 2 x 2 B = 32,768 B; Llama 3.1 8B
// 32 layers x 8 heads x 128 x 2 x 2 B = 131,072 B.
constexpr uint64_t kDraftTokenBytes = 32'768;
constexpr uint64_t kTargetTokenBytes = 131'072;

json engine_of(const std::string& args) {
  const CliResult r = run_cli("estimate llama-3.1-8b --json " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return json::parse(r.output)["engine"];
}

uint64_t line_bytes(const json& engine, const std::string& label_start) {
  for (const auto& l : engine["devices"][0]["lines"]) {
    if (l["label"].get<std::string>().rfind(label_start, 0) == 0) return l["bytes"].get<uint64_t>();
  }
  ADD_FAILURE() << "no line " << label_start << " in " << engine["devices"][0]["lines"].dump();
  return 0;
}

uint64_t kv_line(const json& engine) {
  for (const auto& l : engine["devices"][0]["lines"]) {
    if (l["kind"] == "kv") return l["bytes"].get<uint64_t>();
  }
  return 0;
}

const std::string kVllm = R"(--gpu-memory 80GB --engine-command "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192)";

}  // namespace

TEST(ServingSpeculative, VllmConfigIsReadAndMalformedConfigsAreRefused) {
  const ServingSpeculative d = parse_vllm_speculative_config(R"({"model": "llama-3.2-1b", "num_speculative_tokens": 5})", "--speculative-config");
  EXPECT_EQ(d.method, "draft_model");  // vLLM's choice for a model whose name says no EAGLE
  EXPECT_EQ(d.draft, "llama-3.2-1b");
  EXPECT_EQ(d.num_speculative_tokens, 5u);
  EXPECT_EQ(parse_vllm_speculative_config(R"({"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})", "f").method, "eagle3");
  EXPECT_EQ(parse_vllm_speculative_config(R"({"method": "deepseek_mtp"})", "f").method, "mtp");
  for (const char* bad : {"{not json", "[1]", R"({"method": "lookahead", "num_speculative_tokens": 2})", R"({"method": "eagle", "num_speculative_tokens": 2})",
                          R"({"model": "x"})", R"({"method": "mtp", "model": "x"})", R"({"model": "x", "num_speculative_tokens": 0})", "{}"}) {
    EXPECT_THROW(parse_vllm_speculative_config(bad, "--speculative-config"), InputError) << bad;
  }
  // A pasted command refuses the same (exit 2), naming the flag.
  const CliResult r = run_cli(std::string("estimate llama-3.1-8b ") + kVllm + R"( --speculative-config '{\"method\": \"medusa\", \"num_speculative_tokens\": 2}'")");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--speculative-config"), std::string::npos) << r.output;
}

TEST(ServingSpeculative, SglangFlagsAreReadAsSglangSettlesThem) {
  const EngineRun run = parse_engine_command(
      "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm STANDALONE "
      "--speculative-draft-model-path llama-3.2-1b --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4");
  EXPECT_EQ(run.serving_speculative.method, "draft_model");
  EXPECT_EQ(run.serving_speculative.draft, "llama-3.2-1b");
  // EAGLE without a draft path drafts with the model's MTP layers (server_args.py); STANDALONE needs a draft.
  EXPECT_EQ(parse_engine_command("sglang serve --model-path x --speculative-algorithm EAGLE").serving_speculative.method, "mtp");
  EXPECT_THROW(parse_engine_command("sglang serve --model-path x --speculative-algorithm STANDALONE"), InputError);
  EXPECT_THROW(parse_engine_command("sglang serve --model-path x --speculative-algorithm MEDUSA"), InputError);
  // Top-k 1 makes the draft tokens steps + 1; nothing given: (5, 4, 8), DeepSeek (3, 1, 4).
  ServingSpeculative s;
  s.method = "eagle";
  s.steps = 3;
  s.topk = 1;
  s.draft_tokens = 8;
  const Model& llama = *Catalogue::builtin().find("llama-3.1-8b");
  EXPECT_EQ(sglang_spec_shape(s, llama).draft_tokens, 4u);
  ServingSpeculative eagle, mtp;
  eagle.method = "eagle";
  mtp.method = "mtp";
  EXPECT_EQ(sglang_spec_shape(eagle, llama).draft_tokens, 8u);
  EXPECT_EQ(sglang_spec_shape(mtp, *Catalogue::builtin().find("deepseek-v3")).steps, 3u);
}

// Llama 3.1 8B with the Llama 3.2 1B draft on one 80 GB card (vLLM, --max-model-len 8192): the
// draft's 2,471,628,800 B load with the target, and the profile run grows by the rejection
// sampler's logits and the proposer's buffers (592,445,440 B, worked out in
// VllmProfileRunCountsTheDrafter below), so the KV cache gets that much less; each token of the
// pool holds the draft's 32,768 B beside the target's 131,072 B: tokens =
// floor(available / (163,840 B x 16)) x 16 blocks instead of floor(available / (131,072 B x 16)) x 16.
TEST(ServingSpeculative, VllmDraftModelTakesItsWeightsAndAShareOfEveryToken) {
  const json plain = engine_of(kVllm + "\"");
  const json spec = engine_of(kVllm + R"( --speculative-config '{\"model\": \"llama-3.2-1b\", \"num_speculative_tokens\": 5}'")");
  EXPECT_EQ(line_bytes(spec, "Draft weights on this rank"), kLlama32_1bBytes);
  const uint64_t available = kv_line(plain), with_draft = kv_line(spec);
  EXPECT_EQ(available - with_draft, kLlama32_1bBytes + 592'445'440);
  EXPECT_EQ(line_bytes(spec, "Activation peak") - line_bytes(plain, "Activation peak"), 592'445'440u);
  // 32 target + 16 draft layers; with 5 speculative tokens a decode query is q = 6 tokens, so the
  // 51 capture sizes are rounded up to multiples of 6 (adjust_cudagraph_sizes_for_spec_decode): 1, 2
  // and 4 all become 6, 512 becomes 516, past the largest (512), and is dropped; the rest stay
  // distinct: 48 sizes, all full (up to 1,024 x 6). 216 MiB + (48 + 48) x 48 x 174 KiB =
  // 226,492,416 + 821,035,008 (by hand; 51 + 51 sizes without speculation, as in
  // VllmProfileRunCountsTheDrafter below).
  EXPECT_EQ(line_bytes(spec, "CUDA graphs"), 1'047'527'424u);
  EXPECT_EQ(plain["kv_tokens"].get<uint64_t>(), available / (kTargetTokenBytes * 16) * 16);
  EXPECT_EQ(spec["kv_tokens"].get<uint64_t>(), with_draft / ((kTargetTokenBytes + kDraftTokenBytes) * 16) * 16);
  EXPECT_EQ(spec["settings"]["speculative_method"], "draft_model");
  // The CLI's own --speculative-config with --engine vllm gives the same answer, at the 1,024
  // sequences that are vLLM's default max_num_seqs on this card (the pasted command leaves it out).
  const json flags = engine_of(R"(--gpu-memory 80GB --engine vllm --context 8192 --seqs 1024 --speculative-config '{"model": "llama-3.2-1b", "num_speculative_tokens": 5}')");
  EXPECT_EQ(flags["kv_tokens"], spec["kv_tokens"]);
  // A draft TP other than the target's is refused, as vLLM v1 does.
  const CliResult tp = run_cli(std::string("estimate llama-3.1-8b ") + kVllm +
                               R"( --speculative-config '{\"model\": \"llama-3.2-1b\", \"num_speculative_tokens\": 5, \"draft_tensor_parallel_size\": 2}'")");
  EXPECT_EQ(tp.exit_code, 2) << tp.output;
}

// The same pair under SGLang STANDALONE at --mem-fraction-static 0.8, 64 requests, 3 steps, top-k 1
// (so 4 draft tokens): the target's pool is sized with 131,072 B x (1 + 16 / 32) = 196,608 B a
// token; the draft's own pool holds those tokens + 64 x (3 x 1 + 4) + 100 = 548 more, at 32,768 B.
TEST(ServingSpeculative, SglangStandaloneScalesTheTargetCellAndSizesTheDraftPool) {
  const std::string base =
      R"(--gpu-memory 80GB --engine-command "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 8192 )"
      R"(--mem-fraction-static 0.8 --max-running-requests 64)";
  const json plain = engine_of(base + "\"");
  const json spec = engine_of(base + R"( --speculative-algorithm STANDALONE --speculative-draft-model-path llama-3.2-1b --speculative-num-steps 3 )"
                                     R"(--speculative-eagle-topk 1 --speculative-num-draft-tokens 4")");
  const uint64_t card = 80ull * 1000 * 1000 * 1000;
  const uint64_t runtime = line_bytes(spec, "CUDA context"), weights = line_bytes(spec, "Weights per GPU");
  const auto share = static_cast<uint64_t>(std::floor(0.8 * static_cast<double>(card - runtime)));
  const uint64_t tokens = (share - weights) / 196'608;
  EXPECT_EQ(plain["kv_tokens"].get<uint64_t>(), (share - weights) / kTargetTokenBytes);
  EXPECT_EQ(spec["kv_tokens"].get<uint64_t>(), tokens);
  EXPECT_EQ(kv_line(spec), tokens * kTargetTokenBytes);  // the target's pool, the first cache line
  EXPECT_EQ(line_bytes(spec, "Draft token pool"), (tokens + 548) * kDraftTokenBytes);
  EXPECT_EQ(line_bytes(spec, "Draft weights per GPU"), kLlama32_1bBytes);
  // Left for activations and graphs: the card less every line above it.
  uint64_t sum = 0;
  for (const auto& l : spec["devices"][0]["lines"]) sum += l["bytes"].get<uint64_t>();
  EXPECT_EQ(sum, card);
}

// SGLang's chosen mem_fraction_static keeps 6 GiB more for a standalone draft (2 GiB for EAGLE
// and MTP): on an 80 GB card (76,293 MiB; chunk 8,192, graphs to 256) reserved = max(512 + 12,288
// + 512 + 128, 10,240) = 13,440 MiB + 6,144 = 19,584 MiB: (76,293 - 19,584) / 76,293 = 0.743.
TEST(ServingSpeculative, SglangChosenFractionLeavesRoomForTheDraft) {
  const json spec = engine_of(
      R"(--gpu-memory 80GB --engine-command "sglang serve --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 8192 )"
      R"(--speculative-algorithm STANDALONE --speculative-draft-model-path llama-3.2-1b")");
  std::string sizing;
  for (const auto& l : spec["devices"][0]["lines"]) {
    if (l["kind"] == "kv" && sizing.empty()) sizing = l["formula"].get<std::string>() + " | " + l["assumption"].get<std::string>();
  }
  EXPECT_NE(sizing.find("reserved 19584 MiB"), std::string::npos) << sizing;
  EXPECT_NE(sizing.find("floor((0.743 x"), std::string::npos) << sizing;
  EXPECT_EQ(spec["settings"]["speculative_num_draft_tokens"], 8);  // (5, 4, 8) for Llama
}

// MTP: the model's own layers draft, and their cache is one more MLA layer a token (DeepSeek-V3:
// kv_lora_rank 512 + rope 64 = 576 values x 2 B = 1,152 B beside 61 x 1,152 = 70,272 B). The
// target does not build the MTP layer (vLLM's load_weights "skip spec decode layers for main
// model"); the drafter loads it, less the embedding and head copies the checkpoint stores beside it
// (2 x 129,280 x 7,168 x 2 B = 3,706,716,160 B), which it shares with the target. Its routed experts
// alone are 256 x 3 x 7,168 x 2,048 = 11,274,289,152 FP8 weights with a 4 B scale a 128 x 128
// block: 11,277,041,664 B; its attention, shared expert and projections add well under 0.5 GB.
TEST(ServingSpeculative, MtpUsesTheModelsOwnLayers) {
  const Model& v3 = *Catalogue::builtin().find("deepseek-v3");
  EXPECT_EQ(mtp_layer_count(v3), 1u);
  EXPECT_EQ(mtp_layer_count(*Catalogue::builtin().find("llama-3.1-8b")), 0u);
  const uint64_t all = mtp_weight_bytes(v3, v3.native.bytes, false), own = mtp_weight_bytes(v3, v3.native.bytes, true);
  EXPECT_EQ(all - own, 3'706'716'160u);
  EXPECT_GT(own, 11'277'041'664u);
  EXPECT_LT(own, 11'777'041'664u);
  EXPECT_EQ(mtp_weight_bytes(*Catalogue::builtin().find("qwen3-30b-a3b"), 61'064'245'248u, false), 0u);
  const CliResult r = run_cli(R"(estimate deepseek-v3 --json --gpu-memory 141GB --engine-command "vllm serve deepseek-ai/DeepSeek-V3 -tp 8 )"
                              R"(--max-model-len 8192 --speculative-config '{\"method\": \"deepseek_mtp\", \"num_speculative_tokens\": 1}'")");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json e = json::parse(r.output)["engine"];
  // The target's rank: an eighth of the checkpoint less the MTP layer; the drafter's an eighth of its own bytes.
  EXPECT_EQ(line_bytes(e, "Weights on this rank"), (v3.native.bytes - all + 7) / 8);
  EXPECT_EQ(line_bytes(e, "Draft weights on this rank"), (own + 7) / 8);
  EXPECT_EQ(e["settings"]["speculative_method"], "mtp");
  bool per_token = false;
  for (const auto& l : e["devices"][0]["lines"]) {
    if (l["kind"] == "kv") per_token = l["formula"].get<std::string>().find("71424 B a token") != std::string::npos;
  }
  EXPECT_TRUE(per_token) << e["devices"][0]["lines"].dump();
  EXPECT_EQ(e["settings"]["num_speculative_tokens"], 1);
  // Without num_speculative_tokens vLLM drafts n_predict tokens, the model's MTP layer count
  // (config/speculative.py): DeepSeek-V3's one.
  const CliResult d = run_cli(R"(estimate deepseek-v3 --json --gpu-memory 141GB --engine-command "vllm serve deepseek-ai/DeepSeek-V3 -tp 8 )"
                              R"(--max-model-len 8192 --speculative-config '{\"method\": \"mtp\"}'")");
  ASSERT_EQ(d.exit_code, 0) << d.output;
  EXPECT_EQ(json::parse(d.output)["engine"]["settings"]["num_speculative_tokens"], 1);
  // A model without MTP layers is refused (exit 2), as is a draft given to mtp.
  EXPECT_EQ(run_cli(R"(estimate llama-3.1-8b --gpu-memory 80GB --engine vllm --speculative-config '{"method": "mtp"}')").exit_code, 2);
  EXPECT_EQ(run_cli(R"(estimate deepseek-v3 --engine vllm --gpu-memory 80GB --draft llama-3.2-1b --speculative-config '{"method": "mtp"}')").exit_code, 2);
}

// vLLM's profile run with a drafter (engines/vllm_speculative_budget.h), Llama 3.1 8B (hidden 4,096,
// dense width 14,336, vocab 128,256, 32 layers) at bf16 on an 80 GB card: vLLM's defaults there
// are T = 8,192 batched tokens and N = 1,024 sequences. Without a drafter (vllm_budget.cpp):
//   forward = 8,192 x (3 x 14,336 + 4 x 4,096) x 2 = 973,078,528 B
//   sampler = 8,192 x 4,096 x 2 + 1,024 x 128,256 x 14.55 (floor) = 67,108,864 + 1,910,911,795 = 1,978,020,659 B
// With the Llama 3.2 1B draft (hidden 2,048, dense width 8,192, 16 layers):
//   rejection-sampler logits = [1,024 + 1,024, 128,256] x 2 B = 525,336,576 B (in the sampler's peak)
//   buffers = hidden_states + inputs_embeds = 2 x 8,192 x 2,048 x 2 = 67,108,864 B
//   drafter pass = target hidden states 8,192 x 4,096 x 2 = 67,108,864 + its forward
//                  8,192 x (3 x 8,192 + 4 x 2,048) x 2 = 536,870,912 -> 603,979,776 B < forward
//   activation grows by 525,336,576 + 67,108,864 = 592,445,440 B; graphs (by hand from vllm_cuda_graphs, 51 + 51 capture sizes at
//   1,024 sequences): 216 MiB + 102 x (32 + 16) x 174 KiB = 1,098,842,112 B.
TEST(ServingSpeculative, VllmProfileRunCountsTheDrafter) {
  const Model& target = *Catalogue::builtin().find("llama-3.1-8b");
  const Model& draft = *Catalogue::builtin().find("llama-3.2-1b");
  VllmBudgetSettings s;
  s.card_bytes = 80ull * 1000 * 1000 * 1000;
  s.weight_bytes = target.native.bytes;
  const VllmBudget plain = vllm_budget(target, s);
  EXPECT_EQ(plain.forward_peak, 973'078'528u);
  EXPECT_EQ(plain.sampler_peak, 1'978'020'659u);
  VllmSpecInput in;
  in.on = true;
  in.method = "draft_model";
  in.drafter = &draft;
  in.rank_weights = kLlama32_1bBytes;
  const VllmSpecBudget spec = vllm_budget_speculative(target, s, in);
  EXPECT_EQ(spec.spec.rejection_logits, 525'336'576u);
  EXPECT_EQ(spec.spec.buffers, 67'108'864u);
  EXPECT_EQ(spec.spec.held_hidden, 67'108'864u);
  EXPECT_EQ(spec.spec.draft_forward, 536'870'912u);
  EXPECT_EQ(spec.budget.forward_peak, 973'078'528u);  // the target's pass stays the larger
  EXPECT_EQ(spec.budget.activation - plain.activation, 592'445'440u);
  EXPECT_EQ(spec.budget.non_kv_total - plain.non_kv_total, 592'445'440u + kLlama32_1bBytes);
  EXPECT_EQ(spec.budget.cuda_graphs, 1'098'842'112u);

  // An EAGLE-3 head of the 8B's own width (one layer: hidden 4,096, dense 14,336) with 64
  // sequences: its pass holds the target's hidden states and the three auxiliary ones,
  // 4 x 8,192 x 4,096 x 2 = 268,435,456 B, beside its forward of 973,078,528 B: 1,241,513,984 B,
  // more than the target's forward; the sampler, 67,108,864 + 64 x 128,256 x 14.55 = 186,540,851 B
  // + rejection logits 2 x 64 x 128,256 x 2 = 32,833,536 B, stays below it. Buffers
  // 2 x 8,192 x 4,096 x 2 = 134,217,728 B. Activation = 1,241,513,984 + 50 MiB + 134,217,728 =
  // 1,428,160,512 B (without the head: 973,078,528 + 50 MiB = 1,025,507,328 B).
  Model head;
  head.hidden = target.hidden;
  head.vocab = target.vocab;
  head.layers = {target.layers.front()};
  s.max_num_seqs = 64;
  EXPECT_EQ(vllm_budget(target, s).activation, 1'025'507'328u);
  in.method = "eagle3";
  in.drafter = &head;
  in.rank_weights = 0;
  const VllmSpecBudget eagle = vllm_budget_speculative(target, s, in);
  EXPECT_EQ(eagle.spec.held_hidden, 268'435'456u);
  EXPECT_EQ(eagle.budget.forward_peak, 1'241'513'984u);
  EXPECT_EQ(eagle.budget.sampler_peak, 186'540'851u + 32'833'536u);
  EXPECT_EQ(eagle.budget.activation, 1'428'160'512u);
  // Graphs at 64 sequences: sizes up to min(2 x 64, 512) = 128 (1, 2, 4, 8 to 128 by 8: 19), of
  // them 11 up to 64 also as full decode graphs: 216 MiB + 30 x (32 + 1) x 174 KiB = 402,886,656 B.
  EXPECT_EQ(eagle.budget.cuda_graphs, 402'886'656u);

  // N-gram drafting loads nothing and runs no pass: only the rejection sampler's logits.
  VllmSpecInput ngram;
  ngram.on = true;
  ngram.method = "ngram";
  EXPECT_EQ(vllm_budget_speculative(target, s, ngram).budget.activation, 1'025'507'328u);  // the forward still dominates at 64 sequences
  s.max_num_seqs = 0;
  EXPECT_EQ(vllm_budget_speculative(target, s, ngram).budget.activation - plain.activation, 525'336'576u);
  EXPECT_EQ(vllm_budget_speculative(target, s, ngram).budget.cuda_graphs, plain.cuda_graphs);
}

// SGLang sets max_running_requests to 48 when speculative decoding is on and it is not given
// (arg_groups/speculative_hook.py), so the draft pool holds tokens + 48 x (3 x 1 + 4) + 100 = 436
// more than the target's pool, and the request-to-token map is (48 + 1) x 8,192 x 4 B = 1,605,632 B.
TEST(ServingSpeculative, SglangSpeculationRunsAtMost48RequestsUnlessGiven) {
  const json spec = engine_of(
      R"(--gpu-memory 80GB --engine-command "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 8192 )"
      R"(--mem-fraction-static 0.8 --speculative-algorithm STANDALONE --speculative-draft-model-path llama-3.2-1b --speculative-num-steps 3 )"
      R"(--speculative-eagle-topk 1 --speculative-num-draft-tokens 4")");
  const uint64_t tokens = spec["kv_tokens"].get<uint64_t>();
  EXPECT_EQ(line_bytes(spec, "Draft token pool"), (tokens + 436) * kDraftTokenBytes);
  EXPECT_EQ(line_bytes(spec, "Request-to-token map"), 1'605'632u);
  bool noted = false;
  for (const auto& n : spec["notes"]) noted = noted || n.get<std::string>().find("max_running_requests to 48") != std::string::npos;
  EXPECT_TRUE(noted) << spec["notes"].dump();
}

// `plan` with a pasted vLLM or SGLang command counts its speculative decoding as `estimate` does
// (plan/serving_drafter.h), and the command it prints passes the same drafter: the catalogue's
// Llama 3.2 1B as the draft named by its Hub repository loads its 2,471,628,800 B (worked out at
// the top of this file) beside Llama 3.1 8B; a draft the catalogue does not hold is left out with
// a note, and the printed command then carries no speculative flags.
TEST(ServingSpeculative, PlanCountsThePastedCommandsDrafter) {
  const CliResult r = run_cli(R"(plan llama-3.1-8b --json --gpu h100-sxm --engine-command "vllm serve meta-llama/Llama-3.1-8B-Instruct )"
                              R"(--speculative-config '{\"model\": \"meta-llama/Llama-3.2-1B-Instruct\", \"num_speculative_tokens\": 5}'")");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json p = json::parse(r.output);
  EXPECT_EQ(line_bytes(p["engine"], "Draft weights on this rank"), kLlama32_1bBytes);
  const std::string cmd = p["commands"][0]["command"].get<std::string>();
  EXPECT_NE(cmd.find(R"(--speculative-config '{"method":"draft_model","model":"meta-llama/Llama-3.2-1B-Instruct","num_speculative_tokens":5}')"),
            std::string::npos)
      << cmd;

  const CliResult u = run_cli(R"(plan llama-3.1-8b --json --gpu h100-sxm --engine-command "vllm serve meta-llama/Llama-3.1-8B-Instruct )"
                              R"(--speculative-config '{\"model\": \"someone/not-in-the-catalogue\", \"num_speculative_tokens\": 5}'")");
  ASSERT_EQ(u.exit_code, 0) << u.output;
  const json q = json::parse(u.output);
  EXPECT_EQ(q["commands"][0]["command"].get<std::string>().find("--speculative"), std::string::npos);
  bool said = false;
  for (const auto& n : q["engine"]["notes"]) said = said || n.get<std::string>().find("its draft model is not in the catalogue") != std::string::npos;
  EXPECT_TRUE(said) << q["engine"]["notes"].dump();

  // SGLang: the MTP layers of DeepSeek-V3 (NEXTN) join the answer and the printed command.
  const CliResult s = run_cli(R"(plan deepseek-v3 --json --gpu H200x8 --engine-command "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 )"
                              R"(--tp 8 --speculative-algorithm EAGLE --speculative-num-steps 3")");
  ASSERT_EQ(s.exit_code, 0) << s.output;
  const json g = json::parse(s.output);
  const std::string scmd = g["commands"][0]["command"].get<std::string>();
  EXPECT_NE(scmd.find("--speculative-algorithm NEXTN --speculative-num-steps 3"), std::string::npos) << scmd;
  EXPECT_EQ(g["engine"]["settings"]["speculative_algorithm"], "NEXTN");
}
