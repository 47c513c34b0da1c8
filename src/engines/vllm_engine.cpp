// vLLM as an engine: every rank of TP x PP takes gpu_memory_utilization of its card, holds its
// share of the weights, the profile run's activation peak and the non-torch memory, and gives the
// rest to the paged KV cache (vllm_budget.h); the pool's tokens and the concurrency it allows at
// the scenario's context are numbers of the answer. A drafter (--speculative-config) adds its
// weights at the target's TP and its layers to the cache spec (engines/serving_speculative.h), and
// its profile pass, buffers and graphs to the budget (engines/vllm_speculative_budget.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_impl.h"
#include "engines/serving_dtype.h"
#include "engines/serving_speculative.h"
#include "engines/sglang_weights.h"
#include "engines/vllm_data_parallel.h"
#include "engines/vllm_deepstack.h"
#include "engines/vllm_encoder.h"
#include "engines/vllm_graphs.h"
#include "engines/vllm_lora_adapters.h"
#include "engines/vllm_rope.h"
#include "engines/vllm_speculative_budget.h"
#include "engines/vllm_tower_skip.h"
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
// multimodal model's encoder batch (vllm_encoder.h) is held under both. With a drafter
// (vllm_speculative_budget.h) the forward pass is the larger of the target's and the drafter's
// (with the target's hidden states held), the sampler's peak holds the rejection sampler's
// logits too, and the proposer's buffers stay allocated.
Allocation activation_line(const Model& model, const VllmBudget& b, const VllmBudgetSettings& s, const VllmSpecProfile* sp) {
  const VllmEncoderProfile e = vllm_encoder_profile(model, b.max_num_batched_tokens, b.max_num_seqs, s.kv.max_model_len, s.kv.tensor_parallel,
                                                    serving_dtype_bytes(s.kv.dtype), s.mm_limits);
  std::string formula = fmt::format("MoE workspace {} B + max(forward {} B over {} tokens, sampler {} B over {} sequences) + 50 MiB", b.moe_workspace,
                                    b.forward_peak, b.max_num_batched_tokens, b.sampler_peak, b.max_num_seqs);
  if (b.dp_gathered)
    formula += fmt::format("; data parallel {0}: the workspace sized for {0} x {1} gathered rows, and the forward holding the gathered input and the "
                           "experts' output beyond the rank's own rows, {2} B (allgather_reducescatter)",
                           b.shard.ranks, b.max_num_batched_tokens, b.dp_gathered);
  if (e.items) formula = fmt::format("max(encoder pass {} B, encoder batch held {} B + {}); {}", e.encoder_peak, e.held(), formula, e.formula);
  std::string assumption = std::string("fitted on public vLLM 0.19 logs, 30% set aside (docs/accuracy.md)") +
                           (e.items ? "; the encoder's dummy batch is read from vLLM's source, not fitted" : "") + (e.note.empty() ? "" : "; " + e.note);
  std::string source = kProfileSource;
  if (e.items && !e.source.empty()) source += "; " + e.source;
  if (b.dp_gathered) {
    assumption += "; the data-parallel gathering is read from vLLM's source, not fitted (no data-parallel log measured)";
    source += "; https://github.com/vllm-project/vllm/blob/main/vllm/distributed/device_communicators/all2all.py (AgRsAll2AllManager)";
  }
  if (sp) {
    formula += fmt::format(" + {} B drafter buffers; speculative: drafter pass {} B ({} B target hidden states held + {} B its own pass), "
                           "rejection-sampler logits {} B in the sampler's figure",
                           sp->buffers, sp->pass(), sp->held_hidden, sp->draft_forward, sp->rejection_logits);
    assumption += "; the drafter's pass, buffers and rejection-sampler logits are read from vLLM's source (the drafter's pass uses the fitted forward formula)";
    source += std::string("; ") + kVllmSpecProfileSource;
  }
  return {AllocKind::Activation, "Activation peak (profile run)", b.activation, formula, assumption, source};
}

// Non-torch memory, split where tensor parallelism adds communication buffers: the CUDA context
// and cuBLAS workspace (0.25 GiB, as one GPU prints), and NCCL with vLLM's custom all-reduce.
std::vector<Allocation> non_torch_lines(const VllmBudget& b, uint64_t tp) {
  constexpr uint64_t kContext = (1ull << 30) / 4;
  if (b.shard.experts && b.shard.ranks > tp && b.non_torch > kContext)  // data parallel: the expert-parallel group's communicator
    return {{AllocKind::RuntimeReserve, "Non-torch memory: CUDA context, cuBLAS", kContext, "0.25 GiB, as one GPU prints",
             "fitted on public vLLM 0.19 logs (\"non-torch forward increase memory\")", kBudgetSource},
            {AllocKind::RuntimeReserve, fmt::format("NCCL buffers of the expert-parallel group ({} ranks)", b.shard.ranks), b.non_torch - kContext,
             "taken as a TP group's of as many ranks: 2.08 GiB at 2 + 0.055 GiB a further rank, less the CUDA context",
             "uncertain: fitted on public vLLM 0.19 logs at TP 2-4; no data-parallel log measured",
             "https://github.com/vllm-project/vllm/blob/main/vllm/distributed/parallel_state.py (the EP group)"}};
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

// The rank's weights (less what --cpu-offload-gb moved, `offloaded`); a checkpoint's own vision tower (counted from its config) on a line of its
// own: vLLM loads it with the checkpoint and shards it over TP like the decoder layers. A tower vLLM does not build
// (--limit-mm-per-prompt at 0 for its modalities: vllm_tower_skip.h) is already out of `rank_bytes`, and the line says so.
void add_weight_lines(DeviceAllocation& d, const Model& model, uint64_t rank_bytes, const WeightsFigure& w, uint64_t tp, uint64_t pp, const CpuOffload& offload,
                      const VllmTowerSkip& skip, const VllmExpertShard& shard, uint64_t mtp_left_out) {
  // The checkpoint's MTP layers, which the target does not build (serving_speculative.h mtp_weight_bytes).
  const std::string mtp = mtp_left_out ? fmt::format(" - MTP layers {} B (not built)", format_count(mtp_left_out)) : "";
  if (shard.ranks > tp && shard.experts) {  // data parallel with expert parallel (vllm_data_parallel.h)
    d.add({AllocKind::Weights, "Weights on this rank (routed experts split, the rest whole)", rank_bytes,
           fmt::format("{}{} - routed experts {} B + {} of {} experts a layer ({} B){}", format_count(shard.loaded_bytes), mtp, format_count(shard.routed_bytes),
                       shard.local_experts, shard.experts, format_count(shard.rank_routed), cpu_offload_moved_suffix(offload)),
           fmt::format("the routed experts over the {} expert-parallel ranks (determine_expert_map: the first experts % ranks hold one more); "
                       "attention, embeddings, output head, dense layers and shared experts whole on every data-parallel rank (TP 1); the "
                       "routed experts' bytes are their share of the checkpoint's",
                       shard.ranks),
           std::string(kBudgetSource) +
               "; https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/fused_moe/layer.py (determine_expert_map); "
               "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/fused_moe/config.py (FusedMoEParallelConfig.make)"});
    return;
  }
  if (skip.skipped()) {
    d.add({AllocKind::Weights, "Weights on this rank (" + skip.part + " not built)", rank_bytes,
           fmt::format("({} - {} B) / (tp {} x pp {}){}; {}", format_count(w.bytes), format_count(skip.tier_bytes), tp, pp,
                       cpu_offload_moved_suffix(offload), skip.formula),
           skip.assumption, std::string(kBudgetSource) + "; " + skip.source});
    return;
  }
  const std::string formula = mtp.empty() ? fmt::format("{} / (tp {} x pp {}){}", format_count(w.bytes), tp, pp, cpu_offload_moved_suffix(offload))
                                          : fmt::format("({}{}) / (tp {} x pp {}){}", format_count(w.bytes), mtp, tp, pp, cpu_offload_moved_suffix(offload));
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

// The rotary cos/sin tables (vllm_rope.h): buffers the model builds on the GPU, counted in "Model
// loading took" with the weights, whole on every TP rank.
void add_rope_line(DeviceAllocation& d, const VllmRope& rope) {
  if (rope.bytes == 0) return;
  d.add({AllocKind::Weights, "RoPE cos/sin tables (built with the model)", rope.bytes, rope.formula(),
         "one table per distinct rotary embedding (get_rope shares it over the layers), whole on every TP rank; vLLM counts it in \"Model loading took\"",
         kVllmRopeSource});
}

// Qwen3-VL's DeepStack input buffers (vllm_deepstack.h): allocated with the model on the GPU, counted
// in "Model loading took" with the weights, whole on every TP rank.
void add_deepstack_line(DeviceAllocation& d, const VllmDeepstack& deepstack) {
  if (deepstack.bytes == 0) return;
  d.add({AllocKind::Weights, "DeepStack input buffers (built with the model)", deepstack.bytes, deepstack.formula(),
         "torch.zeros in the model's __init__ under the loader's default dtype and device, whole on every TP rank; vLLM counts them in "
         "\"Model loading took\"",
         kVllmDeepstackSource});
}

// MLA's A-projections, whole on every TP rank (vllm_budget.h vllm_mla_whole_bytes): what the rank
// holds of them beyond its even share of the checkpoint.
void add_mla_line(DeviceAllocation& d, const VllmBudget& b, uint64_t tp) {
  if (b.mla_extra == 0) return;
  d.add({AllocKind::Weights, "MLA A-projections, whole on every TP rank (beyond the even share)", b.mla_extra,
         fmt::format("{} B - {} B / tp {}", format_count(b.mla_whole), format_count(b.mla_whole), tp),
         "kv_a_proj_with_mqa (or the fused q/kv A-projection) and the A-layernorms are ReplicatedLinear / RMSNorm",
         "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/deepseek_v2.py (DeepseekV2MLAAttention)"});
}

constexpr const char* kLoraSource = "https://github.com/vllm-project/vllm/blob/main/vllm/lora/layers/base_linear.py (create_lora_weights)";

// The LoRA slots --enable-lora preallocates on the rank (vllm_lora.h), when LoRA is on.
void add_lora_line(DeviceAllocation& d, const VllmBudget& b, const VllmBudgetSettings& s) {
  if (s.lora.max_loras == 0) return;
  d.add({AllocKind::Weights, fmt::format("LoRA slots ({} adapters of rank {})", s.lora.max_loras, s.lora.max_lora_rank), b.lora.bytes, b.lora.formula,
         b.lora.assumption + "; allocated at load, before the profile run, so the KV cache gets that much less", kLoraSource});
}

// The drafter of --speculative-config (engines/serving_speculative.h) on each rank: its weights at
// the target's TP, and the layer list whose cache the pool holds (the target's and the drafter's).
struct VllmDrafter {
  Drafter drafter;
  uint64_t rank_weights = 0;
  Model cache_layers;  // only `layers` is set: what vllm_kv reads
  Model pass_model;    // the drafter's profile pass: its layers, hidden size and vocabulary (no layers: n-gram)
  std::string method;
  uint64_t num_speculative_tokens = 0;
  VllmSpecInput input() const {
    VllmSpecInput in;
    in.on = true;
    in.method = method;
    in.drafter = pass_model.layers.empty() ? nullptr : &pass_model;
    in.rank_weights = rank_weights;
    in.cache_model = &cache_layers;
    in.num_speculative_tokens = num_speculative_tokens;
    return in;
  }
};

// Pipeline stages: the pool is the smallest number of blocks any stage's free memory holds, so a
// later stage (the last: output head and dummy sampler) can bound it below rank 0's own.
std::string pipeline_pool_text(const VllmBudget& b) {
  if (b.stages.empty()) return "";
  std::string per_stage = fmt::format("stage 0 {} blocks", format_count(b.own_blocks));
  for (const auto& st : b.stages)
    per_stage += fmt::format(", stage {} {} blocks ({} non-KV)", st.stage, format_count(st.kv.num_blocks), format_count(st.non_kv_total));
  return b.kv_stage ? fmt::format("; every pipeline stage gets the smallest stage's blocks ({}): stage {}'s, so this rank's cache tensors are {} blocks",
                                  per_stage, b.kv_stage, format_count(b.kv.num_blocks))
                    : fmt::format("; every pipeline stage gets the smallest stage's blocks ({}): this rank's", per_stage);
}

// The CUDA graph line's formula (vllm_graphs.h), `drafter_layers` of the layers being a drafter's.
std::string graph_text(const VllmGraphCapture& g, uint64_t drafter_layers) {
  return fmt::format("{} MiB pool + ({} piecewise + {} full decode capture sizes) x ({} layers on this rank{} x {} KiB{})", kVllmGraphPool >> 20,
                     g.sizes, g.full_sizes, g.layers - drafter_layers,
                     drafter_layers ? fmt::format(" + {} drafter layers (captured in the same loop)", drafter_layers) : "", kVllmGraphLayer >> 10,
                     g.moe_layers ? fmt::format(" + {} routed-expert layers x {} KiB", g.moe_layers, kVllmGraphMoeLayer >> 10) : "");
}

std::optional<VllmDrafter> vllm_drafter(const EngineRequest& r, const VllmBudgetSettings& bs, EngineAnswer& a) {
  const ServingSpeculative& spec = r.companions.speculative;
  if (!spec.on()) {
    if (r.command && r.command->serving_speculative.on())
      a.notes.push_back("the command's speculative decoding is not counted here: its draft model is not in the catalogue (`estimate --draft FILE` reads any model and adds its weights and cache)");
    return std::nullopt;
  }
  const uint64_t tp = bs.kv.tensor_parallel;
  const std::string flag = spec.source_flag.empty() ? "--speculative-config" : spec.source_flag;
  if (spec.draft_tensor_parallel_size && *spec.draft_tensor_parallel_size != tp)
    throw InputError(flag, fmt::format("draft_tensor_parallel_size {}: vLLM v1 runs the drafter at the target's tensor_parallel_size (draft_model.py "
                                       "_raise_if_draft_tp_mismatch); accepted: {}",
                                       *spec.draft_tensor_parallel_size, tp));
  if (bs.kv.pipeline_parallel > 1 && spec.method != "ngram")
    throw InputError(flag, "with pipeline parallelism is not modelled (vLLM builds the drafter on the last stage only)");
  VllmDrafter v;
  v.drafter = serving_drafter(*r.model, r.companions.draft.get(), spec, bs.kv.dtype);
  v.rank_weights = ceil_div(v.drafter.weight_bytes, tp);
  v.cache_layers.layers = r.model->layers;
  v.cache_layers.layers.insert(v.cache_layers.layers.end(), v.drafter.layers.begin(), v.drafter.layers.end());
  v.method = spec.method;
  // config/speculative.py: without num_speculative_tokens an MTP drafter drafts n_predict tokens,
  // the model's MTP layer count.
  v.num_speculative_tokens = spec.num_speculative_tokens ? spec.num_speculative_tokens : spec.method == "mtp" ? v.drafter.layers.size() : 0;
  v.pass_model.layers = v.drafter.layers;
  const Model* draft = r.companions.draft.get();
  v.pass_model.hidden = draft && spec.method != "mtp" ? draft->hidden : r.model->hidden;  // MTP layers work at the target's width
  v.pass_model.vocab = draft && spec.method != "mtp" ? draft->vocab : r.model->vocab;
  a.settings.push_back({"speculative_method", spec.method});
  if (v.num_speculative_tokens) a.settings.push_back({"num_speculative_tokens", v.num_speculative_tokens});
  a.notes.push_back(fmt::format("drafter: {} ({}; {}); its layers join the KV cache spec, so every token of the pool holds their K/V too; "
                                "its profile pass, persistent buffers and CUDA graphs and the rejection sampler's dummy run count too",
                                v.drafter.name, v.drafter.weight_formula, v.drafter.layers_formula));
  return v;
}

void add_draft_weight_line(DeviceAllocation& d, const VllmDrafter& v, uint64_t tp) {
  if (v.rank_weights == 0) return;
  d.add({AllocKind::Weights, "Draft weights on this rank (" + v.drafter.name + ")", v.rank_weights, fmt::format("{} / tp {}", v.drafter.weight_formula, tp),
         "loaded with the target before the profile run (gpu_model_runner.py load_model: drafter.load_model), so the KV cache gets that much less",
         kVllmSpecSource});
}

constexpr const char* kOffloadSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/offloader/uva.py (UVAOffloader._maybe_offload_to_cpu, _offload_param); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/config/offload.py (cpu_offload_gb, per GPU; cpu_offload_params); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/utils.py (make_layers: wrap_modules)";
constexpr const char* kPrefetchSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/offloader/prefetch.py (PrefetchOffloader.wrap_modules, StaticBufferPool, "
    "start_onload_to_static); https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/offloader/base.py (create_offloader); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/config/offload.py (PrefetchOffloadConfig)";
constexpr const char* kStagingSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/offloader/prefetch.py (PrefetchOffloader.post_init: StaticBufferPool); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_model_runner.py (load_model: post_init after \"Model loading took\"); "
    "https://github.com/vllm-project/vllm/blob/main/vllm/utils/mem_utils.py (memory_profiling: total_consumed)";

// --cpu-offload-gb / the prefetch offloader: what it moves of rank 0's decoder layers
// (serving_cpu_offload.h), laid out as the model classes create them (sglang_weights.h: the same
// QKV / MLP / norm order in vLLM, with vLLM's parameter names for --cpu-offload-params).
CpuOffload vllm_cpu_offload(const Model& model, uint64_t tier_bytes, const VllmBudgetSettings& bs, std::vector<std::string>& notes) {
  const OffloadRule rule = vllm_offload_rule(bs.cpu_offload_cap, bs.offload);
  if (!rule.on()) return {};
  const std::string flag = rule.prefetch() ? "--offload-group-size" : "--cpu-offload-gb";  // prefetch needs a group size (engine_run.cpp)
  // Online quantization replaces the parameters after the offloader walked them as created:
  // https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/model_loader/utils.py
  // (device_loading_context re-offloads a replaced UVA parameter; new ones stay on the GPU) and
  // offloader/prefetch.py (sync_cpu_storage after process_weights_after_loading). Not laid out: refused.
  if (!bs.quantization.empty())
    throw InputError(flag, "with --quantization " + bs.quantization +
                               " is not modelled: the offloader picks parameters by their bytes as created, before online quantization, and "
                               "quantizing replaces them afterwards (model_loader/utils.py device_loading_context puts a UVA-offloaded one back in host "
                               "memory at its new size, new scale tensors stay on the GPU; the prefetch offloader re-reads its host copies after "
                               "loading), which is not laid out here; give one of them, or a checkpoint already quantized");
  const CpuOffload o = sglang_rank_weights(model, tier_bytes, bs.kv.tensor_parallel, bs.kv.pipeline_parallel, bs.kv.dtype, 1, false, rule).offload;
  if (!rule.segments.empty() && o.matched_params == 0)
    notes.push_back(fmt::format("{}: no parameter of a decoder layer matches {}: nothing moves (segments of names within the layer such as "
                                "mlp.gate_up_proj.weight, self_attn.qkv_proj.weight, mlp.experts.w13_weight; several are given space-separated)",
                                rule.prefetch() ? "--offload-params" : "--cpu-offload-params", fmt::join(rule.segments, " ")));
  return o;
}

void add_offload_host(EngineAnswer& a, const CpuOffload& o, uint64_t ranks, const EngineRequest& r) {
  if (o.prefetch()) {
    add_cpu_offload_host(a, o, ranks, r, kPrefetchSource,
                         fmt::format(", copied (not read in place) into static GPU buffers on a side stream, {} layer(s) ahead, before each offloaded "
                                     "layer runs, at every forward pass",
                                     o.prefetch_step));
    return;
  }
  add_cpu_offload_host(a, o, ranks, r, kOffloadSource,
                       ", which the GPU reads in place "
                       "(UVA, zero-copy) at every forward pass, over the host link; CUDA graphs and torch.compile stay on");
}

// The prefetch offloader's StaticBufferPool on the rank (0 B with the UVA backend: no line).
void add_staging_line(DeviceAllocation& d, const CpuOffload& o) {
  if (!o.staging) return;
  d.add({AllocKind::Weights, "Prefetch offload staging buffers (--offload-prefetch-step)", o.staging,
         fmt::format("prefetch_step {} x {} B: one slot per step of each of the {} distinct offloaded parameters (name and size)", o.prefetch_step,
                     format_count(o.staging / std::max<uint64_t>(1, o.prefetch_step)), o.staging_keys),
         "allocated in post_init after the weights are measured and before the profile run, whose non-KV figure (today's main: the fall in free "
         "memory) counts them, so the KV cache gets that much less; vLLM versions that add the weights, the torch peak and non-torch memory "
         "instead count them nowhere, and the GPU holds them beyond gpu_memory_utilization",
         kStagingSource});
}

}  // namespace

EngineAnswer vllm(const EngineRequest& r, const EngineRun& run) {
  const Model& model = *r.model;
  const Scenario& s = r.scenario;
  const WeightsFigure w = resolve_weights(model, s.quant);
  VllmBudgetSettings bs = run.vllm;
  // --dtype float32 doubles a 16-bit checkpoint; a tower --limit-mm-per-prompt turns off is not built (vllm_tower_skip.h).
  const VllmTowerSkip skip = vllm_tower_skip(model, w, bs.kv.dtype, bs.mm_limits);
  bs.weight_bytes = checked_sub(loaded_weight_bytes(model, w.bytes, bs.kv.dtype), skip.bytes);
  const uint64_t tp = bs.kv.tensor_parallel, pp = bs.kv.pipeline_parallel, dp = std::max<uint64_t>(1, bs.data_parallel);
  if (dp > 1 && (tp > 1 || pp > 1))
    throw InputError("--data-parallel-size", fmt::format("{} with tensor parallel {} and pipeline parallel {} is not modelled; accepted: data parallel with "
                                                         "expert parallel at TP 1 (one GPU a DP rank)",
                                                         dp, tp, pp));
  std::vector<std::string> offload_notes;
  const CpuOffload offload = vllm_cpu_offload(model, w.bytes, bs, offload_notes);
  bs.cpu_offloaded = offload.bytes;
  bs.offload_staging = offload.staging;

  EngineAnswer a;
  a.engine = EngineKind::Vllm;
  a.version_modelled = kVersion;
  a.settings = {{"gpu_memory_utilization", bs.gpu_memory_utilization}, {"max_model_len", bs.kv.max_model_len},
                {"max_num_batched_tokens", bs.max_num_batched_tokens}, {"kv_cache_dtype", bs.kv.kv_cache_dtype}, {"block_size", bs.kv.block_size},
                {"tensor_parallel_size", tp}, {"pipeline_parallel_size", pp}, {"weights", w.tier}};
  if (dp > 1) {
    a.settings.push_back({"data_parallel_size", dp});
    a.settings.push_back({"enable_expert_parallel", std::string("true")});
  }
  // vLLM refuses --enable-lora for a model class without SupportsLoRA (vllm_lora_refusal).
  if (bs.lora.max_loras) {
    if (const auto refusal = vllm_lora_refusal(model)) throw InputError("--enable-lora", *refusal);
  }
  if (bs.lora.max_loras) {
    a.settings.push_back({"max_loras", bs.lora.max_loras});
    a.settings.push_back({"max_lora_rank", bs.lora.max_lora_rank});
  }
  for (const auto& n : run.notes) a.notes.push_back(n);
  for (const auto& n : offload_notes) a.notes.push_back(n);
  if (offload.prefetch()) {
    a.settings.push_back({"offload_backend", std::string("prefetch")});
    a.settings.push_back({"offload_group_size", offload.group_size});
    a.settings.push_back({"offload_num_in_group", offload.num_in_group});
    a.settings.push_back({"offload_prefetch_step", offload.prefetch_step});
  }
  if (!offload.segments.empty()) a.settings.push_back({offload.prefetch() ? "offload_params" : "cpu_offload_params", fmt::format("{}", fmt::join(offload.segments, " "))});
  if (const std::string n = vllm_lora_adapters_note(bs.lora); !n.empty()) a.notes.push_back(n);
  const std::optional<VllmDrafter> drafter = vllm_drafter(r, bs, a);
  const Model& cache_model = drafter ? drafter->cache_layers : model;  // the layers whose K/V a token holds

  const uint64_t ranks = checked_product({tp, pp, dp});
  // Data parallel: each rank's scheduler and cache serve ceil(sequences / dp) of the sequences.
  const uint64_t rank_sequences = vllm_max_num_seqs_for(s.sequences, dp);
  auto name_of = [&](uint64_t i) { return dp > 1 ? fmt::format("rank {} (dp{})", i, i) : rank_name(i, tp); };
  if (bs.card_bytes == 0) {
    // No card: what the scenario needs on each rank; vLLM itself would take all it is allowed.
    VllmKv kv = vllm_kv(cache_model, bs.kv);
    const uint64_t need =
        checked_add(checked_product({kv.bytes_per_token, s.context, rank_sequences}), checked_mul(kv.state_bytes_per_seq, rank_sequences));
    VllmBudgetSettings probe = bs;
    probe.card_bytes = 1;  // the non-KV parts do not depend on the card
    const VllmSpecBudget sb = vllm_budget_speculative(model, probe, drafter ? drafter->input() : VllmSpecInput{});
    const VllmBudget& b = sb.budget;
    if (dp > 1) a.notes.push_back(vllm_data_parallel_note(dp, b.shard));
    for (uint64_t i = 0; i < ranks; ++i) {
      DeviceAllocation d;
      d.name = name_of(i);
      if (dp > 1 && b.shard.experts) {
        add_weight_lines(d, model, b.weights - std::min(b.weights, b.rope.bytes + b.deepstack.bytes), w, tp, pp, offload, skip, b.shard, b.mtp_left_out);
      } else {
        const uint64_t mtp = mtp_weight_bytes(model, w.bytes, false);  // not built (serving_speculative.h)
        Allocation weights = even_weights_line(checked_sub(checked_sub(w.bytes, skip.tier_bytes), mtp), tp, pp, kBudgetSource);
        if (mtp) weights.formula += fmt::format("; the checkpoint's {} B less its MTP layers, {} B, not built", format_count(w.bytes), format_count(mtp));
        if (skip.skipped()) {
          weights.label += " (" + skip.part + " not built)";
          weights.formula += "; " + skip.formula;
          weights.assumption = skip.assumption;
          weights.source += "; " + skip.source;
        }
        if (offload.bytes) {
          weights.bytes -= std::min(weights.bytes, offload.bytes);
          weights.formula += cpu_offload_moved_suffix(offload);
        }
        d.add(std::move(weights));
      }
      add_rope_line(d, b.rope);
      add_deepstack_line(d, b.deepstack);
      add_staging_line(d, offload);
      if (drafter) add_draft_weight_line(d, *drafter, tp);
      add_lora_line(d, b, bs);
      d.add(activation_line(model, b, bs, drafter ? &sb.spec : nullptr));
      for (auto& l : non_torch_lines(b, tp)) d.add(std::move(l));
      d.add(scenario_kv_line(need,
                             fmt::format("{} B per token x {} tokens x {} sequence(s){}{}", kv.bytes_per_token, s.context, rank_sequences,
                                         dp > 1 ? fmt::format(" on this rank (ceil({} / dp {}))", s.sequences, dp) : "",
                                         kv.state_bytes_per_seq ? fmt::format(" + {} B state per sequence", kv.state_bytes_per_seq) : ""),
                             "vLLM would give the KV cache all of gpu_memory_utilization x card that is left", kKvSource));
      a.devices.push_back(std::move(d));
    }
    add_offload_host(a, offload, ranks, r);
    a.notes.push_back(no_card_note("vLLM"));
    finish(a);
    return a;
  }
  // The drafter's weights load with the target's, its profile pass, buffers and graphs join the
  // budget, and its layers join the cache spec (vllm_speculative_budget.h).
  const VllmSpecBudget sb = vllm_budget_speculative(model, bs, drafter ? drafter->input() : VllmSpecInput{});
  const VllmBudget& b = sb.budget;
  // The batch limits as vLLM resolves them for this card (0 in the request: vLLM's default).
  for (auto& st : a.settings)
    if (st.name == "max_num_batched_tokens") st.value = b.max_num_batched_tokens;
  a.settings.push_back({"max_num_seqs", b.max_num_seqs});
  if (dp > 1) a.notes.push_back(vllm_data_parallel_note(dp, b.shard));
  for (uint64_t i = 0; i < ranks; ++i) {
    DeviceAllocation d;
    d.name = name_of(i);
    d.capacity = bs.card_bytes;
    const uint64_t built = checked_add(checked_add(b.rope.bytes, b.deepstack.bytes), b.mla_extra);  // on their own lines
    add_weight_lines(d, model, b.weights - std::min(b.weights, built), w, tp, pp, offload, skip, b.shard, b.mtp_left_out);
    add_rope_line(d, b.rope);
    add_deepstack_line(d, b.deepstack);
    add_mla_line(d, b, tp);
    add_staging_line(d, offload);
    if (drafter) add_draft_weight_line(d, *drafter, tp);
    add_lora_line(d, b, bs);
    d.add(activation_line(model, b, bs, drafter ? &sb.spec : nullptr));
    for (auto& l : non_torch_lines(b, tp)) d.add(std::move(l));
    d.add({AllocKind::CudaGraphs, "CUDA graphs (captured after the KV cache)", b.cuda_graphs,
           graph_text(vllm_graph_capture(model, pp, drafter ? drafter->input().drafter : nullptr, b.max_num_seqs, b.max_num_batched_tokens,
                                         drafter ? 1 + drafter->num_speculative_tokens : 1),
                      sb.spec.graph_layers),
           "uncertain: fitted on public vLLM 0.19 logs (\"Graph capturing finished ... took\"), 30% set aside; outside gpu_memory_utilization in "
           "vLLM 0.19, profiled inside it from vLLM 0.21",
           "https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_model_runner.py (capture_model, profile_cudagraph_memory); "
           "https://github.com/vllm-project/vllm/blob/main/vllm/config/vllm.py (_set_cudagraph_sizes)"});
    d.add({AllocKind::Kv, fmt::format("KV cache pool: {} tokens", b.kv.tokens), b.kv_allocated,
           fmt::format("{} x card {} - weights{}{} - activation - non-torch{}{}", bs.gpu_memory_utilization, format_count(bs.card_bytes),
                       drafter && drafter->rank_weights ? " - draft weights" : "", offload.staging ? " - prefetch staging buffers" : "",
                       drafter ? fmt::format("; {} B a token over the target's and the drafter's layers", b.kv.bytes_per_token) : "",
                       pipeline_pool_text(b)),
           b.kv.note.empty() ? "vLLM gives the cache everything left of its share of the card" : b.kv.note, kKvSource});
    // vLLM refuses to start when one request of max_model_len does not fit in the pool.
    d.fits = b.available_kv > 0 && b.kv.tokens >= bs.kv.max_model_len && b.kv.max_concurrency >= static_cast<double>(rank_sequences);
    a.devices.push_back(std::move(d));
  }
  a.kv_tokens = b.kv.tokens;  // a rank's pool: one sequence lives on one rank
  a.max_concurrency = b.kv.max_concurrency * static_cast<double>(dp);  // every DP rank's pool serves its own sequences
  if (b.available_kv == 0) a.notes.push_back("no memory left for the KV cache: vLLM stops with 'No available memory for the cache blocks'");
  else if (b.kv.tokens < bs.kv.max_model_len)
    a.notes.push_back(fmt::format("the pool holds {} tokens, fewer than max_model_len {}: vLLM refuses to start", b.kv.tokens, bs.kv.max_model_len));
  add_offload_host(a, offload, ranks, r);
  finish(a);
  return a;
}

}  // namespace vc::engines
