// One engine model behind every answer: the per-layer accessor (model/layer_memory.h) is what the
// estimate, the planner's footprint and every engine read, and the engines' per-device answers
// are what estimate, plan, check and the API print.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "catalogue/catalogue.h"
#include "cli_runner.h"
#include "engines/engine.h"
#include "engines/engine_tiers.h"
#include "engines/llamacpp_profile.h"
#include "engines/sglang_weights.h"
#include "engines/vllm_profile.h"
#include "gguf_writer.h"
#include "memory_source.h"
#include "model/layer_memory.h"
#include "plan/check.h"
#include "plan/engine_ladder.h"
#include "plan/footprint.h"
#include "plan/plan.h"
#include "plan/plan_report.h"
#include "server/api.h"
#include "server/request_params.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "sources/gguf/gguf_file.h"
#include "sources/gguf/gguf_model.h"

namespace vc {
namespace {

const Model& cat(const char* id) {
  const Model* m = Catalogue::builtin().find(id);
  if (!m) throw std::runtime_error(std::string("not in the catalogue: ") + id);
  return *m;
}

Box box_of(const char* gpus) {
  Box b;
  b.gpus = parse_gpus(gpus, "--gpu");
  return b;
}

EngineAnswer answer(const Model& m, Scenario s, EngineKind engine, const std::optional<Box>& box = std::nullopt) {
  EngineRequest r;
  r.model = &m;
  s.engine = engine;
  r.scenario = s;
  r.box = box;
  return run_engine(r);
}

// Gemma 3 27B at 32K on one RTX 4090, under `engine`.
Plan gemma_32k_on_4090(EngineKind engine) {
  Scenario s;
  s.context = 32768;
  PlanOptions o;
  o.engine = engine;
  return make_plan(cat("gemma-3-27b"), s, box_of("RTX 4090"), o);
}

}  // namespace

// Qwen3 32B (Qwen/Qwen3-32B config.json: 64 layers, 8 KV heads, head_dim 128): at F16 one layer
// keeps 8 x 128 x 2 B = 2,048 B of K and as much of V per token.
TEST(LayerMemory, FullAttentionBytesPerToken) {
  const Model& m = cat("qwen3-32b");
  const CacheLayout f16 = uniform_cache(cache_type("F16", "test"));
  const TokenCacheBytes t = token_cache_bytes(m.layers[0], f16);
  EXPECT_EQ(t.k, 2048u);
  EXPECT_EQ(t.v, 2048u);
  EXPECT_EQ(t.total(), 4096u);
  // q8_0 stores 32 values in 34 B: 1,024 values -> 32 blocks -> 1,088 B per row.
  const TokenCacheBytes q8 = token_cache_bytes(m.layers[0], uniform_cache(cache_type("Q8_0", "test")));
  EXPECT_EQ(q8.k, 1088u);
  // Tensor parallel 16 over 8 KV heads: every rank keeps one head (128 x 2 B).
  CacheLayout tp16 = f16;
  tp16.tensor_parallel = 16;
  EXPECT_EQ(token_cache_bytes(m.layers[0], tp16).k, 256u);
}

// Falcon-H1 keeps attention KV and a Mamba2 state in the same layer; both count.
TEST(LayerMemory, ParallelMixerCountsInEveryConsumer) {
  // Hybrid-head layer by hand: attention 2 KV heads x 64 (F16: 256 B of K, 256 of V per token);
  // Mamba2 d_inner 128, d_state 16, one group, kernel 4: state 2,048 values, conv 3 x 160 = 480.
  LayerConfig l;
  l.attention.kind = AttentionKind::Full;
  l.attention.kv_heads = 2;
  l.attention.head_dim_k = l.attention.head_dim_v = 64;
  AttentionSpec mamba;
  mamba.kind = AttentionKind::LinearState;
  mamba.state_family = StateFamily::Mamba2;
  mamba.state_values = 2048;
  mamba.conv_values = 480;
  l.parallel_mixer = mamba;
  EXPECT_EQ(token_cache_bytes(l, uniform_cache(cache_type("F16", "test"))).total(), 512u);
  EXPECT_EQ(state_bytes(l, StateLayout::F32).total(), (2048u + 480u) * 4);
  EXPECT_EQ(state_bytes(l, StateLayout::Mixed).total(), 2048u * 4 + 480u * 2);
}

// For every catalogue model the estimate, the planner's footprint, llama.cpp and vLLM read the
// same per-layer cache bytes (the accessor's), at F16/auto and one sequence.
TEST(LayerMemory, EveryConsumerReadsTheSameBytes) {
  const CacheLayout f16 = uniform_cache(cache_type("F16", "test"));
  for (const Model& m : Catalogue::builtin().models()) {
    SCOPED_TRACE(m.id);
    Scenario s;
    s.context = 4096;
    const Estimate e = estimate(m, s);
    const Footprint f = make_footprint(m, e);
    uint64_t per_token_all = 0, cache_at_context = 0;
    LlamaCppSettings ls;
    ls.n_ctx = 4096;
    const LlamaCppMemory lm = llamacpp_memory(m, ls);
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
      const LayerConfig& l = m.layers[i];
      const uint64_t t = token_cache_bytes(l, f16).total();
      per_token_all += t;
      cache_at_context += t * cached_tokens(l.attention, s.context);
      EXPECT_EQ(f.layers[i].cache_per_token, t) << "layer " << i;
      EXPECT_EQ(f.layers[i].state_per_seq, state_bytes(l, StateLayout::F32).total()) << "layer " << i;
      if (l.attention.kind != AttentionKind::SlidingWindow) {
        EXPECT_EQ(lm.layer_kv_bytes[i], t * lm.n_ctx_seq) << "layer " << i;
      }
      EXPECT_EQ(lm.layer_state_bytes[i], state_bytes(l, StateLayout::F32).total()) << "layer " << i;
    }
    EXPECT_EQ(e.cache_bytes, cache_at_context);
    if (per_token_all > 0) {
      VllmSettings vs;
      vs.available_kv_bytes = 1ull << 36;
      EXPECT_EQ(vllm_kv(m, vs).bytes_per_token, per_token_all);  // auto = BF16, 2 B like F16
    }
  }
}

// Per-layer parameters are the mapper's: Nemotron-H 56B's attention layers hold attention
// projections, its Mamba2 layers their own (not one share each).
TEST(LayerMemory, LayerParamsSumToTheClassTotals) {
  for (const Model& m : Catalogue::builtin().models()) {
    SCOPED_TRACE(m.id);
    std::map<ParamClass, uint64_t> sum;
    for (const auto& l : m.layers) for (const auto& [c, n] : l.params) sum[c] += n;
    for (const auto& [c, n] : sum) {
      auto it = m.params.by_class.find(c);
      ASSERT_NE(it, m.params.by_class.end());
      EXPECT_LE(n, it->second) << to_string(c);  // the class also holds global tensors (final norm, MTP)
    }
    EXPECT_FALSE(sum.empty());
  }
}

// Every engine's devices add up to its total, and each device to its lines.
TEST(Engines, PerDeviceTotalsSumToTheEngineTotal) {
  Scenario s;
  s.quant = "Q4_K_M";
  for (const char* id : {"qwen3-32b", "gemma-3-27b", "qwen3-next-80b-a3b", "deepseek-v3"}) {
    for (EngineKind k : {EngineKind::Rule, EngineKind::LlamaCpp, EngineKind::Vllm, EngineKind::Sglang}) {
      for (bool with_box : {false, true}) {
        SCOPED_TRACE(std::string(id) + " " + to_string(k) + (with_box ? " on 2 x H100" : ""));
        const EngineAnswer a = answer(cat(id), s, k, with_box ? std::optional<Box>(box_of("H100-sxm x2")) : std::nullopt);
        uint64_t sum = 0;
        for (const auto& d : a.devices) {
          uint64_t lines = 0;
          for (const auto& l : d.lines) lines += l.bytes;
          EXPECT_EQ(lines, d.total_bytes) << d.name;
          sum += d.total_bytes;
        }
        EXPECT_EQ(sum, a.total_bytes);
        EXPECT_EQ(a.engine, k);
      }
    }
  }
}

// The rule engine without devices is the estimate: same total.
TEST(Engines, RuleIsTheEstimate) {
  Scenario s;
  const Model& m = cat("kimi-k3");
  EXPECT_EQ(answer(m, s, EngineKind::Rule).total_bytes, estimate(m, s).total_bytes);
}

// Qwen3 32B Q4_K_M on one RTX 4090 at 8K with llama.cpp: KV 64 layers x 4,096 B x 8,192 cells =
// 2,147,483,648 B on CUDA0; the answer fits, and plan and check agree with it.
TEST(Engines, Qwen3On4090AgreesEverywhere) {
  const Model& m = cat("qwen3-32b");
  Scenario s;
  s.quant = "Q4_K_M";
  const Box box = box_of("RTX 4090");
  const EngineAnswer a = answer(m, s, EngineKind::LlamaCpp, box);
  ASSERT_EQ(a.devices.front().name, "CUDA0");
  EXPECT_EQ(a.devices.front().bytes(AllocKind::Kv), 2'147'483'648ull);
  EXPECT_EQ(a.fits(), std::optional<bool>(true));
  EXPECT_LT(a.devices.front().total_bytes, 24'000'000'000ull);
  PlanOptions o;
  o.engine = EngineKind::LlamaCpp;
  const Plan p = make_plan(m, s, box, o);
  EXPECT_TRUE(p.fits_on_devices) << p.verdict;
  EXPECT_EQ(p.engine.devices.front().total_bytes, a.devices.front().total_bytes);
  EXPECT_GT(solve(p).max_context, 8192u);
  const CheckRow row = check_model(m, box, o, Scenario{});
  EXPECT_EQ(row.fit, FitKind::Gpu) << row.note;
}

// A dense model that does not fit gets fewer GPU layers, never an expert-offload flag.
TEST(Engines, DenseModelNeverGetsExpertOffload) {
  const Model& m = cat("llama-3.1-70b");
  Scenario s;
  s.quant = "Q8_0";
  Box box = box_of("RTX 4090");
  box.ram_bytes = 256'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  PlanOptions o;
  o.engine = EngineKind::LlamaCpp;
  const Plan p = make_plan(m, s, box, o);
  const nlohmann::json j = plan_json(p, solve(p));
  for (const auto& c : j["commands"]) EXPECT_EQ(c["command"].get<std::string>().find("exps"), std::string::npos) << c["command"];
}

// `plan` and `estimate` ask the same engine: Gemma 3 27B at 32K on one RTX 4090.
TEST(Engines, PlanAndEstimateShowTheSameKvAndCompute) {
  const Plan p = gemma_32k_on_4090(EngineKind::LlamaCpp);
  const EngineAnswer e = answer(*p.model, p.estimate.scenario, EngineKind::LlamaCpp);
  EXPECT_EQ(p.engine.bytes(AllocKind::Kv), e.bytes(AllocKind::Kv));
  EXPECT_EQ(p.engine.bytes(AllocKind::Compute), e.bytes(AllocKind::Compute));
  EXPECT_GT(e.bytes(AllocKind::Compute), 0u);
}

// llama.cpp short on its GPU (Gemma 3 27B BF16, about 54 GB of weights, on one 24 GiB RTX 4090): the
// plan's -ngl N is the most layers whose CUDA0 share fits, judged on llama.cpp's own answer: N fits,
// N + 1 does not; the command carries it; a dense model moves no experts.
TEST(Engines, LlamaCppOffloadKeepsTheMostLayersThatFit) {
  const Plan p = gemma_32k_on_4090(EngineKind::LlamaCpp);
  ASSERT_TRUE(p.llamacpp_offload.has_value());
  const LlamaCppOffload& lo = *p.llamacpp_offload;
  ASSERT_TRUE(lo.n_gpu_layers.has_value());
  EXPECT_EQ(lo.n_cpu_moe, 0u);
  auto cuda0_fits = [&](uint64_t ngl) {
    LlamaCppPlacementSettings pl;
    pl.n_gpu_layers = ngl;
    const EngineAnswer a = run_engine(plan_engine_request(*p.model, p.estimate.scenario, p.box, p.options, pl));
    for (const auto& d : a.devices) {
      if (d.name == "CUDA0") return d.fits.value_or(false);
    }
    return false;
  };
  EXPECT_TRUE(cuda0_fits(*lo.n_gpu_layers));
  EXPECT_FALSE(cuda0_fits(*lo.n_gpu_layers + 1));
  EXPECT_EQ(lo.answer.devices.size(), 2u);  // CUDA0 and the host
  EXPECT_EQ(lo.answer.bytes(AllocKind::Kv), p.engine.bytes(AllocKind::Kv));  // the same cache, split with its layers
  const std::string text = plan_text(p, solve(p), false, ByteUnits::Decimal);
  EXPECT_NE(text.find(" -ngl " + std::to_string(*lo.n_gpu_layers) + "\n"), std::string::npos) << text;
}

// `check --engine llamacpp` on a box whose GPU is short decides the offload row the way `plan` does:
// Qwen3-30B-A3B at Q8_0 (about 32 GB of weights) on one 24 GiB RTX 4090 with 64 GB of RAM fits only
// with llama.cpp's own offload (--n-cpu-moe N from plan's search); the row carries that answer, its
// GPU and RAM shares are the answer's devices, and its largest context is the last pad boundary
// (256 cells) that still fits with that placement: 256 more do not.
TEST(Engines, CheckOffloadRowIsThePlansLlamaCppOffload) {
  const Model& m = cat("qwen3-30b-a3b");
  Box box = box_of("RTX 4090");
  box.ram_bytes = 64'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  PlanOptions o;
  o.engine = EngineKind::LlamaCpp;
  Scenario s;
  s.quant = "Q8_0";
  const CheckRow row = check_model(m, box, o, s);
  ASSERT_EQ(row.fit, FitKind::Offload) << row.note;
  ASSERT_TRUE(row.engine.has_value());
  Scenario at = s;
  at.context = std::min<uint64_t>(at.context, m.max_context);
  const Plan p = make_plan(m, at, box, o);
  ASSERT_TRUE(p.llamacpp_offload.has_value());
  ASSERT_TRUE(p.llamacpp_offload->fits) << p.verdict;
  EXPECT_GT(p.llamacpp_offload->n_cpu_moe, 0u);
  EXPECT_EQ(row.engine->total_bytes, p.llamacpp_offload->answer.total_bytes);
  EXPECT_EQ(row.decode_tok_s, p.decode.expected_tok_s);
  uint64_t host = 0, gpus = 0;
  for (const auto& d : p.llamacpp_offload->answer.devices) (d.name == "host" ? host : gpus) += d.total_bytes;
  EXPECT_EQ(row.ram_bytes, host);
  EXPECT_EQ(row.gpu_bytes, gpus);
  const EngineRequest r = plan_engine_request(m, at, box, o, p.llamacpp_offload->placement);
  ASSERT_LT(row.max_context, m.max_context);
  EXPECT_TRUE(engine_fits(r, row.max_context, 1));
  EXPECT_FALSE(engine_fits(r, row.max_context + kLlamaCppCellPad, 1));
  EXPECT_EQ(row.max_context % kLlamaCppCellPad, 0u);
}

// The largest context searched from a guess over llama.cpp's pad boundaries is the one a plain
// bisection over every token finds, with one and with three sequences (where -c = 3 x context is
// what is padded), on a dense model, a sliding-window model and a hybrid (KDA) one at Q4_K_M.
TEST(Engines, LargestContextSearchMatchesBisection) {
  const std::pair<const char*, const char*> cases[] = {{"llama-3.1-8b", "RTX 3060"}, {"gemma-3-27b", "RTX 4090"}, {"kimi-linear-48b-a3b", "RTX 4090x2"}};
  for (const auto& [id, gpus] : cases) {
    for (uint64_t seqs : {1u, 3u}) {
      SCOPED_TRACE(std::string(id) + " x" + std::to_string(seqs));
      const Model& m = cat(id);
      Scenario s;
      s.quant = "Q4_K_M";
      s.sequences = seqs;
      PlanOptions o;
      o.engine = EngineKind::LlamaCpp;
      const EngineRequest r = plan_engine_request(m, s, box_of(gpus), o);
      const uint64_t limit = m.max_context;
      const uint64_t found = engine_max_context(r, limit);
      uint64_t lo = 0, hi = limit + 1;  // fits(lo) (or lo = 0), !fits(hi) (or hi past the limit)
      while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        (engine_fits(r, mid, seqs) ? lo : hi) = mid;
      }
      EXPECT_EQ(found, lo);
      EXPECT_GT(found, 8192u);                                    // each holds more than the default 8K
      if (seqs == 3 || std::string(id) != "kimi-linear-48b-a3b") {
        EXPECT_LT(found, limit);  // and stops short of the limit
      }
    }
  }
}

// vLLM on an H100: the pool in tokens and the concurrency are numbers in the check rows.
TEST(Engines, VllmCheckGivesTokensAndConcurrency) {
  PlanOptions o;
  o.engine = EngineKind::Vllm;
  const CheckRow row = check_model(cat("llama-3.1-8b"), box_of("H100-sxm"), o, Scenario{});
  ASSERT_EQ(row.fit, FitKind::Gpu) << row.note;
  ASSERT_TRUE(row.kv_tokens.has_value());
  ASSERT_TRUE(row.max_concurrency.has_value());
  // Llama 3.1 8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B per token.
  EXPECT_GT(*row.kv_tokens, 8192u);
  EXPECT_NEAR(*row.max_concurrency, static_cast<double>(*row.kv_tokens) / 8192.0, 1e-9);
}

// SGLang on one H100 with Llama 3.1 8B: the pool holds whole tokens of 131,072 B (32 layers x 8 KV
// heads x 128 x 2 (K, V) x 2 B), and the lines fill the card (what is not static is left over).
TEST(Engines, SglangPoolIsWholeTokens) {
  const Box box = box_of("H100-sxm");
  const EngineAnswer a = answer(cat("llama-3.1-8b"), Scenario{}, EngineKind::Sglang, box);
  ASSERT_TRUE(a.kv_tokens.has_value());
  ASSERT_EQ(a.devices.size(), 1u);
  EXPECT_EQ(a.devices[0].bytes(AllocKind::Kv), *a.kv_tokens * 131'072ull);
  EXPECT_EQ(a.devices[0].total_bytes, box.gpus[0].memory_bytes);
  EXPECT_EQ(a.fits(), std::optional<bool>(true));
}

// SGLang over four GPUs (the box's split is 4 pipeline stages of one GPU: custom all-reduce, which
// serves the tensor-parallel group, is off, custom_all_reduce.py): on four L4s (devices.json: PCIe
// only) NCCL takes 0.13 GiB a rank (as SGLang printed on 4 x L4); on four H100 SXM (NVSwitch) it
// runs over NVLink and takes 2 GiB (as printed on 8 x H200). Each rank's lines still fill its card.
TEST(Engines, SglangCommunicatorsFollowTheBoxLinks) {
  auto nccl_line = [](const EngineAnswer& a) -> const Allocation* {
    for (const auto& l : a.devices.at(0).lines)
      if (l.label.rfind("NCCL communicators", 0) == 0) return &l;
    return nullptr;
  };
  Scenario s;
  s.context = 8192;
  const Box l4 = box_of("L4x4");
  const EngineAnswer pcie = answer(cat("qwen2.5-32b"), s, EngineKind::Sglang, l4);
  ASSERT_EQ(pcie.devices.size(), 4u);
  const Allocation* p = nccl_line(pcie);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->label, "NCCL communicators (custom all-reduce off)");
  EXPECT_EQ(p->bytes, (1ull << 30) * 13 / 100);
  EXPECT_EQ(pcie.devices[0].total_bytes, l4.gpus[0].memory_bytes);
  const EngineAnswer nvswitch = answer(cat("qwen2.5-32b"), s, EngineKind::Sglang, box_of("H100-sxm x4"));
  const Allocation* n = nccl_line(nvswitch);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->label, "NCCL communicators (custom all-reduce off)");
  EXPECT_EQ(n->bytes, 2ull << 30);
}

// A CPU-only llama.cpp user pays for CPU_REPACK in RAM: Qwen3 8B at Q4_0 with --gpu none keeps
// every layer's attention and MLP matrices on the host, all Q4_0 with rows a multiple of 8, so the
// repacked copy is the weights' layer share (attention + dense MLP parameters over all parameters,
// from the catalogue's counts) within 32 B of padding per tensor (36 layers x 2 made-up tensors);
// the embedding, the output layer (Q6_K) and the norms are not repacked. On a GPU there is none.
// What stays in RAM follows llama-model-loader.cpp load_all_data: memory-mapped (the default), the
// repacked tensors' own pages are read once to make the copies and may be dropped, so the weights
// line is every host tensor less them; --mlock pins the whole mapping (every host tensor); --no-mmap
// reads only what the CPU buffer keeps (as mapped); --no-repack keeps no copy and reads every
// tensor as the file stores it.
TEST(Engines, CpuOnlyLlamaCppShowsRepackedWeights) {
  auto host_line = [](const std::string& args, const std::string& label) -> nlohmann::json {
    const CliResult r = run_cli(args + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const nlohmann::json j = nlohmann::json::parse(r.output);
    for (const auto& d : j["engine"]["devices"]) {
      for (const auto& l : d["lines"]) {
        if (d["name"] == "host" && l["label"] == label) return l;
      }
    }
    return nullptr;
  };
  const std::string cpu = "estimate qwen3-8b --quant Q4_0 --engine llamacpp --gpu none";
  auto pasted = [&](const std::string& flags) { return cpu + " --engine-command 'llama-server -m q.gguf -c 4096 -np 1 " + flags + "'"; };
  const Model& m = cat("qwen3-8b");
  const nlohmann::json every_host_tensor = host_line(pasted("--mlock"), "Weights on host");
  const nlohmann::json repack = host_line(cpu, "Repacked CPU weights (CPU_REPACK)");
  const nlohmann::json mapped = host_line(cpu, "Weights on host");
  ASSERT_FALSE(every_host_tensor.is_null());
  ASSERT_FALSE(repack.is_null());
  ASSERT_FALSE(mapped.is_null());
  const double all = every_host_tensor["bytes"].get<double>();
  const double layer_share = static_cast<double>(m.params.by_class.at(ParamClass::Attention) + m.params.by_class.at(ParamClass::DenseMlp)) /
                             static_cast<double>(m.params.total());
  const double padding = 36.0 * 2 * 32 + 1;
  EXPECT_NEAR(repack["bytes"].get<double>(), all * layer_share, padding);
  // Memory-mapped: every host tensor less the originals of the repacked ones (the copies less their padding).
  EXPECT_NEAR(mapped["bytes"].get<double>(), all - repack["bytes"].get<double>(), padding);
  EXPECT_NEAR(mapped["bytes"].get<double>(), all * (1 - layer_share), padding);
  for (const char* key : {"formula", "assumption", "source"}) EXPECT_FALSE(repack[key].get<std::string>().empty()) << key;
  EXPECT_EQ(host_line(pasted("--no-mmap"), "Weights on host")["bytes"], mapped["bytes"]);
  EXPECT_EQ(host_line(pasted("-lm none"), "Weights on host")["bytes"], mapped["bytes"]);
  EXPECT_EQ(host_line(pasted("-lm mmap+mlock"), "Weights on host")["bytes"], every_host_tensor["bytes"]);
  EXPECT_EQ(host_line(pasted("-nr"), "Weights on host")["bytes"], every_host_tensor["bytes"]);
  EXPECT_TRUE(host_line(pasted("--no-repack"), "Repacked CPU weights (CPU_REPACK)").is_null());
  EXPECT_TRUE(host_line("estimate qwen3-8b --quant Q4_0 --engine llamacpp --gpu 'RTX 4090'", "Repacked CPU weights (CPU_REPACK)").is_null());
  const CliResult bad = run_cli(pasted("-lm lazy"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("-lm"), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("mmap+mlock"), std::string::npos) << bad.output;
}

// A CPU-only box short of RAM by less than the weights llama.cpp maps still runs, paging from disk:
// Llama 3.1 8B at Q8_0 (not a repacked type on x86: every host tensor mapped) is about 8.5 GB of
// weights (8.03B parameters x 8.5 bits), over 8 GB of RAM on its own, so the host is over by less
// than those weights and the verdict says the OS reads the rest from disk. --mlock pins the mapping
// and --no-mmap reads it into memory: then nothing is paged and the sentence is absent.
TEST(Engines, LlamaCppMemoryMappedWeightsBeyondRamArePagedFromDisk) {
  auto verdict = [](const std::string& extra) {
    const CliResult r = run_cli("plan llama-3.1-8b --gpu none --ram 8GB --quant Q8_0 --engine llamacpp" + extra + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output)["verdict"].get<std::string>();
  };
  const std::string mapped = verdict("");
  EXPECT_EQ(mapped.rfind("No GPU, and llama.cpp needs", 0), 0u) << mapped;
  EXPECT_NE(mapped.find("Memory-mapped (llama.cpp's default), it would still start"), std::string::npos) << mapped;
  // Without an SSD rate the speed is unknown rather than RAM's; with one, the decode reads the
  // paged-out bytes from it (worked by hand in SpeedEstimate.WeightsPagedFromDiskAreReadFromTheSsdEveryToken)
  // and is slower than the same run with RAM enough to keep every page.
  EXPECT_NE(mapped.find("give --ssd-gbps for a figure"), std::string::npos) << mapped;
  auto decode = [](const std::string& box) {
    const CliResult r = run_cli("plan llama-3.1-8b --gpu none --quant Q8_0 --engine llamacpp " + box + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output);
  };
  EXPECT_EQ(decode("--ram 8GB")["decode"]["expected_tok_s"].get<double>(), 0.0);
  const nlohmann::json paged = decode("--ram 8GB --ssd-gbps 5");
  const nlohmann::json resident = decode("--ram 64GB --ssd-gbps 5");
  EXPECT_GT(paged["decode"]["expected_tok_s"].get<double>(), 0.0);
  EXPECT_LT(paged["decode"]["expected_tok_s"].get<double>(), resident["decode"]["expected_tok_s"].get<double>() / 2);
  EXPECT_NE(paged["decode"]["formula"].get<std::string>().find("SSD (mmap page-ins)"), std::string::npos);
  EXPECT_EQ(resident["decode"]["formula"].get<std::string>().find("SSD"), std::string::npos);
  EXPECT_NE(paged["verdict"].get<std::string>().find("with the SSD at 5.0 GB/s"), std::string::npos) << paged["verdict"];
  const std::string notes = paged["commands"][0]["notes"].dump();
  EXPECT_NE(notes.find("the rest is read from SSD again every token"), std::string::npos) << notes;
  // "--ram 8" would be eight bytes: refused with the unit it likely meant, not planned on.
  const CliResult bare = run_cli("plan llama-3.1-8b --gpu none --ram 8 --engine llamacpp");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.output.find("--ram: '8' has no unit (8 bytes); did you mean 8GB?"), std::string::npos) << bare.output;
  for (const char* flags : {"--mlock", "--no-mmap", "-lm mlock"}) {
    const std::string held = verdict(std::string(" --engine-command 'llama-server -m Llama-3.1-8B-Q8_0.gguf -c 8192 -np 1 ") + flags + "'");
    EXPECT_EQ(held.rfind("No GPU, and llama.cpp needs", 0), 0u) << flags << ": " << held;
    EXPECT_EQ(held.find("Memory-mapped"), std::string::npos) << flags << ": " << held;
  }
}

// The API and the CLI print the same document for every verb and engine.
TEST(Engines, ApiJsonEqualsCliJson) {
  using server::call_api;
  using server::RequestParams;
  for (const char* engine : {"rule", "llamacpp", "vllm", "sglang"}) {
    SCOPED_TRACE(engine);
    const std::string e = engine;
    auto api = [](std::string_view verb, const std::vector<std::pair<std::string, std::string>>& p) {
      const auto a = call_api(verb, RequestParams::from_pairs(p));
      EXPECT_EQ(a.status, 200) << a.body;
      return nlohmann::json::parse(a.body);
    };
    auto cli = [](const std::string& args) {
      const CliResult r = run_cli(args);
      EXPECT_EQ(r.exit_code, 0) << r.output;
      return nlohmann::json::parse(r.output);
    };
    EXPECT_EQ(api("estimate", {{"model", "qwen3-32b"}, {"quant", "Q4_K_M"}, {"engine", e}, {"gpu", "RTX 4090"}}),
              cli("estimate qwen3-32b --quant Q4_K_M --engine " + e + " --gpu 'RTX 4090' --json"));
    EXPECT_EQ(api("plan", {{"model", "gemma-3-27b"}, {"context", "32K"}, {"engine", e}, {"gpu", "RTX 4090"}}),
              cli("plan gemma-3-27b --context 32K --engine " + e + " --gpu 'RTX 4090' --json"));
    EXPECT_EQ(api("check", {{"engine", e}, {"gpu", "H100-sxm"}}), cli("check --engine " + e + " --gpu H100-sxm --json"));
    EXPECT_EQ(api("sweep", {{"model", "gemma-3-27b"}, {"contexts", "8K,32K"}, {"engine", e}}),
              cli("sweep gemma-3-27b --contexts 8K,32K --engine " + e + " --json"));
    EXPECT_EQ(api("compare", {{"a", "qwen3-32b"}, {"b", "gemma-3-27b"}, {"context", "32K"}, {"engine", e}}),
              cli("compare qwen3-32b gemma-3-27b --context 32K --engine " + e + " --json"));
    EXPECT_EQ(api("builds", {{"model", "qwen3-8b"}, {"engine", e}, {"context", "32K"}}), cli("builds qwen3-8b --engine " + e + " --context 32K --json"));
  }
}

// `plan --engine X` prints one device table, the engine's own lines; the rule's split table (and
// its "TP x PP" line) is the default's alone. Gemma 3 27B at 32K on one RTX 4090.
TEST(Engines, PlanTextWithAnEngineHasOneDeviceTable) {
  const Plan p = gemma_32k_on_4090(EngineKind::LlamaCpp);
  const std::string text = plan_text(p, solve(p), false, ByteUnits::Decimal);
  EXPECT_EQ(text.find("headroom  fits holds"), std::string::npos) << text;
  EXPECT_EQ(text.find("TP 1 × PP 1"), std::string::npos) << text;
  EXPECT_EQ(text.find("Estimate total"), std::string::npos) << text;
  EXPECT_NE(text.find("CUDA0: "), std::string::npos) << text;
  // The KV line on CUDA0 is the engine's, the same bytes `estimate --engine llamacpp` prints.
  EXPECT_NE(text.find(format_bytes(answer(*p.model, p.estimate.scenario, EngineKind::LlamaCpp).bytes(AllocKind::Kv))), std::string::npos) << text;
  const Plan rule = gemma_32k_on_4090(EngineKind::Rule);
  const std::string rule_text = plan_text(rule, solve(rule), false, ByteUnits::Decimal);
  EXPECT_NE(rule_text.find("headroom  fits holds"), std::string::npos) << rule_text;
  EXPECT_NE(rule_text.find("TP 1 × PP 1"), std::string::npos) << rule_text;
}

// vLLM and SGLang rows pick only tiers they load. Qwen3 32B (32,762,123,264 parameters, BF16) on one
// RTX 4090 (25.77 GB): BF16 (65.52 GB) and FP8 (32.76 GB) weights alone exceed the card, and the
// GGUF tiers that fit with llama.cpp (Q4_K_M, 4.85 bits: 19.86 GB) are not vLLM's, so the row is the
// 4-bit AWQ/GPTQ tier: 32,762,123,264 / 256 x 133 B (group-128 blocks of 256 values in 133 B,
// data/quant_formats.json INT4_G128) = 17,020,946,852 B.
TEST(Engines, ServingEnginesPickTiersTheyLoad) {
  const Model& m = cat("qwen3-32b");
  const Box box = box_of("RTX 4090");
  PlanOptions o;
  for (EngineKind k : {EngineKind::Vllm, EngineKind::Sglang}) {
    SCOPED_TRACE(to_string(k));
    o.engine = k;
    const CheckRow row = check_model(m, box, o, Scenario{});
    ASSERT_EQ(row.fit, FitKind::Gpu) << row.note;
    EXPECT_EQ(row.tier, "INT4_G128");
    EXPECT_EQ(row.weights_bytes, 17'020'946'852ull);
    ASSERT_TRUE(row.engine.has_value());
    EXPECT_EQ(row.engine->engine, k);
    // One rank holds it all; SGLang's line is that tier through its weights rule (sglang_weights.h:
    // the allocator's segments, reached as SGLang measures them), vLLM's the tier's bytes plus its
    // RoPE table over the config's max_position_embeddings (vllm_rope.h), not the catalogue entry's
    // stated native 32,768: 40,960 positions x 128 x 2 B = 10,485,760 B.
    EXPECT_EQ(row.engine->bytes(AllocKind::Weights),
              k == EngineKind::Vllm ? row.weights_bytes + 10'485'760u : sglang_rank_weights(m, row.weights_bytes, 1, 1, "auto").total);
    EXPECT_GT(sglang_rank_weights(m, row.weights_bytes, 1, 1, "auto").total, row.weights_bytes);
    // Asked for a GGUF tier, the row says the engine does not load it.
    Scenario q4;
    q4.quant = "Q4_K_M";
    const CheckRow refused = check_model(m, box, o, q4);
    EXPECT_EQ(refused.fit, FitKind::None);
    EXPECT_NE(refused.note.find("GGUF"), std::string::npos) << refused.note;
  }
  o.engine = EngineKind::LlamaCpp;  // llama.cpp loads the GGUF tier: the largest that fits is Q4_K_M
  EXPECT_EQ(check_model(m, box, o, Scenario{}).tier, "Q4_K_M");
}

// `builds --engine`: each row's card count is the fewest on which the engine's answer fits (one
// fewer does not), and vLLM takes gpu_memory_utilization 0.9 (its default) of each card: Qwen3 8B's
// native BF16 weights on one 128 GB card leave vLLM's budget 0.9 x 128 GB = 115,200,000,000 B, and
// its CUDA graphs are captured after it, in the 10% left. The ladder's one sequence is the
// --max-num-seqs 1 its command passes, so the capture sizes go up to min(2 x 1, 512) = 2: [1, 2]
// piecewise and [1] full; 216 MiB + (2 + 1) x 36 layers x 174 KiB = 226,492,416 + 19,243,008 =
// 245,735,424 B (worked by hand from vllm_cuda_graphs).
TEST(Engines, BuildsWithAnEngineCountCardsFromItsAnswer) {
  const Model& m = cat("qwen3-8b");
  Scenario s;
  s.context = 32768;
  for (EngineKind k : {EngineKind::LlamaCpp, EngineKind::Vllm, EngineKind::Sglang}) {
    SCOPED_TRACE(to_string(k));
    const auto rows = engine_ladder(m, s, k);
    ASSERT_FALSE(rows.empty());
    for (const auto& r : rows) {
      EXPECT_TRUE(engine_loads_tier(k, m, r.quant)) << r.weights.tier;
      for (const auto& op : r.options) {
        ASSERT_TRUE(op.answer.has_value()) << op.label;
        EXPECT_EQ(op.answer->fits(), std::optional<bool>(true));
        EXPECT_EQ(op.cards, 1u);  // an 8B model fits one card of every kind
      }
    }
  }
  const auto vllm = engine_ladder(m, s, EngineKind::Vllm);
  const auto native = std::find_if(vllm.begin(), vllm.end(), [](const EngineLadderRow& r) { return r.quant.empty(); });
  ASSERT_NE(native, vllm.end());
  EXPECT_EQ(native->options.front().answer->devices.front().total_bytes, 115'200'000'000ull + 245'735'424ull);
  // Kimi K3 with llama.cpp: one card fewer than the ladder's count does not hold the build.
  const Model& k3 = cat("kimi-k3");
  for (const auto& r : engine_ladder(k3, Scenario{}, EngineKind::LlamaCpp)) {
    for (const auto& op : r.options) {
      ASSERT_GT(op.cards, 1u) << r.weights.tier;
      EngineRequest req;
      req.model = &k3;
      req.scenario.engine = EngineKind::LlamaCpp;
      req.scenario.quant = r.quant;
      req.box = Box{};
      Device d;
      d.name = op.label;
      d.memory_bytes = op.card_bytes;
      req.box->gpus.assign(op.cards - 1, d);
      EXPECT_FALSE(run_engine(req).fits().value_or(false)) << r.weights.tier << " on " << op.cards - 1 << " x " << op.label;
    }
  }
}

// The same model from config.json and from a GGUF gives the same layers: Falcon-H1's attention in
// `attention`, its Mamba2 mixer in `parallel_mixer`, whichever the source.
TEST(Engines, GgufAndConfigGiveTheSameLayers) {
  const std::string config = R"({"model_type": "falcon_h1", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 4096,
    "mamba_n_heads": 4, "mamba_d_head": 32, "mamba_n_groups": 1, "mamba_d_state": 16, "mamba_d_conv": 4, "tie_word_embeddings": false})";
  const Model from_config = model_from_config(parse_config_text(config, "falcon.json"), "falcon.json");

  testing::GgufWriter w;
  w.str("general.architecture", "falcon-h1");
  w.u32("falcon-h1.block_count", 2);
  w.u32("falcon-h1.embedding_length", 256);
  w.u32("falcon-h1.context_length", 4096);
  w.u32("falcon-h1.attention.head_count", 4);
  w.u32("falcon-h1.attention.head_count_kv", 2);
  w.u32("falcon-h1.attention.key_length", 64);
  w.u32("falcon-h1.attention.value_length", 64);
  w.u32("falcon-h1.feed_forward_length", 512);
  w.u32("falcon-h1.vocab_size", 1000);
  w.u32("falcon-h1.ssm.conv_kernel", 4);
  w.u32("falcon-h1.ssm.inner_size", 128);
  w.u32("falcon-h1.ssm.state_size", 16);
  w.u32("falcon-h1.ssm.group_count", 1);
  using W = testing::GgufWriter;
  w.tensor("token_embd.weight", {256, 1000}, W::F32, 256 * 1000 * 4);
  w.tensor("output.weight", {256, 1000}, W::F32, 256 * 1000 * 4);
  for (int il = 0; il < 2; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    w.tensor(b + "attn_q.weight", {256, 256}, W::F32, 256 * 256 * 4);
    w.tensor(b + "attn_k.weight", {256, 128}, W::F32, 256 * 128 * 4);
    w.tensor(b + "attn_v.weight", {256, 128}, W::F32, 256 * 128 * 4);
    w.tensor(b + "attn_output.weight", {256, 256}, W::F32, 256 * 256 * 4);
    w.tensor(b + "ssm_in.weight", {256, 320}, W::F32, 256 * 320 * 4);
    w.tensor(b + "ffn_down.weight", {512, 256}, W::F32, 512 * 256 * 4);
  }
  testing::MemorySource src(w.header() + std::string(w.data_bytes(), '\0'), "falcon.gguf");  // the reader checks data lies in the file
  const Model from_gguf = model_from_gguf({read_gguf(src)});

  ASSERT_EQ(from_gguf.layers.size(), from_config.layers.size());
  const CacheLayout f16 = uniform_cache(cache_type("F16", "test"));
  for (std::size_t i = 0; i < from_config.layers.size(); ++i) {
    const LayerConfig& a = from_config.layers[i];
    const LayerConfig& b = from_gguf.layers[i];
    EXPECT_EQ(a.attention.kind, AttentionKind::Full);
    EXPECT_EQ(b.attention.kind, a.attention.kind);
    ASSERT_TRUE(a.parallel_mixer && b.parallel_mixer);
    EXPECT_EQ(b.parallel_mixer->kind, AttentionKind::LinearState);
    EXPECT_EQ(b.parallel_mixer->state_family, a.parallel_mixer->state_family);
    EXPECT_EQ(b.parallel_mixer->state_values, a.parallel_mixer->state_values);  // 128 x 16 = 2,048
    EXPECT_EQ(b.parallel_mixer->conv_values, a.parallel_mixer->conv_values);    // 3 x (128 + 2 x 16) = 480
    EXPECT_EQ(token_cache_bytes(b, f16).total(), token_cache_bytes(a, f16).total());  // 2 x 64 x 2 B x 2 = 512
    EXPECT_EQ(token_cache_bytes(a, f16).total(), 512u);
    EXPECT_EQ(state_bytes(b, StateLayout::F32).total(), state_bytes(a, StateLayout::F32).total());
    EXPECT_EQ(b.feed_forward.kind, a.feed_forward.kind);
    EXPECT_EQ(b.feed_forward.dense_width, a.feed_forward.dense_width);
  }
}

}  // namespace vc

// SGLang --enable-dp-attention (sglang_engine.cpp): each of the dp groups has its own pool of
// kv_tokens, so the server runs dp x kv_tokens / context sequences at once, and a scenario's
// sequences are spread over the groups, ceil(sequences / dp) each: with a pool of P = floor(kv_tokens
// / 8,192) requests of 8K, 4 x P sequences fit (P a group) and 4 x P + 1 do not (P + 1 on one group).
TEST(Engines, SglangDpAttentionPoolsAddUpOverTheGroups) {
  auto answer = [](uint64_t seqs) {
    const CliResult r = run_cli("estimate qwen3-30b-a3b --engine-command 'python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --tp 4 --dp 4 "
                                "--enable-dp-attention' --gpu 'H200 x4' --context 8K --seqs " +
                                std::to_string(seqs) + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output)["engine"];
  };
  const nlohmann::json one = answer(1);
  const uint64_t tokens = one["kv_tokens"].get<uint64_t>();
  EXPECT_DOUBLE_EQ(one["max_concurrency"].get<double>(), 4.0 * static_cast<double>(tokens) / 8192.0);
  const uint64_t per_group = tokens / 8192;
  ASSERT_GT(per_group, 0u);
  EXPECT_TRUE(answer(4 * per_group)["devices"][0]["fits"].get<bool>());
  EXPECT_FALSE(answer(4 * per_group + 1)["devices"][0]["fits"].get<bool>());
}

// The dense Qwen3 under DP attention is answered (models/qwen3.py builds its attention on the
// attention-TP group); Qwen2 (models/qwen2.py keeps Qwen2Attention on the whole TP group) exits 2
// naming the flag, and so does a --moe-dense-tp-size other than 1 (server_args.py asserts 1 or None).
TEST(Engines, SglangDpAttentionDenseQwen3AnsweredQwen2Refused) {
  const CliResult q3 = run_cli("estimate qwen3-32b --engine-command 'python -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 4 --dp 2 "
                               "--enable-dp-attention' --gpu 'H100 SXM x4' --json");
  ASSERT_EQ(q3.exit_code, 0) << q3.output;
  EXPECT_GT(nlohmann::json::parse(q3.output)["engine"]["kv_tokens"].get<uint64_t>(), 0u);
  const CliResult q2 = run_cli("estimate qwen2.5-7b --engine-command 'python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --tp 2 --dp 2 "
                               "--enable-dp-attention' --gpu 'H100 SXM x2'");
  EXPECT_EQ(q2.exit_code, 2);
  EXPECT_NE(q2.output.find("--enable-dp-attention"), std::string::npos) << q2.output;
  const CliResult bad = run_cli("estimate deepseek-v3 --engine-command 'python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 "
                                "--moe-dense-tp-size 2' --gpu 'H200 x8'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("--moe-dense-tp-size"), std::string::npos) << bad.output;
}
