// vLLM as an engine: every rank of TP x PP takes gpu_memory_utilization of its card, holds its
// share of the weights, the profile run's activation peak and the non-torch memory, and gives the
// rest to the paged KV cache (vllm_budget.h); the pool's tokens and the concurrency it allows at
// the scenario's context are numbers of the answer.
#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/units.h"
#include "engines/engine_impl.h"
#include "engines/serving_dtype.h"
#include "engines/vllm_encoder.h"
#include "estimate/checkpoint_tower.h"
#include "model/layer_memory.h"

namespace vc::engines {
namespace {

constexpr const char* kVersion = "vLLM v1 (vllm/v1/worker/gpu_worker.py determine_available_memory, vllm/v1/kv_cache_interface.py)";
constexpr const char* kBudgetSource = "https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_worker.py (determine_available_memory)";
constexpr const char* kKvSource = "https://github.com/vllm-project/vllm/blob/main/vllm/v1/kv_cache_interface.py";

constexpr const char* kProfileSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_model_runner.py (profile_run, _dummy_sampler_run)";

// The profile run's peak: the fused-MoE workspace stays allocated, then the larger of the forward
// pass and the dummy sampler over max_num_seqs rows (every TP rank holds the full logits); a
// multimodal model's encoder batch (vllm_encoder.h) is held under both.
Allocation activation_line(const Model& model, const VllmBudget& b, const VllmBudgetSettings& s) {
  const VllmEncoderProfile e = vllm_encoder_profile(model, b.max_num_batched_tokens, b.max_num_seqs, s.kv.max_model_len, s.kv.tensor_parallel,
                                                    serving_dtype_bytes(s.kv.dtype));
  std::string formula = fmt::format("MoE workspace {} B + max(forward {} B over {} tokens, sampler {} B over {} sequences) + 50 MiB", b.moe_workspace,
                                    b.forward_peak, b.max_num_batched_tokens, b.sampler_peak, b.max_num_seqs);
  if (e.items) formula = fmt::format("max(encoder pass {} B, encoder batch held {} B + {}); {}", e.encoder_peak, e.held(), formula, e.formula);
  return {AllocKind::Activation, "Activation peak (profile run)", b.activation, formula,
          std::string("fitted on public vLLM 0.19 logs, 30% set aside (docs/accuracy.md)") +
              (e.items ? "; the encoder's dummy batch is read from vLLM's source, not fitted" : e.note.empty() ? "" : "; " + e.note),
          kProfileSource};
}

// Non-torch memory, split where tensor parallelism adds communication buffers: the CUDA context
// and cuBLAS workspace (0.25 GiB, as one GPU prints), and NCCL with vLLM's custom all-reduce.
std::vector<Allocation> non_torch_lines(const VllmBudget& b, uint64_t tp) {
  constexpr uint64_t kContext = (1ull << 30) / 4;
  if (tp < 2 || b.non_torch <= kContext)
    return {{AllocKind::RuntimeReserve, "Non-torch memory (CUDA context, cuBLAS)", b.non_torch, "0.25 GiB on one GPU; 0.07 GiB on a pipeline rank without TP",
             "fitted on public vLLM 0.19 logs (\"non-torch forward increase memory\")", kBudgetSource}};
  return {{AllocKind::RuntimeReserve, "Non-torch memory: CUDA context, cuBLAS", kContext, "0.25 GiB, as one GPU prints",
           "fitted on public vLLM 0.19 logs (\"non-torch forward increase memory\")", kBudgetSource},
          {AllocKind::RuntimeReserve, fmt::format("NCCL and custom all-reduce buffers (TP {})", tp), b.non_torch - kContext,
           "non-torch memory 2.08 GiB at TP 2 + 0.055 GiB a further rank, less the CUDA context",
           "fitted on public vLLM 0.19 logs at TP 2-4 (2.07-2.21 GiB printed); NCCL's channels and vLLM's custom all-reduce IPC buffers",
           "https://github.com/vllm-project/vllm/blob/main/vllm/distributed/device_communicators/custom_all_reduce.py"}};
}

// The rank's weights; a checkpoint's own vision tower (counted from its config) on a line of its
// own: vLLM loads it with the checkpoint and shards it over TP like the decoder layers.
void add_weight_lines(DeviceAllocation& d, const Model& model, uint64_t rank_bytes, const WeightsFigure& w, uint64_t tp, uint64_t pp) {
  const std::string formula = fmt::format("{} / (tp {} x pp {})", format_count(w.bytes), tp, pp);
  const auto tower = pp == 1 ? checkpoint_tower_line(model, w) : std::nullopt;
  if (!tower) {
    d.add({AllocKind::Weights, "Weights on this rank", rank_bytes, formula, "", kBudgetSource});
    return;
  }
  const uint64_t tower_bytes = std::min(rank_bytes, ceil_div(tower->bytes, tp));
  d.add({AllocKind::Weights, "Weights on this rank (language model)", rank_bytes - tower_bytes, formula + " - the vision tower's share", "", kBudgetSource});
  d.add({AllocKind::Weights, tower->label + " on this rank", tower_bytes, fmt::format("{} / tp {}", format_count(tower->bytes), tp),
         "vLLM loads the checkpoint's tower with its weights", tower->source});
}

}  // namespace

EngineAnswer vllm(const EngineRequest& r, const EngineRun& run) {
  const Model& model = *r.model;
  const Scenario& s = r.scenario;
  const WeightsFigure w = resolve_weights(model, s.quant);
  VllmBudgetSettings bs = run.vllm;
  bs.weight_bytes = loaded_weight_bytes(model, w.bytes, bs.kv.dtype);  // --dtype float32 doubles a 16-bit checkpoint
  const uint64_t tp = bs.kv.tensor_parallel, pp = bs.kv.pipeline_parallel;

  EngineAnswer a;
  a.engine = EngineKind::Vllm;
  a.version_modelled = kVersion;
  a.settings = {{"gpu_memory_utilization", bs.gpu_memory_utilization}, {"max_model_len", bs.kv.max_model_len},
                {"max_num_batched_tokens", bs.max_num_batched_tokens}, {"kv_cache_dtype", bs.kv.kv_cache_dtype}, {"block_size", bs.kv.block_size},
                {"tensor_parallel_size", tp}, {"pipeline_parallel_size", pp}, {"weights", w.tier}};
  for (const auto& n : run.notes) a.notes.push_back(n);

  const uint64_t ranks = checked_mul(tp, pp);
  if (bs.card_bytes == 0) {
    // No card: what the scenario needs on each rank; vLLM itself would take all it is allowed.
    VllmKv kv = vllm_kv(model, bs.kv);
    const uint64_t need = checked_add(checked_product({kv.bytes_per_token, s.context, s.sequences}), checked_mul(kv.state_bytes_per_seq, s.sequences));
    VllmBudgetSettings probe = bs;
    probe.card_bytes = 1;  // the non-KV parts do not depend on the card
    const VllmBudget b = vllm_budget(model, probe);
    for (uint64_t i = 0; i < ranks; ++i) {
      DeviceAllocation d;
      d.name = rank_name(i, tp);
      d.add(even_weights_line(w.bytes, tp, pp, kBudgetSource));
      d.add(activation_line(model, b, bs));
      for (auto& l : non_torch_lines(b, tp)) d.add(std::move(l));
      d.add(scenario_kv_line(need,
                             fmt::format("{} B per token x {} tokens x {} sequence(s){}", kv.bytes_per_token, s.context, s.sequences,
                                         kv.state_bytes_per_seq ? fmt::format(" + {} B state per sequence", kv.state_bytes_per_seq) : ""),
                             "vLLM would give the KV cache all of gpu_memory_utilization x card that is left", kKvSource));
      a.devices.push_back(std::move(d));
    }
    a.notes.push_back(no_card_note("vLLM"));
    finish(a);
    return a;
  }
  const VllmBudget b = vllm_budget(model, bs);
  for (uint64_t i = 0; i < ranks; ++i) {
    DeviceAllocation d;
    d.name = rank_name(i, tp);
    d.capacity = bs.card_bytes;
    add_weight_lines(d, model, b.weights, w, tp, pp);
    d.add(activation_line(model, b, bs));
    for (auto& l : non_torch_lines(b, tp)) d.add(std::move(l));
    d.add({AllocKind::CudaGraphs, "CUDA graphs (captured after the KV cache)", b.cuda_graphs,
           fmt::format("{} layers on this rank x 27 MiB (decode graphs for 67 batch sizes up to 512)", ceil_div(model.layers.size(), pp)),
           "uncertain: fitted on public vLLM 0.19 logs (\"Graph capturing finished ... took\"), 30% set aside; outside gpu_memory_utilization in "
           "vLLM 0.19, profiled inside it from vLLM 0.21",
           "https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_model_runner.py (capture_model)"});
    d.add({AllocKind::Kv, fmt::format("KV cache pool: {} tokens", b.kv.tokens), b.available_kv,
           fmt::format("{} x card {} - weights - activation - non-torch", bs.gpu_memory_utilization, format_count(bs.card_bytes)),
           b.kv.note.empty() ? "vLLM gives the cache everything left of its share of the card" : b.kv.note, kKvSource});
    // vLLM refuses to start when one request of max_model_len does not fit in the pool.
    d.fits = b.available_kv > 0 && b.kv.tokens >= bs.kv.max_model_len && b.kv.max_concurrency >= static_cast<double>(s.sequences);
    a.devices.push_back(std::move(d));
  }
  a.kv_tokens = b.kv.tokens;
  a.max_concurrency = b.kv.max_concurrency;
  if (b.available_kv == 0) a.notes.push_back("no memory left for the KV cache: vLLM stops with 'No available memory for the cache blocks'");
  else if (b.kv.tokens < bs.kv.max_model_len)
    a.notes.push_back(fmt::format("the pool holds {} tokens, fewer than max_model_len {}: vLLM refuses to start", b.kv.tokens, bs.kv.max_model_len));
  finish(a);
  return a;
}

}  // namespace vc::engines
