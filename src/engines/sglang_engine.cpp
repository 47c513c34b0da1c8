// SGLang as an engine: every rank holds its share of the weights and a token pool sized from
// mem_fraction_static (sglang_profile.h: SGLang's own choice by GPU memory when not given), the
// rest of the card left for activations and CUDA graphs. The pool in tokens and the concurrency it
// allows at the scenario's context are numbers of the answer.
#include <fmt/format.h>

#include <optional>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_impl.h"
#include "engines/serving_dtype.h"
#include "engines/serving_speculative.h"
#include "engines/sglang_profile.h"
#include "engines/sglang_weights.h"
#include "engines/vllm_profile.h"
#include "model/layer_memory.h"

namespace vc::engines {
namespace {

constexpr const char* kVersion = "SGLang (python/sglang/srt/server_args.py _handle_gpu_memory_settings, model_executor/model_runner.py profile_max_num_token)";
constexpr const char* kSource = "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py";

AllocKind kind_of(const std::string& id) {
  if (id == "sglang.weights" || id == "sglang.lora" || id == "sglang.draft_weights") return AllocKind::Weights;
  if (id == "sglang.kv" || id == "sglang.draft_kv") return AllocKind::Kv;
  if (id == "sglang.state") return AllocKind::State;
  if (id == "sglang.runtime" || id == "sglang.nccl") return AllocKind::RuntimeReserve;
  if (id == "sglang.reserve") return AllocKind::Activation;
  return AllocKind::Other;
}

// The drafter of --speculative-algorithm (engines/serving_speculative.h) in SGLang's settings.
std::optional<Drafter> set_drafter(const EngineRequest& r, SglangSettings& ss, EngineAnswer& a) {
  const ServingSpeculative& spec = r.companions.speculative;
  if (!spec.on()) {
    if (r.command && r.command->serving_speculative.on())
      a.notes.push_back("the command's speculative decoding is not counted here: its draft model is not in the catalogue (`estimate --draft FILE` reads any model and adds its weights and cache)");
    return std::nullopt;
  }
  Drafter d = serving_drafter(*r.model, r.companions.draft.get(), spec, ss.dtype);
  ss.speculative_algorithm = sglang_algorithm_name(spec.method);
  a.settings.push_back({"speculative_algorithm", ss.speculative_algorithm});
  if (spec.method == "ngram") {
    a.notes.push_back("NGRAM speculative decoding drafts from the prompt: no draft model, no draft pool");
    return d;
  }
  ss.draft_weights = ceil_div(d.weight_bytes, ss.tensor_parallel);
  ss.drafter_layers = d.layers;
  const SglangSpecShape shape = sglang_spec_shape(spec, *r.model);
  ss.spec_steps = shape.steps;
  ss.spec_topk = shape.topk;
  ss.spec_draft_tokens = shape.draft_tokens;
  a.settings.push_back({"speculative_num_steps", shape.steps});
  a.settings.push_back({"speculative_eagle_topk", shape.topk});
  a.settings.push_back({"speculative_num_draft_tokens", shape.draft_tokens});
  a.notes.push_back(fmt::format("drafter: {} ({}; {}), at the target's TP {}; its CUDA graphs and activations come out of what is left", d.name,
                                d.weight_formula, d.layers_formula, ss.tensor_parallel));
  return d;
}

constexpr const char* kOffloadSource =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/utils/offloader.py (OffloaderV1.maybe_offload_to_cpu); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py (cpu_offload_gb)";

// --cpu-offload-gb: the host holds what every rank moved, pinned; SGLang copies an offloaded
// layer's parameters back to the GPU before each of its forwards (transient, not counted).
void add_offload_host(EngineAnswer& a, const CpuOffload& o, uint64_t ranks, const EngineRequest& r) {
  add_cpu_offload_host(a, o, ranks, r, kOffloadSource,
                       "; SGLang copies an offloaded layer's "
                       "parameters to the GPU before each of its forwards (functional_call), so every forward moves them over the host link, "
                       "and those transient copies come out of the memory the static share leaves");
}

}  // namespace

EngineAnswer sglang(const EngineRequest& r, const EngineRun& run) {
  const Model& model = *r.model;
  const Scenario& s = r.scenario;
  const WeightsFigure w = resolve_weights(model, s.quant);
  SglangSettings ss = run.sglang;
  ss.weight_bytes = w.bytes;
  if (!r.command) {  // the scenario in SGLang's terms; TP x PP as vLLM's (the split on the box)
    ss.context_length = s.context;
    ss.tensor_parallel = run.vllm.kv.tensor_parallel;
    ss.pipeline_parallel = run.vllm.kv.pipeline_parallel;
    const std::string d = vllm_cache_dtype_from_scenario(s.cache_dtype);
    ss.kv_cache_dtype = d == "fp8" ? "fp8_e4m3" : d;  // SGLang names the fp8 format
  }
  if (ss.card_bytes == 0) ss.card_bytes = run.vllm.card_bytes;  // --gpu or --gpu-memory
  if (ss.gpu_link == GpuLink::Unknown && r.box && !r.box->gpus.empty()) ss.gpu_link = r.box->gpus.front().gpu_link;  // what the communicators take
  if (r.box && !r.box->gpus.empty()) ss.rocm = r.box->gpus.front().vendor == "amd";  // SGLang's ROCm build: RCCL, aiter's all-reduce
  // --enable-dp-attention --dp-size N: N attention groups inside the TP ranks (N = 1: off; the
  // parser turns it off at --dp-size 1, server_args.py _handle_data_parallelism).
  ss.attention_dp = run.parallel.dp_attention ? run.parallel.data_parallel : 1;
  const uint64_t tp = ss.tensor_parallel, pp = ss.pipeline_parallel, ranks = checked_mul(tp, pp), dp = ss.attention_dp;
  if (tp % dp != 0)
    throw InputError("--dp-size", fmt::format("{} does not divide --tp-size {}; with --enable-dp-attention SGLang asserts tp_size % dp_size == 0", dp, tp));
  // One DP group serves ceil(sequences / dp) of the scenario's sequences.
  const uint64_t group_sequences = ceil_div(s.sequences, dp);
  const uint64_t context = ss.context_length ? ss.context_length : s.context;

  EngineAnswer a;
  a.engine = EngineKind::Sglang;
  a.version_modelled = kVersion;
  a.settings = {{"mem_fraction_static", ss.mem_fraction_static ? SettingValue(*ss.mem_fraction_static) : SettingValue(std::string("chosen by SGLang"))},
                {"context_length", context}, {"tp_size", tp}, {"pp_size", pp}, {"kv_cache_dtype", ss.kv_cache_dtype}, {"weights", w.tier}};
  if (dp > 1) {
    a.settings.push_back({"dp_size", dp});
    a.settings.push_back({"enable_dp_attention", std::string("true")});
  }
  if (ss.max_running_requests) a.settings.push_back({"max_running_requests", *ss.max_running_requests});
  if (ss.moe_dense_tp_size) a.settings.push_back({"moe_dense_tp_size", ss.moe_dense_tp_size});
  if (ss.lora.max_loras_per_batch) {
    a.settings.push_back({"max_loras_per_batch", ss.lora.max_loras_per_batch});
    a.settings.push_back({"max_lora_rank", sglang_lora_rank(ss.lora)});
  }
  for (const auto& n : run.notes) a.notes.push_back(n);
  const std::optional<Drafter> drafter = set_drafter(r, ss, a);

  if (ss.card_bytes == 0) {
    // No card: what the scenario needs on each rank; SGLang itself sizes its pool from the card.
    CacheLayout layout = uniform_cache(cache_type(ss.kv_cache_dtype.rfind("fp8", 0) == 0 ? "FP8_E4M3" : "BF16", "--kv-cache-dtype"));
    layout.tensor_parallel = tp / dp;  // the pool's KV heads: over the attention group's ranks
    uint64_t per_token = 0, state = 0;
    const uint64_t stage_layers = std::min<uint64_t>(ceil_div(model.layers.size(), pp), model.layers.size());
    for (uint64_t i = 0; i < stage_layers; ++i) {
      per_token = checked_add(per_token, token_cache_bytes(model.layers[i], layout).total());
      state = checked_add(state, state_bytes(model.layers[i], StateLayout::F32).total());
    }
    uint64_t draft_per_token = 0;
    if (drafter) {
      for (const auto& l : drafter->layers) draft_per_token = checked_add(draft_per_token, token_cache_bytes(l, layout).total());
    }
    const SglangRankWeights rank_weights = sglang_rank_weights(model, w.bytes, tp, pp, ss.dtype, dp, ss.enable_dp_lm_head, ss.cpu_offload_cap, ss.moe_dense_tp_size);
    const uint64_t need =
        checked_add(checked_product({checked_add(per_token, draft_per_token), context, group_sequences}), checked_mul(state, group_sequences));
    for (uint64_t i = 0; i < ranks; ++i) {
      DeviceAllocation d;
      d.name = rank_name(i, tp);
      d.add({AllocKind::Weights, "Weights on this rank", rank_weights.total,
             sglang_weights_formula(rank_weights, ss.dtype, tp, pp) + cpu_offload_moved_suffix(rank_weights.offload),
             kSglangWeightsAssumption, kSglangWeightsSource});
      if (ss.draft_weights)
        d.add({AllocKind::Weights, "Draft weights per GPU", ss.draft_weights, fmt::format("{} / tp {}", drafter->weight_formula, tp),
               "the draft worker loads at the target's TP", kSglangSpecSource});
      const LoraSlots lora = sglang_lora_pool(model, ss.lora, tp, serving_dtype_bytes(ss.dtype));
      if (lora.bytes) d.add({AllocKind::Weights, sglang_lora_label(ss.lora), lora.bytes, lora.formula, lora.assumption, kSglangLoraSource});
      d.add(scenario_kv_line(need,
                             fmt::format("{} B per token{} x {} tokens x {} sequence(s){}", per_token,
                                         draft_per_token ? fmt::format(" + {} B the draft's", draft_per_token) : "", context, group_sequences,
                                         dp > 1 ? fmt::format(" (ceil({} / dp {}): one DP attention group's)", s.sequences, dp) : std::string()),
                             "SGLang sizes its token pool from mem_fraction_static x the card", kSource));
      a.devices.push_back(std::move(d));
    }
    add_offload_host(a, rank_weights.offload, ranks, r);
    a.notes.push_back(no_card_note("SGLang"));
    finish(a);
    return a;
  }
  const SglangProfile p = sglang_profile(model, ss);
  for (uint64_t i = 0; i < ranks; ++i) {
    DeviceAllocation d;
    d.name = rank_name(i, tp);
    d.capacity = ss.card_bytes;
    for (const auto& l : p.lines) d.add({kind_of(l.id), l.label, l.bytes, l.formula, l.assumption, l.source});
    // SGLang needs one request of the context in the pool to serve it; the scenario's sequences at once.
    // Under DP attention each of the dp groups' pools serves its share of them.
    d.fits = p.max_total_num_tokens >= context && p.max_total_num_tokens / context >= group_sequences;
    a.devices.push_back(std::move(d));
  }
  a.kv_tokens = p.max_total_num_tokens;
  a.max_concurrency = context ? static_cast<double>(dp) * static_cast<double>(p.max_total_num_tokens) / static_cast<double>(context) : 0;
  for (const auto& n : p.notes) a.notes.push_back(n);
  add_offload_host(a, p.offload, ranks, r);
  finish(a);
  return a;
}

}  // namespace vc::engines
