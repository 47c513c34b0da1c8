// SGLang's memory profile (src/engines/sglang_profile.cpp): mem_fraction_static chosen from the card,
// the token pool and the request limits, worked out by hand from the rules in server_args.py
// (_handle_gpu_memory_settings) and model_runner.py (profile_max_num_token, init_memory_pool).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "engines/engine_run.h"
#include "engines/sglang_profile.h"
#include "engines/sglang_weights.h"

using namespace vc;

namespace {

constexpr uint64_t kGiB = 1ull << 30;

const Model& llama8b() { return *Catalogue::builtin().find("llama-3.1-8b"); }

// Eight ranks of a 141 GiB card, mem_fraction_static 0.9, the checkpoint as the catalogue stores it.
SglangSettings eight_ranks_of_141gib(const Model& m) {
  SglangSettings s;
  s.card_bytes = 141 * kGiB;
  s.tensor_parallel = 8;
  s.mem_fraction_static = 0.9;
  s.weight_bytes = m.native.bytes;
  return s;
}

// A rank as a log prints it: the card, TP, mem_fraction_static, and the free memory before the
// weights and what loading them took.
SglangSettings logged_rank(uint64_t card_gib, uint64_t tp, double fraction, uint64_t free_gib, uint64_t loaded_gib) {
  SglangSettings s;
  s.card_bytes = card_gib * kGiB;
  s.tensor_parallel = tp;
  s.mem_fraction_static = fraction;
  s.free_before_weights = free_gib * kGiB;
  s.loaded_weights = loaded_gib * kGiB;
  return s;
}

uint64_t line_sum(const SglangProfile& p) {
  uint64_t sum = 0;
  for (const auto& l : p.lines) sum += l.bytes;
  return sum;
}

}  // namespace

// Llama 3.1 8B (32 layers, 8 KV heads of 128, bf16) on an 80 GiB card (81,920 MiB), TP 1:
// the 60-90 GiB bucket gives chunked prefill 8,192 and CUDA graphs to batch 256; reserved =
// 512 + 1.5 x 8,192 + 2 x 256 + 1 x 1,024 / 8 = 13,440 MiB (above the 10 GiB floor);
// mem_fraction_static = round((81,920 - 13,440) / 81,920, 3) = round(0.83594, 3) = 0.836.
TEST(SglangProfile, ChoosesMemFractionFromTheCard) {
  SglangSettings s;
  s.card_bytes = 80 * kGiB;
  s.weight_bytes = llama8b().native.bytes;
  SglangProfile p = sglang_profile(llama8b(), s);
  EXPECT_TRUE(p.mem_fraction_chosen);
  EXPECT_EQ(p.chunked_prefill_size, 8192u);
  EXPECT_EQ(p.cuda_graph_max_bs, 256u);
  EXPECT_EQ(p.reserved_mib, 13440u);
  EXPECT_DOUBLE_EQ(p.mem_fraction_static, 0.836);
  // One token: 32 layers x 8 heads x (128 + 128) x 2 B = 131,072 B.
  EXPECT_EQ(p.token_bytes, 131072u);
  // Free before the weights: 80 GiB - 0.5 GiB = 85,362,475,008 B; static share floor(0.836 x that)
  // = 71,363,029,106 B; minus the weights, divided by 131,072 B a token.
  const uint64_t expected = (71'363'029'106u - p.weights) / 131072u;
  EXPECT_EQ(p.max_total_num_tokens, expected);
  // Weights (sglang_weights.h): at TP 1 every tensor is whole and all but the norms are 2 MiB
  // multiples (embedding and head 1,002 MiB, qkv 48, o 32, gate_up 224, down 112): the allocator adds
  // only the 2 MiB segment of the 65 norms' 532,480 B, 1,564,672 B more. The RoPE cos/sin cache,
  // 131,072 positions x 128 x 4 B = 64 MiB, adds itself alone (tests/test_sglang_weights.cpp,
  // Llama31RopeCacheIs64MiB: its freed temporaries are taken whole by later o_proj tensors).
  EXPECT_EQ(p.weights, llama8b().native.bytes + 1'564'672u + (64u << 20));
  // max_num_reqs = clamp(tokens x 512 / 131,072 context, 2048, 4096) = 2048 (tokens < 524,288);
  // running requests = min(tokens / 2, 2048).
  EXPECT_EQ(p.max_running_requests, 2048u);
  EXPECT_EQ(line_sum(p), s.card_bytes);  // runtime + weights + pool + request map + reserve
}

// Small cards: the under-20 GiB bucket (chunk 2,048, graphs to batch 8) has no 10 GiB floor:
// 16 GiB = 16,384 MiB; reserved = 512 + 3,072 + 16 + 128 = 3,728; (16,384 - 3,728) / 16,384 = 0.77246 -> 0.772.
TEST(SglangProfile, SmallCardBucket) {
  SglangSettings s;
  s.card_bytes = 16 * kGiB;
  s.weight_bytes = 1 * kGiB;  // any checkpoint that fits
  SglangProfile p = sglang_profile(llama8b(), s);
  EXPECT_EQ(p.chunked_prefill_size, 2048u);
  EXPECT_EQ(p.cuda_graph_max_bs, 8u);
  EXPECT_EQ(p.reserved_mib, 3728u);
  EXPECT_DOUBLE_EQ(p.mem_fraction_static, 0.772);
}

// Given mem_fraction_static, TP 4 and an fp8 cache: 8 KV heads / 4 = 2 per rank, one byte a value:
// 32 x 2 x 256 x 1 = 16,384 B a token; free before the weights 80 - 2.5 = 77.5 GiB.
TEST(SglangProfile, GivenFractionTensorParallelFp8) {
  EngineRun r = parse_engine_command("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp 4 "
                                     "--mem-fraction-static 0.9 --kv-cache-dtype fp8_e4m3 --context-length 32768 --max-running-requests 64 --port 30000");
  EXPECT_EQ(r.engine, EngineKind::Sglang);
  EXPECT_EQ(r.model, "meta-llama/Llama-3.1-8B-Instruct");
  r.sglang.card_bytes = 80 * kGiB;
  r.sglang.weight_bytes = llama8b().native.bytes;
  SglangProfile p = sglang_profile(llama8b(), r.sglang);
  EXPECT_FALSE(p.mem_fraction_chosen);
  EXPECT_EQ(p.token_bytes, 16384u);
  const uint64_t free_before = 80 * kGiB - 5 * kGiB / 2;
  // Weights on a rank (sglang_weights.h): a quarter of the checkpoint, + 3/4 of the 65 norms (8,192 B
  // each) held whole = 399,360 B, + the allocator's rounding: the embedding and the head (250.5 MiB)
  // each in 252 MiB, their 1.5 MiB rests never reused; layer 0's qkv_proj (12 MiB) a segment of
  // its own; each o_proj (8 MiB, under 10) a 20 MiB segment whose 12 MiB rest the next layer's
  // qkv_proj fills, but for layer 31's; gate_up (56) and down (28) whole: 1.5 + 1.5 + 12 MiB; the
  // norms' 532,480 B in a 2 MiB segment, 1,564,672 B over: 17,293,312 B in all. Then the RoPE
  // cache (64 MiB, whole on every rank) and what its temporaries change: freqs, cos and sin, 32 MiB
  // segments freed after layer 0's o_proj, are taken by down_proj 0 (28 MiB, a 4 MiB rest), o_proj 1
  // (8 MiB; its 24 MiB rest then holds qkv_proj 2 and o_proj 2, 4 MiB left) and down_proj 1 (4 MiB
  // rest): 96 MiB in three segments where down_proj 0 and 1 took 28 MiB each and o_proj 1 and 2
  // 20 MiB each, 96 MiB; but qkv_proj 3 finds no 12 MiB rest of o_proj 2's and takes a 12 MiB
  // segment of its own, the pattern going on one layer later: 12 MiB more.
  const uint64_t weights = (llama8b().native.bytes + 3) / 4 + 399'360u + 17'293'312u + (64u << 20) + (12u << 20);
  EXPECT_EQ(p.weights, weights);
  const uint64_t static_share = static_cast<uint64_t>(0.9 * static_cast<double>(free_before));
  EXPECT_EQ(p.max_total_num_tokens, (static_share - weights) / 16384u);
  EXPECT_EQ(p.max_running_requests, 64u);
  EXPECT_EQ(line_sum(p), r.sglang.card_bytes);
}

// Latent attention: one vector of kv_lora_rank + rope (512 + 64) per layer on every rank.
TEST(SglangProfile, LatentPoolIsReplicatedAcrossRanks) {
  const Model& m = *Catalogue::builtin().find("deepseek-v3");
  SglangProfile p = sglang_profile(m, eight_ranks_of_141gib(m));
  EXPECT_EQ(p.token_bytes, 61u * 576u * 2u);  // 70,272 B
  EXPECT_GT(p.max_total_num_tokens, 0u);
}

TEST(SglangProfile, RefusesWhatSglangRefuses) {
  SglangSettings s;
  s.card_bytes = 80 * kGiB;
  s.kv_cache_dtype = "q8_0";
  EXPECT_THROW(sglang_profile(llama8b(), s), InputError);
  s.kv_cache_dtype = "auto";
  s.mem_fraction_static = 1.2;
  EXPECT_THROW(sglang_profile(llama8b(), s), InputError);
  EXPECT_THROW(parse_engine_command("sglang serve --model-path x --kv-cache-dtype bogus"), InputError);
  EXPECT_THROW(parse_engine_command("sglang serve --model-path x --mem-fraction-static 0"), InputError);
  EXPECT_THROW(parse_engine_command("python -m sglang.launch_server --tp two"), InputError);
  // Weights larger than the static share: no tokens, and the profile says SGLang will not start.
  SglangSettings big;
  big.card_bytes = 24 * kGiB;
  big.weight_bytes = 40 * kGiB;
  SglangProfile p = sglang_profile(llama8b(), big);
  EXPECT_EQ(p.max_total_num_tokens, 0u);
  ASSERT_FALSE(p.notes.empty());
}

TEST(SglangProfile, ServeCommandFlags) {
  EngineRun r = parse_engine_command("sglang serve --model-path Qwen/Qwen3-8B --tp-size 2 --chunked-prefill-size -1 --cuda-graph-max-bs 32 --dtype float32 --enable-foo");
  EXPECT_EQ(r.engine, EngineKind::Sglang);
  EXPECT_EQ(r.model, "Qwen/Qwen3-8B");
  EXPECT_EQ(r.sglang.tensor_parallel, 2u);
  ASSERT_TRUE(r.sglang.chunked_prefill_size.has_value());
  EXPECT_EQ(*r.sglang.chunked_prefill_size, -1);
  EXPECT_EQ(*r.sglang.cuda_graph_max_bs, 32u);
  EXPECT_EQ(r.sglang.dtype, "float32");
  ASSERT_EQ(r.notes.size(), 1u);  // --enable-foo ignored with a note
}

// Qwen3-Next-80B-A3B (48 layers: 36 Gated DeltaNet, every 4th full attention with 2 KV heads of
// 256; config.json of the catalogue) at TP 4, mem_fraction_static 0.85, 78 GiB free before the
// weights and 37 GiB of weights per GPU, worked by hand from _handle_max_mamba_cache and
// mamba_cache_per_req (configs/mamba_utils.py):
//   static share = floor(0.85 x 83,751,862,272) = 71,189,082,931 B; rest = that - 39,728,447,488
//   (37 GiB) = 31,460,635,443 B.
//   One request's state on a rank, per linear layer: conv (16 x 128 x 2 + 32 x 128) = 8,192 x 3
//   / 4 ranks = 6,144 values x 2 B (bf16) = 12,288 B; delta-rule matrix 32 x 128 x 128 / 4 =
//   131,072 values x 4 B (float32) = 524,288 B; x 36 layers = 19,316,736 B.
//   Slots = floor(31,460,635,443 x 0.9 / 1.9 / 19,316,736) = floor(771.5) = 771; the state pool
//   takes 771 x 19,316,736 = 14,893,203,456 B (772 slots allocated, slot 0 padding).
//   Attention tokens: (31,460,635,443 - 14,893,203,456) / (12 layers x 1 KV head a rank x
//   (256 + 256) x 2 B = 12,288 B) = floor(1,348,261.07) = 1,348,261.
//   Requests: 771 slots / 3 a request (radix cache on) = 257.
TEST(SglangProfile, HybridStatePoolComesFirst) {
  const Model& next = *Catalogue::builtin().find("qwen3-next-80b-a3b");
  SglangSettings s = logged_rank(80, 4, 0.85, 78, 37);
  SglangProfile p = sglang_profile(next, s);
  EXPECT_EQ(p.state_bytes_per_request, 19316736u);
  EXPECT_EQ(p.state_slots, 771u);
  EXPECT_EQ(p.state_pool_bytes, 14'912'520'192ull);  // 772 x 19,316,736
  EXPECT_EQ(p.token_bytes, 12288u);
  EXPECT_EQ(p.max_total_num_tokens, 1348261u);
  EXPECT_EQ(p.max_running_requests, 257u);
  EXPECT_TRUE(p.exact);
  EXPECT_EQ(line_sum(p), s.card_bytes);  // runtime, weights, pool, state, request map and reserve add up to the card
  // --mamba-ssm-dtype bfloat16 halves the matrix: 36 x (12,288 + 262,144) = 9,879,552 B a request.
  s.mamba_ssm_dtype = "bfloat16";
  EXPECT_EQ(sglang_profile(next, s).state_bytes_per_request, 9879552u);
  // --max-mamba-cache-size fixes the slots: 100 x 9,879,552 B leave (31,460,635,443 - 987,955,200)
  // / 12,288 = floor(2,479,873.07) tokens.
  s.max_mamba_cache_size = 100;
  SglangProfile fixed = sglang_profile(next, s);
  EXPECT_EQ(fixed.state_slots, 100u);
  EXPECT_EQ(fixed.max_total_num_tokens, 2479873u);
  // The radix cache disabled with --max-running-requests 8: one slot a request, 8 slots.
  s.max_mamba_cache_size.reset();
  s.disable_radix_cache = true;
  s.max_running_requests = 8;
  EXPECT_EQ(sglang_profile(next, s).state_slots, 8u);
  EXPECT_EQ(sglang_profile(next, s).max_running_requests, 8u);
}

TEST(SglangProfile, HybridFlagsAreReadOrRefused) {
  EngineRun r = parse_engine_command(
      "python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4 --max-mamba-cache-size 256 --mamba-ssm-dtype bfloat16 "
      "--mamba-full-memory-ratio 0.5 --disable-radix-cache");
  EXPECT_EQ(*r.sglang.max_mamba_cache_size, 256u);
  EXPECT_EQ(r.sglang.mamba_ssm_dtype, "bfloat16");
  EXPECT_DOUBLE_EQ(r.sglang.mamba_full_memory_ratio, 0.5);
  EXPECT_TRUE(r.sglang.disable_radix_cache);
  EXPECT_TRUE(r.notes.empty());
  EXPECT_THROW(parse_engine_command("sglang serve --model-path x --mamba-ssm-dtype float16"), InputError);
  EXPECT_THROW(parse_engine_command("sglang serve --model-path x --mamba-full-memory-ratio zero"), InputError);
  EXPECT_THROW(parse_engine_command("sglang serve --model-path x --max-mamba-cache-size 0"), InputError);
}

// What SGLang's model runner takes before the weights with more than one rank, by the rule in
// distributed/device_communicators/custom_all_reduce.py (world sizes 2, 4, 6, 8; more than two GPUs
// all NVLink-joined, "not supported on more than two PCIe-only GPUs") and the communicator sizes
// SGLang printed ("Init torch distributed ends. mem usage="): 0.13 GiB over PCIe (4 x L4), 2 GiB
// over NVLink (8 x H200); each rank also holds its 0.5 GiB CUDA context.
TEST(SglangProfile, CommunicatorsFollowHowTheGpusAreJoined) {
  const Model& qwq = *Catalogue::builtin().find("qwen2.5-32b");
  SglangSettings s;
  s.card_bytes = 23034ull << 20;  // an L4 as nvidia-smi reports it: 23,034 MiB
  s.tensor_parallel = 4;
  s.mem_fraction_static = 0.85;
  s.weight_bytes = qwq.native.bytes;
  s.gpu_link = GpuLink::Pcie;
  SglangProfile p = sglang_profile(qwq, s);
  EXPECT_FALSE(p.custom_all_reduce);
  const uint64_t pcie = kGiB / 2 + kGiB * 13 / 100;  // 536,870,912 + 139,586,437 = 676,457,349 B
  EXPECT_EQ(p.runtime_before_weights, 676'457'349u);
  EXPECT_EQ(p.runtime_before_weights, pcie);
  // Pool: 0.85 x (23,034 MiB - 676,457,349 B) - the weights on a rank, / 65,536 B a token
  // (64 layers x 2 KV heads a rank x 256 x 2 B). Weights: a quarter of the checkpoint + the norms
  // held whole (990,720 B) + the allocator's rounding (237,230,080 B) + the RoPE cache (131,072
  // positions x 128 x 4 B = 64 MiB), worked out in tests/test_sglang_weights.cpp (QwQ32bAtTp4RoundsUpPerSegment).
  const uint64_t static_share = static_cast<uint64_t>(0.85 * static_cast<double>((23034ull << 20) - pcie));
  EXPECT_EQ(p.token_bytes, 65536u);
  EXPECT_EQ(p.weights, (qwq.native.bytes + 3) / 4 + 990'720u + 237'230'080u + (64u << 20));
  EXPECT_EQ(p.max_total_num_tokens, (static_share - p.weights) / 65536u);
  EXPECT_EQ(line_sum(p), s.card_bytes);

  // The same four GPUs on an NVSwitch board: custom all-reduce runs and NCCL goes over NVLink.
  s.gpu_link = GpuLink::FullMesh;
  p = sglang_profile(qwq, s);
  EXPECT_TRUE(p.custom_all_reduce);
  EXPECT_EQ(p.runtime_before_weights, 5 * kGiB / 2);
  // Three GPUs: NVLink still, but custom all-reduce takes only 2, 4, 6 or 8.
  s.tensor_parallel = 3;
  p = sglang_profile(qwq, s);
  EXPECT_FALSE(p.custom_all_reduce);
  EXPECT_EQ(p.communicators, 2 * kGiB);
  // NVLink bridges join pairs: two bridged GPUs run it over NVLink, four fall back to PCIe.
  s.gpu_link = GpuLink::NvlinkPairs;
  s.tensor_parallel = 2;
  p = sglang_profile(qwq, s);
  EXPECT_TRUE(p.custom_all_reduce);
  EXPECT_EQ(p.communicators, 2 * kGiB);
  s.tensor_parallel = 4;
  p = sglang_profile(qwq, s);
  EXPECT_FALSE(p.custom_all_reduce);
  EXPECT_EQ(p.communicators, kGiB * 13 / 100);
  // --disable-custom-all-reduce turns it off on any board; one GPU has no communicators.
  EngineRun r = parse_engine_command("python3 -m sglang.launch_server --model-path Qwen/QwQ-32B --tp 8 --disable-custom-all-reduce --enable-p2p-check");
  EXPECT_TRUE(r.sglang.disable_custom_all_reduce);
  EXPECT_TRUE(r.notes.empty()) << r.notes.front();
  r.sglang.card_bytes = 80 * kGiB;
  r.sglang.weight_bytes = qwq.native.bytes;
  r.sglang.gpu_link = GpuLink::FullMesh;
  EXPECT_FALSE(sglang_profile(qwq, r.sglang).custom_all_reduce);
  s.tensor_parallel = 1;
  p = sglang_profile(qwq, s);
  EXPECT_EQ(p.communicators, 0u);
  EXPECT_EQ(p.runtime_before_weights, kGiB / 2);
}

// SGLang's ROCm build (RCCL and aiter's custom all-reduce) took 3.41 to 3.83 GB in
// init_torch_distributed on 8 x MI355X, 3.83 GB on the rank with the least free memory ("Init torch
// distributed ends. mem usage=3.83 GB", ajith-sirra-amd/Issues, the GLM-5-FP8 and Kimi-K2.5 logs):
// an AMD box takes that, whatever joins its GPUs; each rank also holds its 0.5 GiB context.
TEST(SglangProfile, RocmCommunicatorsAsPrintedOnMi355x) {
  const Model& qwq = *Catalogue::builtin().find("qwen2.5-32b");
  SglangSettings s;
  s.card_bytes = 288 * kGiB;
  s.tensor_parallel = 8;
  s.mem_fraction_static = 0.826;
  s.weight_bytes = qwq.native.bytes;
  s.gpu_link = GpuLink::FullMesh;
  s.rocm = true;
  SglangProfile p = sglang_profile(qwq, s);
  // 3.83 GiB = 4,112,431,185 B (kGiB x 383 / 100, truncated); + 536,870,912 B of context.
  EXPECT_EQ(p.communicators, 4'112'431'185u);
  EXPECT_EQ(p.runtime_before_weights, 4'649'302'097u);
  EXPECT_EQ(line_sum(p), s.card_bytes);
  // The same board taken as NVIDIA's: the NVLink figure, 2 GiB.
  s.rocm = false;
  EXPECT_EQ(sglang_profile(qwq, s).communicators, 2 * kGiB);
  // One rank has no communicators on either platform.
  s.rocm = true;
  s.tensor_parallel = 1;
  EXPECT_EQ(sglang_profile(qwq, s).communicators, 0u);
}

// Qwen3.5-397B-A17B on two GPUs (kvcache-ai/ktransformers issue #1870, worked there by hand): 45
// Gated DeltaNet layers hold, per request and rank, 32 value heads x 128 x 128 x 4 B (float32) +
// 6,144 conv channels x 3 x 2 B = 2,134,016 B -> 96,030,720 B; the 15 attention layers 1 KV head a
// rank x 256 x 2 x 2 B = 15,360 B a token. With 22.84 GiB free, 3.76 GiB of weights on the GPU and
// mem_fraction_static 0.85: rest = 16,808,446,000 B (floor), slots = floor(rest x 0.9 / 1.9 /
// 96,030,720) = 82 (SGLang printed 82), tokens = floor((rest - 82 x 96,030,720) / 15,360).
TEST(SglangProfile, GatedDeltaNetStateSlotsAsPrinted) {
  const Model& m = *Catalogue::builtin().find("qwen3.5-397b-a17b");
  SglangSettings s;
  s.card_bytes = static_cast<uint64_t>(23.99 * static_cast<double>(kGiB));
  s.tensor_parallel = 2;
  s.mem_fraction_static = 0.85;
  s.free_before_weights = static_cast<uint64_t>(22.84 * static_cast<double>(kGiB));
  s.loaded_weights = static_cast<uint64_t>(3.76 * static_cast<double>(kGiB));
  s.max_running_requests = 1;
  const SglangProfile p = sglang_profile(m, s);
  EXPECT_EQ(p.state_bytes_per_request, 45u * (32u * 128u * 128u * 4u + 6144u * 3u * 2u));
  EXPECT_EQ(p.state_slots, 82u);
  const uint64_t rest = static_cast<uint64_t>(std::floor(0.85 * static_cast<double>(*s.free_before_weights))) - *s.loaded_weights;
  EXPECT_EQ(p.token_bytes, 15360u);
  EXPECT_EQ(p.max_total_num_tokens, (rest - 82u * p.state_bytes_per_request) / 15360u);
}

// DeepSeek-V3.2's sparse (DSA) attention: each of 61 layers holds the MLA latent (512) and rope (64)
// plus the indexer's fp8 key (128 B) with a 4-byte scale. bf16 cache: 576 x 2 + 132 = 1,284 B a
// layer. fp8_e4m3: SGLang packs the latent as fp8 with one 4-byte scale per 128 values and keeps the
// rope part in bf16 (memory_pool.py, override_kv_cache_dim = 512 + 16 + 128 = 656), + 132 = 788 B.
TEST(SglangProfile, SparseAttentionFp8CacheIsPacked) {
  const Model& m = *Catalogue::builtin().find("deepseek-v3.2");
  SglangSettings s = eight_ranks_of_141gib(m);
  EXPECT_EQ(sglang_profile(m, s).token_bytes, 61u * 1284u);
  s.kv_cache_dtype = "fp8_e4m3";
  EXPECT_EQ(sglang_profile(m, s).token_bytes, 61u * 788u);
  // Priced unpacked for the pool's size: (512 + 64) x 1 B + 132 B of index key = 708 B a layer.
  EXPECT_EQ(sglang_profile(m, s).cell_bytes, 61u * 708u);
}

// GLM-5 (78 DSA layers: kv_lora_rank 512, rope 64, index key 128) at TP 8 with an fp8_e4m3 cache,
// the free memory and weights as a log prints them: SGLang divides what the static share leaves by
// the latent priced unpacked, 78 x (576 x 1 B + 128 + 128 / 128 x 4 B) = 78 x 708 = 55,224 B a
// token (pool_configurator.py _compute_cell_size), then allocates each token at the packed size,
// 78 x (512 + 512 / 128 x 4 + 64 x 2 + 132) = 78 x 788 = 61,464 B (memory_pool.py
// override_kv_cache_dim). By hand: 0.75 x 256 GiB = 192 GiB; less 64 GiB of weights, 128 GiB =
// 137,438,953,472 B; / 55,224 = 2,488,754.05 -> 2,488,754 tokens (with 61,464 B it would be
// 2,236,088); the pool holds 2,488,754 x 61,464 = 152,968,775,856 B, more than the 128 GiB priced.
TEST(SglangProfile, SparseAttentionFp8PoolIsSizedUnpackedAndAllocatedPacked) {
  const Model& m = *Catalogue::builtin().find("glm-5");
  SglangSettings s = logged_rank(288, 8, 0.75, 256, 64);
  s.kv_cache_dtype = "fp8_e4m3";
  s.weight_bytes = m.native.bytes;
  const SglangProfile p = sglang_profile(m, s);
  EXPECT_EQ(p.cell_bytes, 55'224u);
  EXPECT_EQ(p.token_bytes, 61'464u);
  EXPECT_EQ(p.max_total_num_tokens, 2'488'754u);
  EXPECT_EQ(p.token_pool_bytes, 152'968'775'856u);
  EXPECT_EQ(line_sum(p), s.card_bytes);
  // A bf16 cache packs nothing: both 78 x (576 x 2 + 132) = 78 x 1,284 = 100,152 B;
  // 137,438,953,472 / 100,152 = 1,372,303.4 -> 1,372,303 tokens.
  s.kv_cache_dtype = "auto";
  const SglangProfile b = sglang_profile(m, s);
  EXPECT_EQ(b.cell_bytes, 100'152u);
  EXPECT_EQ(b.token_bytes, 100'152u);
  EXPECT_EQ(b.max_total_num_tokens, 1'372'303u);
}

namespace {
// A 140 GiB card at mem_fraction_static 0.75 with 100 GiB free before 8 GiB of weights: the pool
// gets 0.75 x 100 - 8 = 67 GiB = 71,940,702,208 B.
SglangSettings pool_of_67_gib(const Model& m) {
  SglangSettings s = logged_rank(140, 1, 0.75, 100, 8);
  s.weight_bytes = m.native.bytes;
  return s;
}
}  // namespace

// Gemma 3 is not on SGLang's hybrid SWA list (configs/model_config.py is_hybrid_swa_model), so its
// 29 window layers hold every token like its 5 full ones, one pool over all 34 layers:
// 34 x 4 KV heads x (256 + 256) x 2 B = 139,264 B a token. By hand: 0.75 x 100 GiB = 75 GiB, less
// 8 GiB of weights, 67 GiB = 71,940,702,208 B; / 139,264 = 516,577.9 -> 516,577 tokens, no window pool.
TEST(SglangProfile, Gemma3WindowLayersHoldEveryToken) {
  const Model& m = *Catalogue::builtin().find("gemma-3-4b");
  const SglangProfile p = sglang_profile(m, pool_of_67_gib(m));
  EXPECT_EQ(p.token_bytes, 139'264u);
  EXPECT_EQ(p.cell_bytes, 139'264u);
  EXPECT_EQ(p.swa_tokens, 0u);
  EXPECT_EQ(p.max_total_num_tokens, 516'577u);
  EXPECT_EQ(p.token_pool_bytes, 71'940'579'328u);  // 516,577 x 139,264 B
}

// gpt-oss is on the list (GptOssForCausalLM): its 12 sliding layers get swa_full_tokens_ratio (0.8)
// of the 12 full layers' tokens. A layer at TP 1: 8 KV heads x (64 + 64) x 2 B = 2,048 B; full
// 12 x 2,048 = 24,576 B, window 24,576 B. By hand: 67 GiB = 71,940,702,208 B / (24,576 + 0.8 x
// 24,576 = 44,236.8) = 1,626,263.7 -> 1,626,263 full tokens; window tokens floor(0.8 x that) =
// 1,301,010; the pool (1,626,263 + 1,301,010) x 24,576 = 71,940,661,248 B.
TEST(SglangProfile, GptOssKeepsItsHybridWindowPool) {
  const Model& m = *Catalogue::builtin().find("gpt-oss-20b");
  const SglangProfile p = sglang_profile(m, pool_of_67_gib(m));
  EXPECT_EQ(p.cell_bytes, 24'576u);
  EXPECT_EQ(p.max_total_num_tokens, 1'626'263u);
  EXPECT_EQ(p.swa_tokens, 1'301'010u);
  EXPECT_EQ(p.token_pool_bytes, 71'940'661'248u);
}

// A pasted --enable-dp-attention command's settings, with its DP size as the engine sets it
// (sglang_engine.cpp), on a card of `card_gib` GiB.
namespace {
SglangSettings dp_attention_settings(const std::string& command, uint64_t card_gib) {
  const EngineRun r = parse_engine_command(command);
  EXPECT_TRUE(r.parallel.dp_attention) << command;
  SglangSettings s = r.sglang;
  s.attention_dp = r.parallel.data_parallel;
  s.card_bytes = card_gib * kGiB;
  return s;
}
}  // namespace

// --enable-dp-attention on Qwen3-30B-A3B (48 layers, 4 KV heads of 128, bf16 cache) at TP 4 on a
// 141 GiB card (144,384 MiB), mem_fraction_static chosen (server_args.py): the 60-160 GiB bucket,
// chunk 8,192 and CUDA graphs to batch 512 (tp 4); reserved 512 + 1.5 x 8,192 + 2 x 512 + 4 / 8 x
// 1,024 = 14,336 MiB, then DP attention's padding: dp 4: + 512 x 4 x 3 = 6,144 and, batch 512 above
// 300, + 512 x 4 x 1.5 = 3,072: 23,552 MiB; (144,384 - 23,552) / 144,384 = 0.83688 -> 0.837.
// dp 2: + 3,072 + 1,536 = 18,944 MiB; 125,440 / 144,384 = 0.86880 -> 0.869.
// The chunk a DP rank prefills: 8,192 / dp. The pool's KV heads over tp / dp ranks: dp 4, all 4
// heads: 48 x 4 x 256 x 2 B = 98,304 B a token; dp 2, 2 heads: 49,152 B. --max-running-requests
// 64 is shared by the dp pools: 16 a DP rank at dp 4.
TEST(SglangProfile, DpAttentionPoolsFollowTheAttentionGroup) {
  const Model& m = *Catalogue::builtin().find("qwen3-30b-a3b");
  SglangSettings s = dp_attention_settings("python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --tp 4 --dp 4 --enable-dp-attention "
                                           "--max-running-requests 64", 141);
  s.weight_bytes = m.native.bytes;
  const SglangProfile p = sglang_profile(m, s);
  EXPECT_EQ(p.attention_tp, 1u);
  EXPECT_EQ(p.reserved_mib, 23552u);
  EXPECT_DOUBLE_EQ(p.mem_fraction_static, 0.837);
  EXPECT_EQ(p.chunked_prefill_size, 2048u);
  EXPECT_EQ(p.cuda_graph_max_bs, 512u);
  EXPECT_EQ(p.token_bytes, 98304u);
  // Free before the weights: 141 GiB - 0.5 GiB context - 2 GiB NCCL (4 ranks, link not named).
  const uint64_t free_before = 141 * kGiB - 5 * kGiB / 2;
  EXPECT_EQ(p.free_before_weights, free_before);
  EXPECT_EQ(p.weights, sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 4).total);  // test_sglang_weights.cpp works its parts
  const uint64_t static_share = static_cast<uint64_t>(std::floor(0.837 * static_cast<double>(free_before)));
  EXPECT_EQ(p.max_total_num_tokens, (static_share - p.weights) / 98304u);
  EXPECT_EQ(p.max_running_requests, 16u);
  EXPECT_EQ(line_sum(p), s.card_bytes);

  s.attention_dp = 2;
  const SglangProfile p2 = sglang_profile(m, s);
  EXPECT_EQ(p2.attention_tp, 2u);
  EXPECT_EQ(p2.reserved_mib, 18944u);
  EXPECT_DOUBLE_EQ(p2.mem_fraction_static, 0.869);
  EXPECT_EQ(p2.chunked_prefill_size, 4096u);
  EXPECT_EQ(p2.token_bytes, 49152u);
  EXPECT_EQ(p2.max_running_requests, 32u);

  // Without DP attention: 1 KV head a rank, 24,576 B a token; no DP padding: 14,336 MiB reserved.
  s.attention_dp = 1;
  const SglangProfile p1 = sglang_profile(m, s);
  EXPECT_EQ(p1.token_bytes, 24576u);
  EXPECT_EQ(p1.reserved_mib, 14336u);
  EXPECT_EQ(p1.chunked_prefill_size, 8192u);

  s.attention_dp = 3;  // does not divide tp 4: SGLang asserts tp_size % dp_size == 0
  EXPECT_THROW(sglang_profile(m, s), InputError);
}

// The dense Qwen3-32B (64 layers, 8 KV heads of 128, bf16 cache) under --tp 4 --dp 2
// --enable-dp-attention on an 80 GiB card (81,920 MiB), mem_fraction_static chosen: the 60-160 GiB
// bucket, chunk 8,192 and CUDA graphs to batch 512 (tp 4); reserved 512 + 1.5 x 8,192 + 2 x 512 +
// 4 / 8 x 1,024 = 14,336 MiB, + DP padding 512 x 2 x 3 = 3,072 and (batch 512 above 300) 512 x 2 x
// 1.5 = 1,536: 18,944 MiB; (81,920 - 18,944) / 81,920 = 0.76875 -> 0.769. The pool's KV heads over
// tp / dp = 2 ranks: 4 heads, 64 x 4 x 256 x 2 B = 131,072 B a token (65,536 B at plain TP 4, 2
// heads). Free before the weights: 80 GiB - 0.5 GiB context - 2 GiB NCCL (4 ranks, link not named).
// The weights are test_sglang_weights.cpp's (worked there); the pool what the static share leaves.
TEST(SglangProfile, DpAttentionOnDenseQwen3) {
  const Model& m = *Catalogue::builtin().find("qwen3-32b");
  SglangSettings s = dp_attention_settings("python -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 4 --dp 2 --enable-dp-attention", 80);
  s.weight_bytes = m.native.bytes;
  const SglangProfile p = sglang_profile(m, s);
  EXPECT_EQ(p.attention_tp, 2u);
  EXPECT_EQ(p.reserved_mib, 18944u);
  EXPECT_DOUBLE_EQ(p.mem_fraction_static, 0.769);
  EXPECT_EQ(p.chunked_prefill_size, 4096u);
  EXPECT_EQ(p.token_bytes, 131072u);
  const uint64_t free_before = 80 * kGiB - 5 * kGiB / 2;
  EXPECT_EQ(p.free_before_weights, free_before);
  EXPECT_EQ(p.weights, sglang_rank_weights(m, m.native.bytes, 4, 1, "auto", 2).total);
  const uint64_t static_share = static_cast<uint64_t>(std::floor(0.769 * static_cast<double>(free_before)));
  EXPECT_EQ(p.max_total_num_tokens, (static_share - p.weights) / 131072u);
  EXPECT_EQ(line_sum(p), s.card_bytes);
  s.attention_dp = 1;
  EXPECT_EQ(sglang_profile(m, s).token_bytes, 65536u);
}

// Qwen3-Next-80B-A3B under --tp 4 --dp 2 --enable-dp-attention, with HybridStatePoolComesFirst's
// figures (80 GiB card, mem_fraction_static 0.85, 78 GiB free before the weights, 37 GiB of weights):
// the state is split over attn_tp_size 2 (configs/qwen3_next.py mamba2_cache_params:
// Mamba2StateShape.create(tp_world_size=attn_tp_size)), twice the TP 4 state: per linear layer conv
// 8,192 x 3 / 2 = 12,288 values x 2 B = 24,576 B and matrix 32 x 128 x 128 / 2 = 262,144 values x 4 B
// = 1,048,576 B; x 36 = 38,633,472 B a request. Rest 31,460,635,443 B as there; slots =
// floor(31,460,635,443 x 0.9 / 1.9 / 38,633,472) = floor(385.74) = 385, taking 14,873,886,720 B.
// The 2 KV heads over 2 ranks: 1 a rank, as at TP 4: 12 x 512 x 2 B = 12,288 B a token; tokens =
// floor((31,460,635,443 - 14,873,886,720) / 12,288) = floor(1,349,833.07) = 1,349,833. Requests:
// 385 / 3 = 128.
TEST(SglangProfile, DpAttentionOnQwen3NextSplitsTheStateOverTheGroup) {
  const Model& next = *Catalogue::builtin().find("qwen3-next-80b-a3b");
  SglangSettings s = dp_attention_settings("python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4 --dp 2 --enable-dp-attention", 80);
  s.mem_fraction_static = 0.85;
  s.free_before_weights = 78 * kGiB;
  s.loaded_weights = 37 * kGiB;
  const SglangProfile p = sglang_profile(next, s);
  EXPECT_EQ(p.attention_tp, 2u);
  EXPECT_EQ(p.state_bytes_per_request, 38'633'472u);
  EXPECT_EQ(p.state_slots, 385u);
  EXPECT_EQ(p.state_pool_bytes, 14'912'520'192ull);  // 386 slots (slot 0 padding) x 38,633,472
  EXPECT_EQ(p.token_bytes, 12288u);
  EXPECT_EQ(p.max_total_num_tokens, 1'349'833u);
  EXPECT_EQ(p.max_running_requests, 128u);
  EXPECT_EQ(line_sum(p), s.card_bytes);
  // --max-mamba-cache-size is the server's: each DP group takes max_mamba_cache_size // attn_dp_size
  // (_handle_max_mamba_cache, mem_cache/kv_cache_configurator.py): 256 // 2 = 128 slots, 128 x
  // 38,633,472 = 4,945,084,416 B, leaving floor((31,460,635,443 - 4,945,084,416) / 12,288) =
  // floor(2,157,841.07) = 2,157,841 tokens.
  s.max_mamba_cache_size = 256;
  const SglangProfile capped = sglang_profile(next, s);
  EXPECT_EQ(capped.state_slots, 128u);
  EXPECT_EQ(capped.max_total_num_tokens, 2'157'841u);
}

// --moe-dense-tp-size: SGLang's argparse takes an int and server_args.py asserts it is 1 or None;
// 1 reaches the weights (sglang_dense_mlp_tp), anything else exits 2 naming the flag.
TEST(SglangProfile, MoeDenseTpSizeParsedAndBadValuesRefused) {
  const EngineRun r = parse_engine_command("python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --moe-dense-tp-size 1");
  EXPECT_EQ(r.sglang.moe_dense_tp_size, 1u);
  for (const auto& n : r.notes) EXPECT_EQ(n.find("moe-dense-tp-size"), std::string::npos) << n;
  EXPECT_EQ(parse_engine_command("python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8").sglang.moe_dense_tp_size, 0u);
  EXPECT_THROW(parse_engine_command("python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --moe-dense-tp-size 2"), InputError);
  EXPECT_THROW(parse_engine_command("python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --moe-dense-tp-size none"), InputError);
}
