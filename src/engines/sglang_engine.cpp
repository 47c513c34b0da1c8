// SGLang as an engine (a minimal adapter read from SGLang's source; the fuller memory profile of
// src/engines/sglang_profile.h replaces it when it lands): every rank takes mem_fraction_static of
// the memory free before the weights for weights + the token pool, the rest is left for
// activations and CUDA graphs; the pool in tokens is what is left after the weights over the bytes
// one token takes in this rank's layers (model_runner.py profile_max_num_token).
#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "core/checked.h"
#include "core/units.h"
#include "engines/engine_impl.h"
#include "model/layer_memory.h"

namespace vc::engines {
namespace {

constexpr const char* kVersion = "SGLang (python/sglang/srt/server_args.py mem_fraction_static default, model_runner.py profile_max_num_token)";
constexpr const char* kArgsSource = "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py";
constexpr const char* kRunnerSource = "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py";
// CUDA context and allocator before the weights load, one GPU (0.5 GiB; NCCL adds more with TP).
constexpr uint64_t kRuntime = 1ull << 29;
constexpr uint64_t kRuntimeTp = 5ull << 29;

// server_args.py: without --mem-fraction-static, SGLang takes a smaller static share the more
// ranks it runs (the rest holds activations, CUDA graphs and NCCL buffers).
double default_fraction(uint64_t tp) {
  if (tp >= 16) return 0.79;
  if (tp >= 8) return 0.81;
  if (tp >= 4) return 0.85;
  if (tp >= 2) return 0.87;
  return 0.88;
}

}  // namespace

EngineAnswer sglang(const EngineRequest& r, const EngineRun& run) {
  const Model& model = *r.model;
  const Scenario& s = r.scenario;
  const WeightsFigure w = resolve_weights(model, s.quant);
  const uint64_t tp = run.vllm.kv.tensor_parallel, pp = run.vllm.kv.pipeline_parallel, ranks = checked_mul(tp, pp);
  const uint64_t card = run.vllm.card_bytes;
  const double fraction = default_fraction(tp);
  std::string d;
  for (char c : s.cache_dtype) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool fp8 = d.rfind("fp8", 0) == 0;

  // Bytes one token takes over this rank's layers (the first pipeline stage is the largest).
  CacheLayout layout = uniform_cache(cache_type(fp8 ? "FP8_E4M3" : "BF16", "--kv-cache-dtype"));
  layout.tensor_parallel = tp;
  uint64_t per_token = 0, state = 0;
  const uint64_t stage_layers = std::min<uint64_t>(ceil_div(model.layers.size(), pp), model.layers.size());
  for (uint64_t i = 0; i < stage_layers; ++i) {
    per_token = checked_add(per_token, token_cache_bytes(model.layers[i], layout).total());
    state = checked_add(state, state_bytes(model.layers[i], StateLayout::Mixed).total());
  }

  EngineAnswer a;
  a.engine = EngineKind::Sglang;
  a.version_modelled = kVersion;
  a.settings = {{"mem_fraction_static", fraction}, {"context_length", s.context}, {"tp_size", tp}, {"pp_size", pp},
                {"kv_cache_dtype", std::string(fp8 ? "fp8_e4m3" : "auto")}, {"weights", w.tier}};
  a.notes.push_back("minimal SGLang adapter: mem_fraction_static by TP degree as server_args.py sets it; CUDA graphs and chunked prefill live in the "
                    "share SGLang leaves outside mem_fraction_static");
  if (state) a.notes.push_back("hybrid model: SGLang keeps the recurrent state in a separate pool; it is counted per sequence on top of the token pool");
  const uint64_t weights = ceil_div(w.bytes, ranks);
  const uint64_t runtime = tp > 1 ? kRuntimeTp : kRuntime;
  auto rank_name = [&](uint64_t i) { return fmt::format("rank {} (tp{} pp{})", i, i % tp, i / tp); };
  uint64_t pool = 0, tokens = 0;
  if (card) {
    const uint64_t free_before = card > runtime ? card - runtime : 0;
    const auto static_share = static_cast<uint64_t>(std::floor(fraction * static_cast<double>(free_before)));
    const uint64_t states = checked_mul(state, s.sequences);
    pool = static_share > checked_add(weights, states) ? static_share - weights - states : 0;
    tokens = per_token ? pool / per_token : 0;
    pool = checked_mul(tokens, per_token);
  }
  for (uint64_t i = 0; i < ranks; ++i) {
    DeviceAllocation dev;
    dev.name = rank_name(i);
    dev.add({AllocKind::RuntimeReserve, "CUDA context before the weights", runtime, tp > 1 ? "2.5 GiB with tensor parallelism" : "0.5 GiB on one GPU",
             "uncertain: SGLang does not print it", kRunnerSource});
    dev.add({AllocKind::Weights, "Weights on this rank", weights, fmt::format("{} / (tp {} x pp {})", format_count(w.bytes), tp, pp), "weights split evenly over the ranks",
             kRunnerSource});
    if (state) {
      dev.add({AllocKind::State, "Recurrent state", checked_mul(state, s.sequences), fmt::format("{} B x {} sequence(s)", state, s.sequences),
               "matrix f32, conv 16-bit", kRunnerSource});
    }
    if (card) {
      dev.capacity = card;
      dev.add({AllocKind::Kv, fmt::format("Token pool: {} tokens", tokens), pool,
               fmt::format("floor(({} x (card - runtime) - weights - state) / {} B a token) tokens", fraction, per_token),
               "mem_fraction_static of the free memory holds weights and the pool", kRunnerSource});
      const uint64_t used = dev.total_bytes;
      dev.add({AllocKind::Activation, "Left for activations and CUDA graphs", card > used ? card - used : 0, "card - the lines above",
               fmt::format("SGLang keeps (1 - {}) of the free memory out of the static share", fraction), kArgsSource});
      dev.fits = tokens >= s.context && tokens / std::max<uint64_t>(1, s.context) >= s.sequences;
    } else {
      dev.add({AllocKind::Kv, "KV cache the scenario needs", checked_product({per_token, s.context, s.sequences}),
               fmt::format("{} B per token x {} tokens x {} sequence(s)", per_token, s.context, s.sequences),
               "no card given: SGLang sizes its pool from the card; give --gpu for its pool", kRunnerSource});
    }
    a.devices.push_back(std::move(dev));
  }
  if (card) {
    a.kv_tokens = tokens;
    a.max_concurrency = s.context ? static_cast<double>(tokens) / static_cast<double>(s.context) : 0;
  }
  finish(a);
  return a;
}

}  // namespace vc::engines
