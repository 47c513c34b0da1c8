#include "engines/vllm_budget.h"

#include <algorithm>
#include <cmath>

#include "core/checked.h"
#include "core/error.h"
#include "engines/serving_dtype.h"
#include "engines/serving_speculative.h"
#include "engines/vllm_deepstack.h"
#include "engines/vllm_encoder.h"
#include "engines/vllm_graphs.h"
#include "engines/vllm_pipeline.h"
#include "engines/vllm_rope.h"
#include "engines/vllm_speculative_budget.h"

namespace vc {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kMiB = 1ull << 20;

// The widest dense feed-forward's activation values per token on one rank (dense layers, or the
// shared experts of MoE layers): a gated MLP keeps gate_up_proj's output (2 x width / tp) while
// SiluAndMul writes its product (width / tp), 3 x width / tp; a non-gated one (Phi's PhiMLP fc1,
// Nemotron-H's NemotronHMLP up_proj, vllm/model_executor/models/phi.py, nemotron_h.py) keeps fc1's
// output (width / tp) while the activation writes a new tensor of the same size, 2 x width / tp.
uint64_t dense_ffn_values(const Model& m, uint64_t tp) {
  uint64_t v = 0;
  for (const auto& l : m.layers) {
    const auto& f = l.feed_forward;
    const uint64_t w = (f.kind == FeedForwardKind::Dense ? f.dense_width : f.shared_width) / tp;
    v = std::max(v, checked_add(f.up_rows(w), w));
  }
  return v;
}

// Weights on one rank: a TP share of everything without pipelining; with pipeline stages
// (vllm_pipeline.h) the stage's layers' share of the body, plus the input embedding on the first
// stage and the output head on the last. Rank 0's is the figure vLLM prints.
uint64_t stage_weights(const Model& m, uint64_t total, uint64_t tp, const std::vector<VllmStage>& stages, std::size_t stage, uint64_t value_bytes) {
  if (stages.size() == 1) return ceil_div(total, tp);
  auto params = [&](ParamClass c) {
    auto it = m.params.by_class.find(c);
    return it == m.params.by_class.end() ? uint64_t{0} : it->second;
  };
  const uint64_t embed = checked_mul(params(ParamClass::Embedding), value_bytes);
  const uint64_t head = checked_mul(params(ParamClass::OutputHead), value_bytes);
  const uint64_t body = total > embed + head ? total - embed - head : 0;
  const uint64_t stage_body = static_cast<uint64_t>(static_cast<u128>(body) * stages[stage].layers / m.layers.size());
  const uint64_t ends = checked_add(stage == 0 ? embed : 0, stage + 1 == stages.size() ? head : 0);
  return ceil_div(checked_add(ends, stage_body), tp);
}

}  // namespace

// Fused-MoE workspaces for a batch of T tokens on one rank (vllm/model_executor/layers/fused_moe:
// workspace13 of T x top_k x max(w1 rows, K) and workspace2 of T x top_k x N values, N = expert width
// / tp, K = hidden, w1 rows 2N for gated experts and N for non-gated ones (Nemotron-H's relu2_no_mul:
// adjust_N_for_activation "For *_no_mul activations ... output size equals input size (N)"); they
// stay allocated after the forward pass, so they add to the sampler's peak.
uint64_t vllm_moe_workspace(const Model& m, uint64_t tokens, uint64_t tp, uint64_t value_bytes) {
  uint64_t best = 0;
  for (const auto& l : m.layers) {
    const auto& f = l.feed_forward;
    if (f.kind != FeedForwardKind::MoE) continue;
    const uint64_t n = f.expert_width / tp;
    best = std::max(best, checked_product({tokens, f.experts_per_token, checked_add(std::max(f.up_rows(n), m.hidden), n), value_bytes}));
  }
  return best;
}

// The profile's forward pass (fitted on the fitted part of tests/data/engine-logs.json;
// docs/accuracy.md): T x (the widest dense feed-forward's values, dense_ffn_values: 3 x width / tp
// gated, 2 x width / tp not, + 4 x hidden) values (first-projection and activation outputs,
// residual and norms).
uint64_t vllm_forward_peak(const Model& m, uint64_t tokens, uint64_t tp, uint64_t value_bytes) {
  return checked_product({tokens, checked_add(dense_ffn_values(m, tp), checked_mul(4, m.hidden)), value_bytes});
}

uint64_t vllm_quantized_weight_bytes(const Model& model, uint64_t loaded_bytes, const std::string& quantization) {
  if (quantization.empty()) return loaded_bytes;
  if (quantization != "fp8") throw InputError("--quantization", "'" + quantization + "' is modelled only as the checkpoint stores it; online quantization modelled: fp8");
  uint64_t bytes = 0;
  for (const auto& [cls, n] : model.params.by_class) {
    const bool linear = cls == ParamClass::Attention || cls == ParamClass::DenseMlp || cls == ParamClass::RoutedExperts || cls == ParamClass::SharedExperts;
    bytes = checked_add(bytes, checked_mul(n, linear ? 1 : 2));
  }
  return bytes;
}

uint64_t vllm_mla_whole_bytes(const Model& model, uint64_t layers, uint64_t linear_milli_bytes, uint64_t norm_bytes) {
  uint64_t linear = 0, norms = 0;
  for (uint64_t i = 0; i < std::min<uint64_t>(layers, model.layers.size()); ++i) {
    const AttentionSpec& a = model.layers[i].attention;
    if (a.kind != AttentionKind::Latent || a.latent_rank == 0) continue;
    const uint64_t q = a.query_rank, kv = a.latent_rank, rope = a.rope_dim;
    linear = checked_add(linear, checked_mul(model.hidden, q + kv + rope));  // fused_qkv_a_proj or kv_a_proj_with_mqa
    norms = checked_add(norms, q + kv);                                        // q_a_layernorm (with a query rank), kv_a_layernorm
  }
  return checked_add(static_cast<uint64_t>(static_cast<u128>(linear) * linear_milli_bytes / 1000), checked_mul(norms, norm_bytes));
}

VllmBudget vllm_budget(const Model& model, const VllmBudgetSettings& s) { return vllm_budget_speculative(model, s, VllmSpecInput{}).budget; }

VllmSpecBudget vllm_budget_speculative(const Model& model, const VllmBudgetSettings& s, const VllmSpecInput& spec) {
  if (!(s.gpu_memory_utilization > 0 && s.gpu_memory_utilization <= 1)) throw InputError("--gpu-memory-utilization", "must be above 0 and at most 1");
  if (s.card_bytes == 0) throw InputError("--gpu-memory", "vLLM's budget needs the card's memory, e.g. 80GB");
  if (s.max_num_batched_tokens > (1u << 22)) throw InputError("--max-num-batched-tokens", "must be from 1 to 4,194,304");
  if (s.max_num_seqs > (1u << 20)) throw InputError("--max-num-seqs", "must be from 1 to 1,048,576");
  // The degrees divide every share below: refused here, before any of them (vllm_kv checks them too).
  if (s.kv.tensor_parallel == 0 || s.kv.tensor_parallel > 1024) throw InputError("-tp", "must be from 1 to 1024");
  if (s.data_parallel > 1024) throw InputError("--data-parallel-size", "must be from 1 to 1024");
  VllmBudget b;
  // Defaults for `vllm serve` (vllm/engine/arg_utils.py): cards of 70 GiB and more batch 8,192
  // tokens and 1,024 sequences, smaller ones 2,048 and 256 (the A100 80GB takes the small ones too).
  const bool big_card = s.card_bytes >= 70 * kGiB;
  b.max_num_batched_tokens = s.max_num_batched_tokens ? s.max_num_batched_tokens : (big_card ? 8192 : 2048);
  b.max_num_seqs = s.max_num_seqs ? s.max_num_seqs : (big_card ? 1024 : 256);
  b.requested = static_cast<uint64_t>(std::floor(s.gpu_memory_utilization * static_cast<double>(s.card_bytes)));
  const uint64_t tp = s.kv.tensor_parallel, pp = s.kv.pipeline_parallel, dp = std::max<uint64_t>(1, s.data_parallel);
  const uint64_t loaded = vllm_quantized_weight_bytes(model, s.weight_bytes, s.quantization);
  // The MTP layers a checkpoint carries are not built (mtp_weight_bytes); an MTP drafter loads them.
  b.mtp_left_out = mtp_weight_bytes(model, loaded, false);
  const std::vector<VllmStage> stages = vllm_pipeline_stages(model.layers.size(), pp);
  const uint64_t built = loaded - std::min(loaded, b.mtp_left_out);
  b.weights = stage_weights(model, built, tp, stages, 0, serving_dtype_bytes(s.kv.dtype));
  // Data parallel with expert parallel (vllm_data_parallel.h): a DP rank holds everything of its TP
  // share but the routed experts, of which it holds its local ones (rank 0: the most).
  if (dp > 1) {
    b.shard = vllm_expert_shard(model, loaded, checked_mul(dp, tp));
    const uint64_t routed_tp_share = ceil_div(b.shard.routed_bytes, tp);
    b.weights = checked_add(b.weights - std::min(b.weights, routed_tp_share), b.shard.rank_routed);
  }
  // MLA's A-projections are whole on every TP rank (vllm_mla_whole_bytes): the rank holds them
  // beyond the even share counted above. Their bytes per weight: one with --quantization fp8 (the
  // replicated linears are quantized online too); the checkpoint's own for an attention stored
  // below 16 bits (its attention bytes over its attention weights, scales included); else --dtype's.
  if (tp > 1) {
    const uint64_t value_bytes = serving_dtype_bytes(s.kv.dtype);
    uint64_t milli = checked_mul(value_bytes, 1000);
    const auto attn = model.params.by_class.find(ParamClass::Attention);
    const auto attn_bytes = model.native.bytes_by_class.find(ParamClass::Attention);
    if (s.quantization == "fp8") milli = 1000;
    else if (attn != model.params.by_class.end() && attn->second > 0 && attn_bytes != model.native.bytes_by_class.end() && attn_bytes->second < checked_mul(attn->second, 2))
      milli = static_cast<uint64_t>(static_cast<u128>(attn_bytes->second) * 1000 / attn->second);
    b.mla_whole = vllm_mla_whole_bytes(model, stages[0].layers, milli, value_bytes);
    b.mla_extra = b.mla_whole - b.mla_whole / tp;
    b.weights = checked_add(b.weights, b.mla_extra);
  }
  // The rotary tables the rank's layers build with the model, whole on every TP rank (vllm_rope.h).
  b.rope = vllm_rope(model, stages[0].layers, serving_dtype_bytes(s.kv.dtype));
  b.weights = checked_add(b.weights, b.rope.bytes);
  b.weights -= std::min(b.weights, s.cpu_offloaded);  // in pinned host memory (serving_cpu_offload.h)
  // Qwen3-VL's DeepStack buffers, max_num_batched_tokens rows a level, built with the model on the
  // GPU (vllm_deepstack.h); buffers, not parameters, so --cpu-offload-gb leaves them there.
  b.deepstack = vllm_deepstack(model, b.max_num_batched_tokens, serving_dtype_bytes(s.kv.dtype), s.mm_limits);
  b.weights = checked_add(b.weights, b.deepstack.bytes);

  // Profile run (fitted on the fitted part of tests/data/engine-logs.json; docs/accuracy.md):
  // forward: vllm_forward_peak; sampler: the T hidden states kept + 14.55 B per (sequence x vocab
  // entry), about three and a half fp32 copies of the [max_num_seqs, vocab] logits; plus 50 MiB.
  const uint64_t T = b.max_num_batched_tokens;
  const uint64_t value = serving_dtype_bytes(s.kv.dtype);
  b.forward_peak = vllm_forward_peak(model, T, tp, value);
  b.moe_workspace = vllm_moe_workspace(model, T, tp, value);
  // Data parallel: the MoE layers work on every DP rank's T tokens gathered (allgather_reducescatter,
  // vllm_data_parallel.h): the fused-MoE workspaces for dp x T rows, and the gathered input and the
  // experts' output, (dp - 1) x T rows each beyond the rank's own, live in the forward pass.
  if (dp > 1 && b.moe_workspace) {
    b.moe_workspace = vllm_moe_workspace(model, checked_mul(dp, T), tp, value);
    b.dp_gathered = checked_product({2, dp - 1, T, model.hidden, value});
    b.forward_peak = checked_add(b.forward_peak, b.dp_gathered);
  }
  // The dummy sampler runs on the last pipeline stage only; rank 0 of a pipeline sends its hidden
  // states and residual on instead (a later stage receives them into buffers of the same size).
  const uint64_t full_sampler_peak = checked_add(checked_product({T, model.hidden, value}), checked_product({b.max_num_seqs, model.vocab, 1455}) / 100);
  if (pp > 1) b.forward_peak = checked_add(b.forward_peak, checked_product({T, 2 * model.hidden, value}));
  else b.sampler_peak = full_sampler_peak;
  // Speculative decoding (vllm_speculative_budget.h, read from vLLM's source, not fitted): the
  // drafter's pass runs after the target's with the target's hidden states held, so the forward
  // peak is the larger of the two passes; the rejection sampler's dummy run holds [2 x
  // max_num_seqs, vocab] logits while the same sampler samples the bonus tokens, so the sampler's
  // peak grows by them; the proposer's persistent buffers stay allocated throughout.
  VllmSpecProfile sp;
  if (spec.on) {
    if (spec.drafter) {
      const uint64_t aux = spec.method == "eagle3" ? 3 : 0;  // EAGLE-3 reads three auxiliary hidden states of the target
      sp.held_hidden = checked_product({T, model.hidden, value, 1 + aux});
      sp.draft_forward = vllm_forward_peak(*spec.drafter, T, tp, value);
      sp.draft_moe_workspace = vllm_moe_workspace(*spec.drafter, T, tp, value);
      sp.buffers = checked_product({2, T, spec.drafter->hidden, value});
      sp.graph_layers = spec.drafter->layers.size();
    }
    if (b.sampler_peak) sp.rejection_logits = checked_product({2, b.max_num_seqs, model.vocab, value});
    b.forward_peak = std::max(b.forward_peak, sp.pass());
    b.moe_workspace = std::max(b.moe_workspace, sp.draft_moe_workspace);
    b.sampler_peak = checked_add(b.sampler_peak, sp.rejection_logits);
  }
  // A multimodal model encodes its dummy images first; their pixels and encoder outputs stay
  // allocated through the decoder pass, so the peak is the larger of the encoder's and the
  // decoder's on top of them (vllm_encoder.h).
  const VllmEncoderProfile encoder = vllm_encoder_profile(model, T, b.max_num_seqs, s.kv.max_model_len, tp, value, s.mm_limits);
  b.activation = checked_add(checked_add(encoder.peak_with(checked_add(b.moe_workspace, std::max(b.forward_peak, b.sampler_peak))), 50 * kMiB), sp.buffers);
  // Non-torch memory: 0.25 GiB on one GPU (CUDA context, cuBLAS workspace); with tensor
  // parallelism NCCL and custom all-reduce buffers make it 2.08 GiB at TP 2, 0.055 GiB more per
  // further rank; a pipeline without TP 0.07 GiB on rank 0 (fitted, docs/accuracy.md).
  // Data parallel: the expert-parallel group's communicator spans dp x tp ranks, taken as a TP group's of that size.
  const uint64_t comm_ranks = checked_mul(tp, b.shard.experts ? dp : 1);
  if (comm_ranks > 1) b.non_torch = checked_add(2080 * kGiB / 1000, checked_product({comm_ranks - 2, 55, kGiB}) / 1000);
  else b.non_torch = pp > 1 ? 7 * kGiB / 100 : kGiB / 4;
  b.lora = vllm_lora_slots(model, s.lora, tp, pp, value);
  b.non_kv_total = checked_add(checked_add(checked_add(checked_add(b.weights, b.lora.bytes), b.activation), b.non_torch), spec.on ? spec.rank_weights : 0);
  // The prefetch offloader's static buffers: allocated in post_init, after "Model loading took" and
  // before the profile run, whose non-KV figure is the fall in free memory since the worker began
  // (vllm/utils/mem_utils.py memory_profiling: total_consumed), so the KV cache gets them less.
  b.offload_staging = s.offload_staging;
  b.non_kv_total = checked_add(b.non_kv_total, b.offload_staging);
  // CUDA graphs: vLLM 0.19 captures them after the KV cache is allocated, in the memory
  // gpu_memory_utilization leaves free (vLLM 0.21 and later profile them inside the budget
  // instead): the rank's pipeline stage and a drafter's layers, for each capture size
  // (vllm_graphs.h: the structure from vLLM's source, three constants fitted, docs/accuracy.md).
  b.cuda_graphs = vllm_cuda_graphs(vllm_graph_capture(model, pp, spec.on ? spec.drafter : nullptr, b.max_num_seqs, b.max_num_batched_tokens,
                                                      spec.on ? 1 + spec.num_speculative_tokens : 1));
  b.available_kv = b.requested > b.non_kv_total ? b.requested - b.non_kv_total : 0;
  VllmSettings kv = s.kv;
  kv.available_kv_bytes = b.available_kv;
  const Model& cache_model = spec.on && spec.cache_model ? *spec.cache_model : model;
  if (b.available_kv) b.kv = vllm_kv(cache_model, kv);
  b.kv_allocated = b.available_kv;
  b.own_blocks = b.kv.num_blocks;
  // Pipeline stages: every stage profiles its own memory, and the engine gives each the smallest
  // number of blocks any stage can hold (vllm/v1/core/kv_cache_utils.py get_kv_cache_configs:
  // "Change the num_blocks of each rank to the smallest among all ranks", shrinking the others'
  // tensors). A later stage holds its layers' weights (the last the output head too), the same
  // forward pass and stage-boundary buffers, and the last runs the dummy sampler over
  // max_num_seqs rows, which rank 0 does not; the encoder's pass is taken as the first stage's.
  for (std::size_t i = 1; i < stages.size() && b.available_kv; ++i) {
    VllmStageBudget st;
    st.stage = i;
    // As rank 0's: MLA's whole A-projections and the rotary tables, less what --cpu-offload-gb
    // moves to host memory, plus the DeepStack buffers.
    const uint64_t held = checked_add(checked_add(stage_weights(model, built, tp, stages, i, serving_dtype_bytes(s.kv.dtype)), b.mla_extra), b.rope.bytes);
    st.weights = checked_add(held - std::min(held, s.cpu_offloaded), b.deepstack.bytes);
    const uint64_t sampler = i + 1 == stages.size() ? full_sampler_peak : 0;
    st.activation = checked_add(checked_add(b.moe_workspace, std::max(b.forward_peak, sampler)), 50 * kMiB);
    st.non_kv_total = checked_add(checked_add(checked_add(st.weights, b.lora.bytes), st.activation), checked_add(b.non_torch, b.offload_staging));
    st.available_kv = b.requested > st.non_kv_total ? b.requested - st.non_kv_total : 0;
    VllmSettings stage_kv = kv;
    stage_kv.pipeline_rank = i;
    stage_kv.available_kv_bytes = st.available_kv;
    st.kv = vllm_kv(cache_model, stage_kv);
    if (st.kv.num_blocks < b.kv.num_blocks) {
      b.kv_allocated = checked_mul(st.kv.num_blocks, b.kv.bytes_per_block);  // rank 0's tensors shrunk to the smallest stage's blocks
      const uint64_t rank0_bytes_per_token = b.kv.bytes_per_token;
      b.kv = st.kv;
      b.kv.bytes_per_token = rank0_bytes_per_token;
      b.kv_stage = i;
    }
    b.stages.push_back(std::move(st));
  }
  return {b, sp};
}

}  // namespace vc
