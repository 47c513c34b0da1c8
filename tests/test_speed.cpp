// The speed model (src/speed/): bytes each memory serves per token for the placement an engine
// makes, decode and prefill worked out by hand from a factor table given here (not the fitted
// data/speed_efficiency.json, whose numbers change when refitted), and the measurement file's
// shape and set-aside rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "core/error.h"
#include "engines/engine_run.h"
#include "engines/llamacpp_placement.h"
#include "plan/hardware.h"
#include "speed/speed_estimate.h"
#include "speed/speed_validate.h"
#include "sha256.h"
#include "test_data.h"

namespace vc {
namespace {

// A 4-layer MoE by hand: per layer 100 MB attention and 8 experts of 100 MB (k = 2), 1,000 cache
// bytes per token; a 50 MB head and a 50 MB input embedding.
struct TinyMoe {
  Model model;
  Footprint f;
  TinyMoe() {
    model.id = "tiny-moe";
    for (int i = 0; i < 4; ++i) {
      LayerConfig l;
      l.attention.kind = AttentionKind::Full;
      l.attention.query_heads = 8;
      l.attention.kv_heads = 2;
      l.attention.head_dim_k = 64;
      l.attention.head_dim_v = 64;
      l.feed_forward.kind = FeedForwardKind::MoE;
      l.feed_forward.experts = 8;
      l.feed_forward.experts_per_token = 2;
      model.layers.push_back(l);
      LayerFootprint lf;
      lf.attention = 100'000'000;
      lf.routed = 800'000'000;
      lf.cache_per_token = 1000;
      lf.kind = AttentionKind::Full;
      lf.experts = 8;
      lf.experts_per_token = 2;
      f.layers.push_back(lf);
    }
    model.params.by_class = {{ParamClass::Embedding, 25'000'000}, {ParamClass::OutputHead, 25'000'000}, {ParamClass::Attention, 200'000'000},
                             {ParamClass::RoutedExperts, 1'600'000'000}};
    model.params.active_by_class = {{ParamClass::RoutedExperts, 400'000'000}};
    model.params.derived_total = 1'850'000'000;
    model.params.derived_active = 1'000'000'000;
    f.embedding = 50'000'000;
    f.output_head = 50'000'000;
    f.weights_total = 4 * 900'000'000ull + 100'000'000;
  }
};

// Round factors so the arithmetic below can be followed: half the bandwidth everywhere, 10 us per
// layer, 20 us per MoE layer, 100 us per GPU<->CPU hand-off, half the BF16 rate for prefill.
const char* kFactors = R"({
  "source": "test", "decode": [{"engine": "*", "backend": "*", "memory": "*", "bandwidth_share": 0.5, "layer_us": 10, "moe_layer_us": 20, "source": "t"}],
  "prefill": [{"engine": "*", "backend": "*", "memory": "*", "compute_share": 0.5, "source": "t"}],
  "handoff_us": 100, "tp_allreduce_us": 30, "pcie_share": 0.8, "cpu_flops_per_ram_byte": 20, "second_socket_gain": 0.4,
  "ranges": {"decode_on_device": {"low": 0.9, "high": 1.1}, "decode_offload": {"low": 0.8, "high": 1.3}, "prefill": {"low": 0.5, "high": 2}},
  "rule_ranges": {"decode_on_device": {"low": 0.3, "high": 0.8}, "decode_offload": {"low": 0.3, "high": 0.6}, "prefill": {"low": 0.2, "high": 0.7}}})";

Box rtx4090(uint64_t ram_gbps = 80) {
  Box b;
  b.gpus = parse_gpus("RTX 4090", "--gpu");
  b.ram_bandwidth = ram_gbps * 1'000'000'000;
  return b;
}

const MemoryRead& named(const TokenReads& t, const std::string& name) {
  for (const auto& m : t.memories) {
    if (m.name == name) return m;
  }
  throw std::runtime_error("no memory " + name);
}

TEST(SpeedReads, AllOnTheGpuReadsKOfNExpertsAndTheHead) {
  TinyMoe m;
  SpeedSettings s;
  s.depth = 999;
  const TokenReads t = token_reads(m.model, m.f, rtx4090(), s);
  const MemoryRead& g = named(t, "GeForce RTX 4090");
  // 4 x (100 MB attention + 2/8 x 800 MB experts) + 50 MB head = 1,250 MB; the embedding is a lookup.
  EXPECT_EQ(g.weights_read, 1'250'000'000u);
  // 4 layers x 1,000 B x (999 + 1) tokens in the cache.
  EXPECT_EQ(g.cache_read, 4'000'000u);
  EXPECT_EQ(g.layers, 4u);
  EXPECT_EQ(g.moe_layers, 4u);
  EXPECT_EQ(t.handoffs, 0u);
  EXPECT_FALSE(t.offload);
}

TEST(SpeedReads, NCpuMoeMovesTheFirstLayersExpertsToRam) {
  TinyMoe m;
  SpeedSettings s;
  s.llamacpp.overrides = cpu_moe_overrides(2);  // --n-cpu-moe 2: layers 0 and 1
  const TokenReads t = token_reads(m.model, m.f, rtx4090(), s);
  // GPU: 4 x 100 MB attention + 2 x 200 MB experts + 50 MB head; RAM: 2 x 200 MB experts.
  EXPECT_EQ(named(t, "GeForce RTX 4090").weights_read, 850'000'000u);
  EXPECT_EQ(named(t, "RAM").weights_read, 400'000'000u);
  EXPECT_EQ(named(t, "RAM").weights_held, 1'600'000'000u);
  EXPECT_EQ(named(t, "RAM").moe_layers, 2u);
  // GPU -> CPU -> GPU in layers 0 and 1.
  EXPECT_EQ(t.handoffs, 4u);
  EXPECT_TRUE(t.offload);
}

TEST(SpeedReads, ExpsOnCpuAndFewerActiveExperts) {
  TinyMoe m;
  SpeedSettings s;
  s.llamacpp.overrides = parse_overrides("exps=CPU");
  s.experts_per_token = 1;  // --experts-per-token 1: 1/8 of each layer's experts
  const TokenReads t = token_reads(m.model, m.f, rtx4090(), s);
  EXPECT_EQ(named(t, "RAM").weights_read, 400'000'000u);                // 4 x 100 MB
  EXPECT_EQ(named(t, "GeForce RTX 4090").weights_read, 450'000'000u);   // 4 x 100 MB + 50 MB
  EXPECT_EQ(t.handoffs, 8u);
}

TEST(SpeedReads, TensorParallelSplitsEveryRead) {
  TinyMoe m;
  SpeedSettings s;
  s.engine = "vllm";
  s.tensor_parallel = 2;
  Box b;
  b.gpus = parse_gpus("2xrtx-4090", "--gpu");
  const TokenReads t = token_reads(m.model, m.f, b, s);
  ASSERT_EQ(t.memories.size(), 1u);
  EXPECT_EQ(t.memories[0].weights_read, 625'000'000u);  // 1,250 MB / 2
  EXPECT_EQ(t.tensor_parallel, 2u);
}

// --cpu-offload-gb (issue 18): 200 MB of the rank's weights in pinned host memory cross the RTX
// 4090's host link (32 GB/s, PCIe 4.0 x16, at pcie_share 0.8) at every forward pass. vLLM reads
// them in place (UVA), so the GPU reads 1,250 - 200 = 1,050 MB: (1,050 + 4) MB / (1,008 GB/s x 0.5)
// = 2.091270 ms + 4 layers x 10 us + 4 MoE layers x 20 us = 2.211270 ms; the link 200 MB / (32 GB/s
// x 0.8) = 7.8125 ms; 10.023770 ms -> 99.763 tok/s, the offload range. SGLang copies them into GPU
// memory first and reads them there: the GPU keeps its 1,254 MB (2.608095 ms), 10.420595 ms.
TEST(SpeedEstimate, CpuOffloadReadsOverTheHostLink) {
  TinyMoe m;
  const SpeedData data(kFactors);
  SpeedSettings s;
  s.engine = "vllm";
  s.depth = 999;
  s.host_offloaded = 200'000'000;
  const TokenReads t = token_reads(m.model, m.f, rtx4090(), s);
  ASSERT_EQ(t.memories.size(), 2u);
  EXPECT_EQ(named(t, "GeForce RTX 4090").weights_read, 1'050'000'000u);
  EXPECT_EQ(named(t, "GeForce RTX 4090 host link").weights_read, 200'000'000u);
  EXPECT_EQ(named(t, "GeForce RTX 4090 host link").bandwidth, 32'000'000'000u);
  EXPECT_TRUE(t.offload);
  const SpeedEstimate e = decode_speed(t, data);
  EXPECT_NEAR(e.seconds, 0.010023770, 1e-8);
  EXPECT_NEAR(e.low, 0.8 * e.tok_s, 1e-9);  // the offload range
  s.engine = "sglang";
  EXPECT_NEAR(decode_speed(token_reads(m.model, m.f, rtx4090(), s), data).seconds, 0.010420595, 1e-8);
  // Prefill (SGLang here, vLLM alike): the compute of PrefillCopiesRamWeightsOncePerUbatch (24.239 us) plus the
  // offloaded 200 MB over the host link once per 512-token pass: 200 MB / (32 GB/s x 0.8) / 512 =
  // 15.259 us; 39.498 us -> 25,317.9 tok/s. A 256-token chunk: 30.518 + 24.239 = 54.757 us -> 18,262.5.
  s.depth = 0;
  const SpeedEstimate p = prefill_speed(token_reads(m.model, m.f, rtx4090(), s), data);
  EXPECT_NEAR(p.tok_s, 25317.9, 0.5);
  EXPECT_NE(p.formula.find("once per 512-token forward pass"), std::string::npos) << p.formula;
  s.ubatch = 256;
  EXPECT_NEAR(prefill_speed(token_reads(m.model, m.f, rtx4090(), s), data).tok_s, 18262.5, 0.5);
}

TEST(SpeedReads, RefusesWhatTheBoxCannotHold) {
  TinyMoe m;
  SpeedSettings s;
  s.llamacpp.overrides = parse_overrides("exps=CUDA1");
  EXPECT_THROW(token_reads(m.model, m.f, rtx4090(), s), InputError);
  s.llamacpp.overrides.clear();
  s.engine = "tensorrt";
  EXPECT_THROW(token_reads(m.model, m.f, rtx4090(), s), InputError);
  s.engine = "vllm";
  s.tensor_parallel = 2;
  EXPECT_THROW(token_reads(m.model, m.f, rtx4090(), s), InputError);
}

TEST(SpeedEstimate, DecodeByHandWithExpertsInRam) {
  TinyMoe m;
  const SpeedData data(kFactors);
  SpeedSettings s;
  s.llamacpp.overrides = cpu_moe_overrides(2);
  s.depth = 999;
  const SpeedEstimate e = decode_speed(token_reads(m.model, m.f, rtx4090(), s), data);
  // GPU: (850 MB + 4 MB cache) / (1,008 GB/s x 0.5) = 1.69444 ms, + 4 layers x 10 us + 2 MoE x 20 us;
  // RAM: 400 MB / (80 GB/s x 0.5) = 10 ms + 2 MoE x 20 us; 4 hand-offs x 100 us.
  // 1.69444 + 0.08 + 10 + 0.04 + 0.4 = 12.21444 ms -> 81.870 tok/s; offload range 0.8-1.3.
  EXPECT_NEAR(e.seconds, 0.0122144444, 1e-9);
  EXPECT_NEAR(e.tok_s, 81.870, 0.001);
  EXPECT_NEAR(e.low, 81.870 * 0.8, 0.001);
  EXPECT_NEAR(e.high, 81.870 * 1.3, 0.001);
  EXPECT_NE(e.formula.find("4 GPU-CPU hand-offs"), std::string::npos) << e.formula;
}

TEST(SpeedEstimate, AFasterGpuPaysLessPerLayer) {
  // Half of the per-layer cost is compute that scales with the GPU's dense BF16 rate, at 100 TFLOPS:
  // the RTX 4090 (devices.json: 165.2) pays 10 us x (0.5 + 0.5 x 100 / 165.2) = 8.02663 us a layer;
  // the CPU pays the plain 10 us. devices.json's RTX PRO 6000 (503.8) pays 5.99246 us.
  std::string json = kFactors;
  json.insert(json.rfind('}'), R"(, "layer_reference_tflops": 100, "layer_compute_share": 0.5)");
  const SpeedData data(json);
  EXPECT_NEAR(data.layer_cost_scale(true, 165.2), 0.802663, 1e-6);
  EXPECT_NEAR(data.layer_cost_scale(true, 503.8), 0.599246, 1e-6);
  EXPECT_EQ(data.layer_cost_scale(false, 0), 1.0);
  EXPECT_EQ(data.layer_cost_scale(true, 0), 1.0);  // no known rate: unscaled
  TinyMoe m;
  SpeedSettings s;
  s.llamacpp.overrides = cpu_moe_overrides(2);
  s.depth = 999;
  const SpeedEstimate e = decode_speed(token_reads(m.model, m.f, rtx4090(), s), data);
  // As DecodeByHandWithExpertsInRam, with the GPU's 4 layers x 10 us + 2 MoE x 20 us = 80 us
  // scaled by 0.802663 (64.213 us): 12.21444 ms - 0.015787 ms = 12.198657 ms.
  EXPECT_NEAR(e.seconds, 0.0122144444 - 80e-6 * (1 - 0.8026634), 1e-9);
  EXPECT_NE(e.assumption.find("dense BF16 TFLOPS"), std::string::npos) << e.assumption;
}

TEST(SpeedEstimate, TheCpuWithKnownThreadsTakesTheSlowerOfRamAndThreadsPlusACostPerLayer) {
  // CPU only, depth 999: 1,250 MB of weights (4 x 100 MB attention + 4 x 2/8 x 800 MB experts +
  // 50 MB head) and 4 MB of cache, 4 layers, 4 MoE layers; RAM 100 GB/s x 0.5 = 50 GB/s.
  // kFactors alone (no rate per thread): 1,254 MB / 50 GB/s = 25.08 ms + 4 x 10 us + 4 x 20 us
  // = 25.2 ms whatever the threads.
  TinyMoe m;
  Box cpu;
  cpu.ram_bandwidth = 100'000'000'000;
  SpeedSettings s;
  s.depth = 999;
  const SpeedData plain(kFactors);
  const SpeedEstimate none = decode_speed(token_reads(m.model, m.f, cpu, s), plain);
  EXPECT_NEAR(none.seconds, 0.0252, 1e-12);
  s.threads = 16;
  const SpeedEstimate given = decode_speed(token_reads(m.model, m.f, cpu, s), plain);
  EXPECT_EQ(given.seconds, none.seconds);
  EXPECT_NE(given.assumption.find("16 CPU threads: the CPU's cost per layer is one fitted figure"), std::string::npos) << given.assumption;
  // With 10 GB/s a thread and 50 us a layer: 16 threads compute 1,250 MB in 1.25 GB / 160 GB/s =
  // 7.8125 ms, under the RAM's 25.08 ms, so 25.08 ms + (4 + 4) x 50 us = 25.48 ms.
  std::string json = kFactors;
  json.insert(json.rfind('}'), R"(, "cpu_thread_gbps": 10, "cpu_threaded_layer_us": 50)");
  const SpeedData threaded(json);
  const SpeedEstimate ram_bound = decode_speed(token_reads(m.model, m.f, cpu, s), threaded);
  EXPECT_NEAR(ram_bound.seconds, 0.02548, 1e-12);
  EXPECT_NE(ram_bound.formula.find("16 threads x 10.00 GB/s"), std::string::npos) << ram_bound.formula;
  EXPECT_NE(ram_bound.assumption.find("10.00 GB/s a thread"), std::string::npos) << ram_bound.assumption;
  // 2 threads compute it in 1.25 GB / 20 GB/s = 62.5 ms, slower than the RAM: 62.5 + 0.4 = 62.9 ms.
  s.threads = 2;
  EXPECT_NEAR(decode_speed(token_reads(m.model, m.f, cpu, s), threaded).seconds, 0.0629, 1e-12);
  // Without a thread count the row's constants stay.
  s.threads.reset();
  EXPECT_EQ(decode_speed(token_reads(m.model, m.f, cpu, s), threaded).seconds, none.seconds);
  s.threads = 0;
  EXPECT_THROW(token_reads(m.model, m.f, cpu, s), InputError);
}

TEST(SpeedEstimate, ThreadsCostOnlyTheCpusShareOfAnOffload) {
  // As DecodeByHandWithExpertsInRam (12.21444 ms), with 4 threads at 10 GB/s and 50 us a layer:
  // the RAM's 400 MB of experts take max(400 MB / 40 GB/s, 400 MB / 40 GB/s) = 10 ms and its
  // 2 MoE layers 2 x 50 us instead of 2 x 20 us: 0.06 ms more, 12.27444 ms; the GPU is unchanged.
  TinyMoe m;
  std::string json = kFactors;
  json.insert(json.rfind('}'), R"(, "cpu_thread_gbps": 10, "cpu_threaded_layer_us": 50)");
  const SpeedData threaded(json);
  SpeedSettings s;
  s.llamacpp.overrides = cpu_moe_overrides(2);
  s.depth = 999;
  s.threads = 4;
  EXPECT_NEAR(decode_speed(token_reads(m.model, m.f, rtx4090(), s), threaded).seconds, 0.0122744444, 1e-9);
}

TEST(SpeedEstimate, PrefillCopiesRamWeightsOncePerUbatch) {
  TinyMoe m;
  const SpeedData data(kFactors);
  SpeedSettings s;
  s.llamacpp.overrides = cpu_moe_overrides(2);
  const SpeedEstimate e = prefill_speed(token_reads(m.model, m.f, rtx4090(), s), data);
  // 2 x 1e9 active + attention 4 layers x 2 x 8 heads x (64 + 64) x 256 = 2,002,097,152 FLOPs
  // / (165.2 TFLOP/s x 0.5) = 24.239 us; 1.6 GB of experts in RAM / (32 GB/s x 0.8) / 512 =
  // 122.070 us; 146.309 us -> 6,834.86 tok/s.
  EXPECT_NEAR(e.tok_s, 6834.86, 0.05);
}

// llama.cpp's mapped weights on a host short of RAM: CPU only, depth 999, 3,650 MB held in RAM
// (4 x 900 MB layers + the 50 MB head), 1,250 MB of weights and 4 MB of cache read a token. 730 MB
// (a fifth) paged out: the SSD serves a fifth of the weight reads, 250 MB at 5 GB/s = 50 ms; RAM
// the rest, (1,000 + 4) MB / 50 GB/s = 20.08 ms + 4 x 10 us + 4 x 20 us = 20.2 ms; 70.2 ms ->
// 14.245 tok/s. Prefill: the RAM rate's 1.001049 ms (CpuOnlyPrefillUsesTheRamRate) + 730 MB /
// 5 GB/s / 512 = 0.285156 ms; 1.286205 ms -> 777.48 tok/s. No SSD rate: unknown, not a RAM figure.
TEST(SpeedEstimate, WeightsPagedFromDiskAreReadFromTheSsdEveryToken) {
  TinyMoe m;
  const SpeedData data(kFactors);
  Box cpu;
  cpu.ram_bandwidth = 100'000'000'000;
  cpu.ssd_bandwidth = 5'000'000'000;
  SpeedSettings s;
  s.depth = 999;
  s.paged_out = 730'000'000;
  const TokenReads t = token_reads(m.model, m.f, cpu, s);
  ASSERT_EQ(t.memories.size(), 2u);
  EXPECT_EQ(named(t, "RAM").weights_held, 2'920'000'000u);
  EXPECT_EQ(named(t, "RAM").weights_read, 1'000'000'000u);
  EXPECT_EQ(named(t, "SSD (mmap page-ins)").weights_held, 730'000'000u);
  EXPECT_EQ(named(t, "SSD (mmap page-ins)").weights_read, 250'000'000u);
  const SpeedEstimate e = decode_speed(t, data);
  EXPECT_NEAR(e.seconds, 0.0702, 1e-12);
  EXPECT_NEAR(e.tok_s, 14.245, 0.001);
  s.depth = 0;
  EXPECT_NEAR(prefill_speed(token_reads(m.model, m.f, cpu, s), data).tok_s, 777.48, 0.01);
  cpu.ssd_bandwidth = 0;
  EXPECT_EQ(decode_speed(token_reads(m.model, m.f, cpu, s), data).tok_s, 0.0);
  EXPECT_EQ(prefill_speed(token_reads(m.model, m.f, cpu, s), data).tok_s, 0.0);
  s.paged_out = 0;  // fits in RAM: no SSD memory at all
  EXPECT_EQ(token_reads(m.model, m.f, cpu, s).memories.size(), 1u);
}

// A measured run's page-ins: the CPU's weights beyond what the page cache held. TinyMoe CPU only
// holds 2,920,000,000 + 730,000,000 = 3,650,000,000 B in RAM (the test above); a page cache of
// 2,920,000,000 B leaves 730,000,000 B to the SSD, the paged_out that test gives by hand; a cache of
// the whole 3.65 GB or more leaves nothing.
TEST(SpeedValidate, PagedOutIsTheCpuWeightsBeyondThePageCache) {
  TinyMoe m;
  Box cpu;
  cpu.ram_bandwidth = 100'000'000'000;
  const TokenReads t = token_reads(m.model, m.f, cpu, SpeedSettings{});
  ASSERT_EQ(named(t, "RAM").weights_held, 3'650'000'000u);
  EXPECT_EQ(paged_out_of(t, 2'920'000'000), 730'000'000u);
  EXPECT_EQ(paged_out_of(t, 3'650'000'000), 0u);
  EXPECT_EQ(paged_out_of(t, 8'000'000'000), 0u);
}

TEST(SpeedEstimate, CpuOnlyPrefillUsesTheRamRate) {
  TinyMoe m;
  const SpeedData data(kFactors);
  SpeedSettings s;
  Box cpu;
  cpu.ram_bandwidth = 100'000'000'000;
  const SpeedEstimate e = prefill_speed(token_reads(m.model, m.f, cpu, s), data);
  // 2,002,097,152 FLOPs / (100 GB/s x 20 FLOP per byte/s = 2 TFLOP/s) = 1.001 ms -> 998.95 tok/s.
  EXPECT_NEAR(e.tok_s, 998.952, 0.01);
  // With a rate per thread in the data and the run's threads: 4 x 50 GFLOP/s = 200 GFLOP/s, so
  // 2,002,097,152 / 2e11 = 10.0105 ms -> 99.895 tok/s; without threads the RAM rate stays.
  std::string json = kFactors;
  json.insert(json.rfind('}'), R"(, "cpu_prefill_gflops_per_thread": 50)");
  const SpeedData per_thread(json);
  EXPECT_NEAR(prefill_speed(token_reads(m.model, m.f, cpu, s), per_thread).tok_s, 998.952, 0.01);
  s.threads = 4;
  const SpeedEstimate threaded = prefill_speed(token_reads(m.model, m.f, cpu, s), per_thread);
  EXPECT_NEAR(threaded.tok_s, 99.8953, 0.001);
  EXPECT_NE(threaded.assumption.find("50.0 GFLOP/s a thread x 4 threads"), std::string::npos) << threaded.assumption;
  EXPECT_NEAR(prefill_speed(token_reads(m.model, m.f, cpu, s), data).tok_s, 998.952, 0.01);  // no rate per thread: threads change nothing
}

TEST(SpeedData, TheMostSpecificRowWins) {
  const SpeedData data(R"({"source": "t", "decode": [
      {"engine": "llamacpp", "backend": "metal", "memory": "*", "bandwidth_share": 0.8, "layer_us": 1, "moe_layer_us": 1, "source": "a"},
      {"engine": "llamacpp", "backend": "*", "memory": "*", "bandwidth_share": 0.7, "layer_us": 1, "moe_layer_us": 1, "source": "b"},
      {"engine": "*", "backend": "*", "memory": "*", "bandwidth_share": 0.6, "layer_us": 1, "moe_layer_us": 1, "source": "c"}],
    "prefill": [{"engine": "*", "backend": "*", "memory": "*", "compute_share": 0.5, "source": "t"}],
    "handoff_us": 1, "tp_allreduce_us": 1, "pcie_share": 1, "cpu_flops_per_ram_byte": 1, "second_socket_gain": 0,
    "ranges": {"decode_on_device": {"low": 1, "high": 1}, "decode_offload": {"low": 1, "high": 1}, "prefill": {"low": 1, "high": 1}},
    "rule_ranges": {"decode_on_device": {"low": 1, "high": 1}, "decode_offload": {"low": 1, "high": 1}, "prefill": {"low": 1, "high": 1}}})");
  EXPECT_EQ(data.decode_for("llamacpp", "metal", "unified").source, "a");
  EXPECT_EQ(data.decode_for("llamacpp", "cuda", "gddr").source, "b");
  EXPECT_EQ(data.decode_for("vllm", "metal", "unified").source, "c");
  EXPECT_THROW(SpeedData(R"({"decode": []})"), std::exception);
}

TEST(SpeedData, BuiltinLoadsWithARangeAroundOne) {
  const SpeedData& d = SpeedData::builtin();
  EXPECT_LE(d.decode_on_device.low, 1.0);
  EXPECT_GE(d.decode_on_device.high, 1.0);
  EXPECT_EQ(d.decode.back().engine, "*");
}

TEST(SpeedFlags, NCpuMoeInAPastedCommand) {
  // llama.cpp common/arg.cpp: --n-cpu-moe N appends blk\.%d\.ffn_(up|down|gate)_exps = CPU for
  // layers 0 .. N-1, in flag order with -ot, and the first match wins. First of the overrides, it is
  // kept as the count 3 (no regexes); after an -ot, as the per-layer overrides themselves.
  const EngineRun r = parse_engine_command("llama-server -m x.gguf -ngl 99 --n-cpu-moe 3");
  EXPECT_EQ(r.placement.cpu_moe_layers, 3u);
  EXPECT_TRUE(r.placement.overrides.empty());
  EXPECT_TRUE(moved_by_n_cpu_moe(r.placement, 2, "blk.2.ffn_down_exps.weight"));
  EXPECT_FALSE(moved_by_n_cpu_moe(r.placement, 3, "blk.3.ffn_down_exps.weight"));
  EXPECT_FALSE(moved_by_n_cpu_moe(r.placement, 2, "blk.2.ffn_down_shexp.weight"));
  const EngineRun after = parse_engine_command("llama-server -m x.gguf -ot \"blk\\.1\\.=CUDA0\" --n-cpu-moe 3");
  EXPECT_EQ(after.placement.cpu_moe_layers, 0u);
  ASSERT_EQ(after.placement.overrides.size(), 4u);
  EXPECT_EQ(after.placement.overrides[3].first, "blk\\.2\\.ffn_(up|down|gate)_exps");
  EXPECT_EQ(after.placement.overrides[3].second, "CPU");
  // llama.cpp common/arg.cpp: -t / --threads N, -1 (the default) meaning cpu_get_num_math(); -tb is prefill's.
  EXPECT_EQ(parse_engine_command("llama-server -m x.gguf -t 16 -tb 32").threads, 16u);
  EXPECT_EQ(parse_engine_command("llama-server -m x.gguf --threads=8").threads, 8u);
  EXPECT_FALSE(parse_engine_command("llama-server -m x.gguf -t -1").threads);
  EXPECT_FALSE(parse_engine_command("llama-server -m x.gguf").threads);
  EXPECT_THROW(parse_engine_command("llama-server -m x.gguf -t 0"), InputError);
  EXPECT_THROW(parse_engine_command("llama-server -m x.gguf -t many"), InputError);
  for (const auto& n : parse_engine_command("llama-server -m x.gguf -t 16 -tb 32").notes) EXPECT_EQ(n.find("ignored"), std::string::npos) << n;
  const EngineRun all = parse_engine_command("llama-server -m x.gguf --cpu-moe");
  ASSERT_EQ(all.placement.overrides.size(), 1u);
  EXPECT_THROW(parse_engine_command("llama-server -m x.gguf --n-cpu-moe lots"), InputError);
}

TEST(SpeedDevices, TheAddedDevicesAreFoundWithTheirBandwidth) {
  // Vendor pages: RTX 4090 D 1,008 GB/s; RTX 2080 448 GB/s; RTX 2080 Ti 616 GB/s; M3 Max 400 GB/s.
  EXPECT_EQ(DeviceTable::builtin().find("rtx-4090d", "--gpu").bandwidth, 1'008'000'000'000u);
  EXPECT_EQ(DeviceTable::builtin().find("RTX 2080", "--gpu").bandwidth, 448'000'000'000u);
  EXPECT_EQ(DeviceTable::builtin().find("RTX 2080 Ti", "--gpu").bandwidth, 616'000'000'000u);
  EXPECT_EQ(DeviceTable::builtin().find("m3-max-64gb", "--gpu").memory_bytes, 68'719'476'736u);
  EXPECT_EQ(DeviceTable::builtin().find("RTX 4090", "--gpu").id, "rtx-4090");
  // AMD's RX 7900 XT page: 20 GB GDDR6, 800 GB/s.
  EXPECT_EQ(DeviceTable::builtin().find("rx-7900-xt", "--gpu").bandwidth, 800'000'000'000u);
  EXPECT_EQ(DeviceTable::builtin().find("rx-7900-xt", "--gpu").memory_bytes, 21'474'836'480u);
  // NVIDIA's RTX 5070 page: 12 GB GDDR7 at 672 GB/s; AMD's Radeon PRO W7800 page: 32 GB GDDR6 at 576 GB/s.
  EXPECT_EQ(DeviceTable::builtin().find("RTX 5070", "--gpu").id, "rtx-5070");  // not the 5070 Ti
  EXPECT_EQ(DeviceTable::builtin().find("RTX 5070", "--gpu").bandwidth, 672'000'000'000u);
  EXPECT_EQ(DeviceTable::builtin().find("Radeon PRO W7800", "--gpu").memory_bytes, 34'359'738'368u);
  EXPECT_EQ(DeviceTable::builtin().find("radeon-pro-w7800", "--gpu").bandwidth, 576'000'000'000u);
  // Apple newsroom: M1 Max 400 GB/s (up to 64 GB), M1 Ultra 800 GB/s (up to 128 GB), M4 120 GB/s.
  EXPECT_EQ(DeviceTable::builtin().find("m1-max-64gb", "--gpu").bandwidth, 400'000'000'000u);
  EXPECT_EQ(DeviceTable::builtin().find("M1 Ultra", "--gpu").memory_bytes, 137'438'953'472u);
  EXPECT_EQ(DeviceTable::builtin().find("m4-16gb", "--gpu").bandwidth, 120'000'000'000u);
  // Unified like the other Macs: the GPU's share follows macOS's wired limit.
  const Device& m4 = DeviceTable::builtin().find("m4-16gb", "--gpu");
  EXPECT_EQ(m4.kind, "unified");
  EXPECT_EQ(m4.gpu_share_rule, "macos-wired-limit");
}

TEST(SpeedMeasurements, EveryCaseHasASourceAQuoteAndTheHashedPart) {
  // FIPS 180-2 appendix B.1: SHA-256("abc") begins ba 78 16 bf.
  const auto abc = test::sha256("abc");
  EXPECT_EQ(abc[0], 0xba);
  EXPECT_EQ(abc[3], 0xbf);
  const auto doc = testing::read_test_json("speed-measurements.json");
  std::size_t aside = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string id = c.at("id");
    EXPECT_EQ(c.at("source").get<std::string>().rfind("https://", 0), 0u) << id;
    EXPECT_FALSE(c.at("quote").get<std::string>().empty()) << id;
    EXPECT_GT(c.at("measured_tok_s").get<double>(), 0) << id;
    // set_aside = (first 4 bytes of SHA-256(id), big-endian) % 100 < 30
    const auto h = test::sha256(id);
    const uint32_t first = (uint32_t{h[0]} << 24) | (uint32_t{h[1]} << 16) | (uint32_t{h[2]} << 8) | h[3];
    EXPECT_EQ(c.at("set_aside").get<bool>(), first % 100 < 30) << id;
    aside += c.at("set_aside").get<bool>() ? 1 : 0;
  }
  EXPECT_GE(doc.at("cases").size(), 90u);
  EXPECT_GT(aside, 0u);
}

TEST(SpeedValidate, ACaseReadsItsSocketCount) {
  // CPU-only decode reads everything from RAM: a second socket adds data.second_socket_gain of one
  // socket's bandwidth, so the RAM term shrinks by 1 / (1 + gain) and the estimate grows.
  const std::string path = ::testing::TempDir() + "speed-sockets.json";
  {
    std::ofstream out(path);
    out << R"({"cases": [
      {"id": "one", "source": "https://x", "quote": "q", "model": "llama-3.1-8b", "quant": "Q4_K_M", "gpu": "none", "engine": "llamacpp",
       "backend": "cpu", "test": "tg128", "kind": "decode", "measured_tok_s": 10, "set_aside": false, "ram_gbps": 100},
      {"id": "two", "source": "https://x", "quote": "q", "model": "llama-3.1-8b", "quant": "Q4_K_M", "gpu": "none", "engine": "llamacpp",
       "backend": "cpu", "test": "tg128", "kind": "decode", "measured_tok_s": 10, "set_aside": false, "ram_gbps": 100, "settings": {"sockets": 2, "threads": 32}}]})";
  }
  const auto rows = validate_speed(path);
  ASSERT_EQ(rows.size(), 2u);
  const auto ram = [](const SpeedRow& r) { return r.reads.at("memories").at(0).at("bandwidth").get<uint64_t>(); };
  EXPECT_EQ(ram(rows[0]), 100'000'000'000u);
  EXPECT_EQ(ram(rows[1]), static_cast<uint64_t>(100e9 * (1.0 + SpeedData::builtin().second_socket_gain)));
  EXPECT_GT(rows[1].estimate, rows[0].estimate);
  // A case's thread count travels to the reads (fit.py --refit-cpu-threads reads it); none: null.
  EXPECT_TRUE(rows[0].reads.at("threads").is_null());
  EXPECT_EQ(rows[1].reads.at("threads"), 32);
  std::remove(path.c_str());
}

// A case with ssd_gbps: the CPU's weights beyond page_cache_gb come from the SSD at that rate, and
// the row is scored in its own group. Llama 3.1 8B Q4_K_M CPU only holds more than 2 GB, so a 2 GB
// page cache leaves (held - 2 GB) to the SSD: the two memories' held bytes sum to the weights and
// the SSD's are those less 2,000,000,000. A 100 GB page cache holds it all: no SSD memory.
TEST(SpeedValidate, ACaseWithAnSsdReadsWhatThePageCacheCannotHoldFromIt) {
  const std::string path = ::testing::TempDir() + "speed-ssd.json";
  {
    std::ofstream out(path);
    out << R"({"cases": [
      {"id": "ssd", "source": "https://x", "quote": "q", "model": "llama-3.1-8b", "quant": "Q4_K_M", "gpu": "none", "engine": "llamacpp",
       "backend": "cpu", "test": "tg128", "kind": "decode", "measured_tok_s": 1, "set_aside": false, "ram_gbps": 100, "ssd_gbps": 2, "page_cache_gb": 2},
      {"id": "cached", "source": "https://x", "quote": "q", "model": "llama-3.1-8b", "quant": "Q4_K_M", "gpu": "none", "engine": "llamacpp",
       "backend": "cpu", "test": "tg128", "kind": "decode", "measured_tok_s": 1, "set_aside": false, "ram_gbps": 100, "ssd_gbps": 2, "page_cache_gb": 100}]})";
  }
  const auto rows = validate_speed(path);
  ASSERT_EQ(rows.size(), 2u);
  const auto& mems = rows[0].reads.at("memories");
  ASSERT_EQ(mems.size(), 2u);
  EXPECT_EQ(mems[1].at("memory"), "ssd");
  EXPECT_EQ(mems[1].at("bandwidth").get<uint64_t>(), 2'000'000'000u);
  const uint64_t held = mems[0].at("weights_held").get<uint64_t>() + mems[1].at("weights_held").get<uint64_t>();
  EXPECT_EQ(mems[1].at("weights_held").get<uint64_t>(), held - 2'000'000'000u);
  EXPECT_EQ(rows[0].group, "decode from SSD");
  EXPECT_EQ(speed_target(rows[0].group), (std::pair<double, double>{0.5, 2.0}));
  EXPECT_EQ(rows[1].reads.at("memories").size(), 1u);
  EXPECT_EQ(rows[1].group, "decode on device");
  EXPECT_GT(rows[1].estimate, rows[0].estimate);
  const auto summary = summarize_speed(rows);
  const auto ssd = std::find_if(summary.begin(), summary.end(), [](const SpeedSummary& x) { return x.group == "decode from SSD" && x.part == "fitted"; });
  ASSERT_NE(ssd, summary.end());
  EXPECT_EQ(ssd->cases, 1u);
  std::remove(path.c_str());
}

TEST(SpeedValidate, ACaseFileGivesRowsAndASummary) {
  const std::string path = ::testing::TempDir() + "speed-cases.json";
  {
    std::ofstream out(path);
    out << R"({"cases": [
      {"id": "a", "source": "https://x", "quote": "q", "model": "llama-3.1-8b", "quant": "Q4_K_M", "gpu": "RTX 4090", "engine": "llamacpp",
       "backend": "cuda", "test": "tg128", "kind": "decode", "measured_tok_s": 100, "set_aside": false},
      {"id": "b", "source": "https://x", "quote": "q", "model": "no-such-model", "quant": "Q4_K_M", "gpu": "RTX 4090", "engine": "llamacpp",
       "test": "tg128", "kind": "decode", "measured_tok_s": 100, "set_aside": true}]})";
  }
  const auto rows = validate_speed(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_GT(rows[0].estimate, 0);
  EXPECT_EQ(rows[0].group, "decode on device");
  EXPECT_NEAR(rows[0].ratio, 100 / rows[0].estimate, 1e-12);
  EXPECT_EQ(rows[1].estimate, 0);
  EXPECT_NE(rows[1].note.find("no-such-model"), std::string::npos);
  const auto summary = summarize_speed(rows);
  EXPECT_EQ(summary[0].cases, 1u);  // decode on device, fitted
  EXPECT_EQ(summary[1].cases, 0u);  // the set-aside case was not computed
  EXPECT_THROW(validate_speed(path + ".missing"), InputError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace vc
