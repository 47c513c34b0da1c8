#include "engines/sglang_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/checked.h"
#include "core/error.h"
#include "engines/serving_dtype.h"
#include "engines/serving_speculative.h"
#include "engines/sglang_weights.h"

namespace vc {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
// max_running_requests when speculative decoding is on and --max-running-requests is not given
// (https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/arg_groups/speculative_hook.py).
constexpr uint64_t kSpecMaxRunningRequests = 48;
const char* const kServerArgs = "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/server_args.py (_handle_gpu_memory_settings)";
const char* const kModelRunner =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py (profile_max_num_token, init_memory_pool)";
const char* const kPools = "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/pool_configurator.py";
const char* const kStatePool =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py (_handle_max_mamba_cache, "
    "delegating to https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/mem_cache/kv_cache_configurator.py: "
    "max_mamba_cache_size // attn_dp_size); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/configs/mamba_utils.py (mamba_cache_per_req); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/configs/qwen3_next.py (mamba2_cache_params: tp_world_size=attn_tp_size)";

const char* const kInitDistributed =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py (init_torch_distributed: "
    "\"Init torch distributed ends. mem usage\")";
const char* const kCustomAllReduce =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/distributed/device_communicators/custom_all_reduce.py";

// Each rank's CUDA context (and what torch sets up with it) before SGLang measures the free memory:
// not printed as such; 0.38 to 0.73 GiB in public logs ("Load weight begin. avail mem" against the
// card, less "Init torch distributed ends. mem usage"), taken as 0.5 GiB.
constexpr uint64_t kCudaContext = kGiB / 2;
// What init_torch_distributed takes (NCCL communicators, custom all-reduce buffers), as SGLang
// prints it ("Init torch distributed ends. mem usage"): NCCL sizes its buffers by its channels, and
// it opens many over NVLink and few over PCIe. 2.01 GB printed on 8 x H200 joined by NVSwitch
// (custom all-reduce on; sglang PR #11716), 0.13 GB on 4 x L4 over PCIe (custom all-reduce off;
// llms-in-clouds docs/sglang.md).
constexpr uint64_t kCommunicatorsNvlink = kGiB * 2;
constexpr uint64_t kCommunicatorsPcie = kGiB * 13 / 100;
// SGLang's ROCm build: RCCL plus aiter's custom all-reduce ("[AR] Using AiterCustomAllreduce (AMD
// default)"). 3.41 to 3.83 GB printed on 8 x MI355X, 3.83 GB on the rank with the least free memory,
// the one SGLang sizes the pool from (GLM-5-FP8 and Kimi-K2.5 logs, ajith-sirra-amd/Issues).
constexpr uint64_t kCommunicatorsRocm = kGiB * 383 / 100;
const char* const kRocmLogs =
    "https://github.com/ajith-sirra-amd/Issues/blob/95a6dec604eac37b37ed406d81d902dce429c8c2/GLM-5-FP8-MI355X-SGLANG-ERROR.md";

// SGLang's custom all-reduce (custom_all_reduce.py): world sizes 2, 4, 6 and 8 only, and more than
// two GPUs must all be joined by NVLink ("not supported on more than two PCIe-only GPUs"); two GPUs
// over PCIe also need P2P, which GeForce cards lack, so it is taken as off there. Unknown links are
// taken as a datacentre board (on).
bool custom_all_reduce_runs(uint64_t tp, GpuLink link, bool disabled) {
  if (disabled || !(tp == 2 || tp == 4 || tp == 6 || tp == 8)) return false;
  if (link == GpuLink::FullMesh || link == GpuLink::Unknown) return true;
  return tp == 2 && link == GpuLink::NvlinkPairs;
}

// NCCL runs over NVLink when every GPU of the group is NVLink-joined (a bridge joins two), else over PCIe.
bool nccl_over_nvlink(uint64_t tp, GpuLink link) {
  return link == GpuLink::FullMesh || link == GpuLink::Unknown || (link == GpuLink::NvlinkPairs && tp <= 2);
}

const char* link_name(GpuLink link) {
  switch (link) {
    case GpuLink::Pcie: return "PCIe";
    case GpuLink::NvlinkPairs: return "NVLink bridges (pairs)";
    case GpuLink::FullMesh: return "NVLink to every GPU (NVSwitch / Infinity Fabric)";
    case GpuLink::Unknown: break;
  }
  return "not known (no device named; taken as NVLink)";
}

// GPU memory buckets (MiB) of _handle_gpu_memory_settings: chunked_prefill_size and cuda_graph_max_bs.
void choose_batch_defaults(uint64_t gpu_mib, uint64_t tp, uint64_t& chunk, uint64_t& graph_bs) {
  if (gpu_mib < 20 * 1024) chunk = 2048, graph_bs = 8;
  else if (gpu_mib < 35 * 1024) chunk = 2048, graph_bs = tp < 4 ? 24 : 80;
  else if (gpu_mib < 60 * 1024) chunk = 4096, graph_bs = tp < 4 ? 32 : 160;
  else if (gpu_mib < 160 * 1024) chunk = 8192, graph_bs = tp < 4 ? 256 : 512;
  else chunk = 16384, graph_bs = 512;
}

struct PoolGeometry {
  uint64_t full_bytes = 0;    // per token over the full-attention (or latent) layers, as the pool allocates them
  uint64_t window_bytes = 0;  // per token over the sliding-window layers of a hybrid SWA model (sglang_hybrid_swa)
  uint64_t cell_bytes = 0;    // per token over the full layers as the pool configurator prices them (the divisor)
  uint64_t state_bytes = 0;   // one request's recurrent state over the recurrent layers (state pool)
};

// One request's state in one recurrent mixer on one rank (mamba_cache_per_req): the conv state in
// bf16 and the SSM / delta-rule matrix at --mamba-ssm-dtype, both split over the attention-TP ranks
// (`tp`: tp / dp under --enable-dp-attention; configs/qwen3_next.py mamba2_cache_params:
// Mamba2StateShape.create(tp_world_size=attn_tp_size), the conv rows and the heads divided by it).
uint64_t request_state_bytes(const AttentionSpec& a, uint64_t tp, uint64_t ssm_bytes) {
  return checked_add(checked_mul(ceil_div(a.conv_values, tp), 2), checked_mul(ceil_div(a.state_values, tp), ssm_bytes));
}

// Whether SGLang gives the model's sliding-window layers a pool of their own (ModelConfig.is_hybrid_swa,
// configs/model_config.py is_hybrid_swa_model): only for the architectures on its allowlist,
// Llama4ForConditionalGeneration, GptOssForCausalLM, MiMoV2(Flash)ForCausalLM, Step3p5ForCausalLM,
// Step3p7ForConditionalGeneration, Gemma4 (DeepSeek V4 and Laguna too, not read here), each read by
// its config model_type (MiMo's, Step's and Gemma 4's by their Hugging Face naming: no catalogue
// entry holds them). Any other model (Gemma 2 and 3, Mistral with sliding_window, Qwen2 with
// use_sliding_window, Cohere 2, ...) gets one MHATokenToKVPool in which every layer, window or not,
// holds every token: its window layers are priced as full layers.
bool sglang_hybrid_swa(const Model& model) {
  static const char* const kHybridSwa[] = {"llama4", "gpt_oss", "gpt-oss", "mimo_v2", "mimo_v2_flash", "step3p5", "step3p7", "gemma4", "gemma4_text"};
  for (const char* a : kHybridSwa)
    if (model.architecture == a) return true;
  return false;
}

PoolGeometry pool_geometry(const Model& model, uint64_t tp, uint64_t pp, uint64_t value_bytes, uint64_t ssm_bytes, bool dsa_packed_fp8) {
  PoolGeometry g;
  const bool hybrid_swa = sglang_hybrid_swa(model);
  const uint64_t layers = ceil_div(model.layers.size(), pp);  // the first (largest) stage
  // A sparse-attention (DSA) model packs every layer's latent, also the layers whose indexer is
  // shared with an earlier one (GLM-5.2: indexer_types "shared"), which keep no index keys.
  bool dsa = false;
  for (const auto& layer : model.layers) dsa = dsa || layer.attention.index_key_dim != 0;
  for (uint64_t i = 0; i < layers; ++i) {
    const LayerConfig& layer = model.layers[i];
    if (layer.parallel_mixer && layer.parallel_mixer->kind == AttentionKind::LinearState)
      g.state_bytes = checked_add(g.state_bytes, request_state_bytes(*layer.parallel_mixer, tp, ssm_bytes));
    const AttentionSpec& a = layer.attention;
    switch (a.kind) {
      case AttentionKind::Full:
      case AttentionKind::SlidingWindow: {
        // get_num_kv_heads: KV heads split over TP ranks, at least one per rank.
        const uint64_t heads = std::max<uint64_t>(1, a.kv_heads / tp);
        const uint64_t b = checked_product({heads, uint64_t{a.head_dim_k} + a.head_dim_v, value_bytes});
        (a.kind == AttentionKind::Full || !hybrid_swa ? g.full_bytes : g.window_bytes) += b;
        if (a.kind == AttentionKind::Full || !hybrid_swa) g.cell_bytes = checked_add(g.cell_bytes, b);
        break;
      }
      case AttentionKind::Latent: {
        // MLA: kv_lora_rank + qk_rope_head_dim values, on every rank; a sparse (DSA) indexer adds an
        // fp8 key of index_head_dim with a 4-byte scale per 128 values. DSA with an fp8_e4m3 cache
        // packs the latent as fp8 with a 4-byte scale per 128 and keeps the rope part in bf16
        // (memory_pool.py MLATokenToKVPool override_kv_cache_dim: 512 + 16 + 128 = 656 B).
        // The pool's size in tokens is priced with the latent unpacked, (kv_lora_rank +
        // qk_rope_head_dim) x the cache dtype's size, plus the index key (pool_configurator.py
        // DefaultPoolConfigurator._compute_cell_size; the same formula in the 0.5 releases'
        // model_runner_kv_cache_mixin.py, NSATokenToKVPool naming): with fp8_e4m3 it divides the
        // memory by 512 + 64 + 132 = 708 B a layer and then allocates 656 + 132 = 788 B a layer for
        // each of those tokens, 11% more than the static share leaves.
        const uint64_t latent = checked_mul(uint64_t{a.latent_rank} + a.rope_dim, value_bytes);
        uint64_t b = dsa && dsa_packed_fp8 ? uint64_t{a.latent_rank} + a.latent_rank / 128 * 4 + uint64_t{a.rope_dim} * 2 : latent;
        uint64_t cell = latent;
        if (a.index_key_dim) {
          const uint64_t index_key = a.index_key_dim + a.index_key_dim / 128 * 4;
          b = checked_add(b, index_key);
          cell = checked_add(cell, index_key);
        }
        g.full_bytes = checked_add(g.full_bytes, b);
        g.cell_bytes = checked_add(g.cell_bytes, cell);
        break;
      }
      case AttentionKind::LinearState: g.state_bytes = checked_add(g.state_bytes, request_state_bytes(a, tp, ssm_bytes)); break;
      case AttentionKind::None: break;
    }
  }
  return g;
}

}  // namespace

uint64_t sglang_running_requests_for(uint64_t sequences, uint64_t dp) {
  dp = std::max<uint64_t>(1, dp);
  return checked_mul(ceil_div(std::max<uint64_t>(1, sequences), dp), dp);
}

uint64_t sglang_kv_dtype_bytes(const std::string& kv, const std::string& dtype) {
  if (kv == "auto") return serving_dtype_bytes(dtype);
  if (kv == "bf16" || kv == "bfloat16") return 2;
  if (kv == "fp8_e4m3" || kv == "fp8_e5m2") return 1;
  if (kv == "fp4_e2m1" || kv == "mxfp8") throw InputError("--kv-cache-dtype", kv + " (scaled low-bit cache) is not modelled; use auto, bf16, fp8_e4m3 or fp8_e5m2");
  throw InputError("--kv-cache-dtype", "'" + kv + "' is not an SGLang cache dtype; accepted: auto, bf16, bfloat16, fp8_e4m3, fp8_e5m2");
}

SglangProfile sglang_profile(const Model& model, const SglangSettings& s) {
  if (s.card_bytes == 0) throw InputError("--gpu-memory", "SGLang's memory profile needs the card's memory, e.g. 80GB");
  if (s.tensor_parallel == 0 || s.tensor_parallel > 1024) throw InputError("--tp", "must be from 1 to 1024");
  if (s.pipeline_parallel == 0 || s.pipeline_parallel > model.layers.size()) throw InputError("--pp", "must be from 1 to the layer count");
  if (s.page_size == 0 || s.page_size > 4096) throw InputError("--page-size", "must be from 1 to 4096");
  if (s.mem_fraction_static && !(*s.mem_fraction_static > 0 && *s.mem_fraction_static < 1))
    throw InputError("--mem-fraction-static", "must be above 0 and below 1");
  if (!(s.swa_full_tokens_ratio > 0 && s.swa_full_tokens_ratio <= 1)) throw InputError("--swa-full-tokens-ratio", "must be above 0 and at most 1");
  if (!(s.mamba_full_memory_ratio > 0 && s.mamba_full_memory_ratio <= 100)) throw InputError("--mamba-full-memory-ratio", "must be above 0");
  if (s.mamba_ssm_dtype != "float32" && s.mamba_ssm_dtype != "bfloat16")
    throw InputError("--mamba-ssm-dtype", "'" + s.mamba_ssm_dtype + "' is not accepted; accepted: float32, bfloat16");
  if (s.max_mamba_cache_size && *s.max_mamba_cache_size == 0) throw InputError("--max-mamba-cache-size", "must be at least 1");
  if (s.attention_dp == 0 || s.tensor_parallel % s.attention_dp != 0)
    throw InputError("--dp-size", fmt::format("{} does not divide --tp-size {}; with --enable-dp-attention SGLang asserts tp_size % dp_size == 0",
                                              s.attention_dp, s.tensor_parallel));
  const uint64_t value_bytes = sglang_kv_dtype_bytes(s.kv_cache_dtype, s.dtype);
  const uint64_t ssm_bytes = s.mamba_ssm_dtype == "bfloat16" ? 2 : 4;
  SglangProfile p;
  const uint64_t ranks = checked_mul(s.tensor_parallel, s.pipeline_parallel);
  const uint64_t dp = s.attention_dp;  // DP attention groups (1: off)
  p.attention_tp = s.tensor_parallel / dp;

  // 1. Batch defaults and mem_fraction_static (server_args.py, card size in MiB).
  const uint64_t gpu_mib = s.card_bytes / kMiB;
  uint64_t chunk = 0, graph_bs = 0;
  choose_batch_defaults(gpu_mib, s.tensor_parallel, chunk, graph_bs);
  if (s.chunked_prefill_size) chunk = *s.chunked_prefill_size > 0 ? static_cast<uint64_t>(*s.chunked_prefill_size) : 0;
  if (s.cuda_graph_max_bs) graph_bs = *s.cuda_graph_max_bs;
  // DP attention: _handle_data_parallelism divides the chunk by dp after mem_fraction_static is chosen.
  p.chunked_prefill_size = chunk / dp;
  p.cuda_graph_max_bs = graph_bs;
  if (s.mem_fraction_static) {
    p.mem_fraction_static = *s.mem_fraction_static;
  } else {
    // reserved (MiB) = 512 + 1.5 x max(chunk, 2048) (max_prefill_tokens 16384 when chunking is off)
    // + 2 x cuda_graph_max_bs + 1024 x tp x pp / 8, at least 10 GiB on cards above 60 GiB.
    double reserved = 512 + 1.5 * static_cast<double>(std::max<uint64_t>(chunk ? chunk : 16384, 2048)) + 2.0 * static_cast<double>(graph_bs) +
                      static_cast<double>(ranks) / 8.0 * 1024;
    // DP attention "needs more padding for some operations": cuda_graph_max_bs x dp x 3, and x 1.5
    // more above batch 300 (server_args.py, before the 10 GiB floor).
    if (dp > 1) {
      reserved += static_cast<double>(graph_bs) * static_cast<double>(dp) * 3;
      if (graph_bs > 300) reserved += static_cast<double>(graph_bs) * static_cast<double>(dp) * 1.5;
    }
    if (gpu_mib > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
    // Speculative decoding: the draft model and its larger CUDA graphs (6 GiB for a standalone
    // draft, 2 GiB for EAGLE heads and MTP; nothing for n-gram lookup).
    if (!s.speculative_algorithm.empty() && s.speculative_algorithm != "NGRAM") reserved += s.speculative_algorithm == "STANDALONE" ? 6 * 1024 : 2 * 1024;
    p.reserved_mib = static_cast<uint64_t>(reserved);
    p.mem_fraction_static = std::round((static_cast<double>(gpu_mib) - reserved) / static_cast<double>(gpu_mib) * 1000.0) / 1000.0;
    p.mem_fraction_chosen = true;
    if (!(p.mem_fraction_static > 0)) throw InputError("--gpu-memory", "is too small for SGLang's reserved activation and CUDA graph memory");
    if (model.inputs.size() > 1) p.notes.push_back("multimodal model: SGLang lowers mem_fraction_static further for the vision encoder (not modelled)");
  }

  // Speculative decoding: SGLang sets max_running_requests to 48 when it is not given (EAGLE,
  // EAGLE3, NEXTN, STANDALONE and NGRAM alike: arg_groups/speculative_hook.py _handle_eagle_family,
  // _handle_ngram), so the request map and the draft pool are sized for 48 requests.
  std::optional<uint64_t> running = s.max_running_requests;
  if (!running && !s.speculative_algorithm.empty()) {
    running = kSpecMaxRunningRequests;
    p.notes.push_back(fmt::format("speculative decoding: SGLang sets max_running_requests to {} when --max-running-requests is not given "
                                  "(\"Max running requests is reset to {} for speculative decoding\"), so it runs at most {} requests at once",
                                  kSpecMaxRunningRequests, kSpecMaxRunningRequests, kSpecMaxRunningRequests));
  }
  // DP attention: the server's max_running_requests is shared by the dp pools (model_runner.py:
  // max_running_requests // dp_size for each DP rank).
  if (running && dp > 1) running = *running / dp;
  if (dp > 1)
    p.notes.push_back(fmt::format("DP attention: {} attention groups of {} ranks, each with its own scheduler and token pool; the pool here is one "
                                  "group's, the server holds {} of them",
                                  dp, p.attention_tp, dp));

  // 2. Before and after the weights; the static share holds weights + token pool.
  p.custom_all_reduce = ranks > 1 && custom_all_reduce_runs(s.tensor_parallel, s.gpu_link, s.disable_custom_all_reduce);
  p.cuda_context = kCudaContext;
  p.communicators = ranks == 1                                   ? 0
                    : s.rocm                                     ? kCommunicatorsRocm
                    : nccl_over_nvlink(s.tensor_parallel, s.gpu_link) ? kCommunicatorsNvlink
                                                                 : kCommunicatorsPcie;
  const bool printed_free = s.free_before_weights && *s.free_before_weights <= s.card_bytes;
  p.runtime_before_weights = printed_free ? s.card_bytes - *s.free_before_weights : std::min(p.cuda_context + p.communicators, s.card_bytes);
  p.free_before_weights = s.card_bytes - p.runtime_before_weights;
  const SglangRankWeights rank_weights =
      sglang_rank_weights(model, s.weight_bytes, s.tensor_parallel, s.pipeline_parallel, s.dtype, dp, s.enable_dp_lm_head, s.cpu_offload_cap,
                          s.moe_dense_tp_size);
  p.weights = s.loaded_weights ? *s.loaded_weights : rank_weights.total;
  p.offload = rank_weights.offload;
  const uint64_t static_share = static_cast<uint64_t>(std::floor(p.mem_fraction_static * static_cast<double>(p.free_before_weights)));
  p.dynamic_reserve = p.free_before_weights - static_share;
  p.lora = sglang_lora_pool(model, s.lora, s.tensor_parallel, serving_dtype_bytes(s.dtype));
  const uint64_t before_pool = checked_add(p.weights, p.lora.bytes);
  uint64_t available = static_share > before_pool ? static_share - before_pool : 0;

  // 3. Bytes per token and the pools: a hybrid recurrent model's state pool comes first.
  PoolGeometry g = pool_geometry(model, p.attention_tp, s.pipeline_parallel, value_bytes, ssm_bytes, s.kv_cache_dtype == "fp8_e4m3");
  if (g.full_bytes == 0 && g.window_bytes == 0) throw InputError("MODEL", "has no attention layers with a per-token cache for SGLang's token pool");
  if (g.state_bytes) {
    p.state_bytes_per_request = g.state_bytes;
    // DP attention: each group's pool takes max_mamba_cache_size // attn_dp_size slots, and
    // max_running_requests // attn_dp_size with the radix cache disabled (`running` is already a
    // group's): _handle_max_mamba_cache (kStatePool).
    if (s.max_mamba_cache_size) p.state_slots = *s.max_mamba_cache_size / dp;
    else if (s.disable_radix_cache && running) p.state_slots = *running;
    else p.state_slots = static_cast<uint64_t>(std::floor(static_cast<double>(available) * s.mamba_full_memory_ratio / (1 + s.mamba_full_memory_ratio) /
                                                          static_cast<double>(g.state_bytes)));
    const uint64_t taken = checked_mul(p.state_slots, g.state_bytes);
    available = available > taken ? available - taken : 0;
    p.state_pool_bytes = checked_mul(p.state_slots + 1, g.state_bytes);
    if (p.state_slots == 0) p.notes.push_back("SGLang refuses to start: \"Not enough GPU memory for hybrid (mamba/linear-attention) state cache\"");
  }
  // EAGLE / STANDALONE / NEXTN: the draft's cache comes out of the same share, priced as the
  // target's bytes a token x draft layers / target layers (pool_configurator.py).
  const bool drafting = !s.drafter_layers.empty();
  if (drafting) {
    Model drafter;
    drafter.layers = s.drafter_layers;
    const PoolGeometry d = pool_geometry(drafter, p.attention_tp, 1, value_bytes, ssm_bytes, s.kv_cache_dtype == "fp8_e4m3");
    p.draft_token_bytes = d.full_bytes + d.window_bytes;
  }
  const uint64_t draft_layers = s.drafter_layers.size();
  const uint64_t stage_layers = ceil_div(model.layers.size(), s.pipeline_parallel);
  if (drafting && (g.window_bytes || g.state_bytes))
    throw InputError("--speculative-algorithm", "with a sliding-window or hybrid recurrent model is not modelled (SGLang sizes those pools its own way)");
  uint64_t tokens = 0;
  uint64_t sizing_cell = 0;  // the bytes a token the pool is sized with (scaled for a draft)
  p.cell_bytes = g.cell_bytes;
  if (g.full_bytes && g.window_bytes) {
    // HybridSWAPoolConfigurator: window layers get swa_full_tokens_ratio x the full layers' tokens.
    p.token_bytes = g.full_bytes + static_cast<uint64_t>(std::ceil(s.swa_full_tokens_ratio * static_cast<double>(g.window_bytes)));
    const double cell = static_cast<double>(g.full_bytes) + s.swa_full_tokens_ratio * static_cast<double>(g.window_bytes);
    tokens = static_cast<uint64_t>(std::floor(static_cast<double>(available) / cell));
  } else {
    // One kind of layer: window layers of a model off SGLang's hybrid list are already in full_bytes
    // (sglang_hybrid_swa); a hybrid model with window layers only (no full layer) is its window bytes.
    p.token_bytes = g.full_bytes + g.window_bytes;
    const uint64_t cell = g.window_bytes ? p.token_bytes : g.cell_bytes;
    p.cell_bytes = cell;
    sizing_cell = drafting ? static_cast<uint64_t>(static_cast<double>(cell) *
                                                   (1.0 + static_cast<double>(draft_layers) / static_cast<double>(stage_layers)))
                           : cell;
    tokens = available / sizing_cell;
  }
  if (s.max_total_tokens) tokens = std::min(tokens, *s.max_total_tokens);
  tokens = tokens / s.page_size * s.page_size;
  p.max_total_num_tokens = tokens;
  if (g.full_bytes && g.window_bytes) {
    p.swa_tokens = static_cast<uint64_t>(std::floor(static_cast<double>(tokens) * s.swa_full_tokens_ratio)) / s.page_size * s.page_size;
    p.token_pool_bytes = checked_add(checked_mul(tokens, g.full_bytes), checked_mul(p.swa_tokens, g.window_bytes));
  } else {
    p.token_pool_bytes = checked_mul(tokens, p.token_bytes);
  }
  if (tokens == 0) p.notes.push_back("SGLang refuses to start: \"Not enough memory. Please try to increase --mem-fraction-static\" (the weights fill the static share)");

  // 4. Requests: max_num_reqs = clamp(tokens / context_len x 512, 2048, 4096) unless given; the
  // scheduler runs at most min(tokens / 2, max_num_reqs) (tp_worker.py).
  const uint64_t context = s.context_length ? s.context_length : (model.max_context ? model.max_context : 4096);
  const uint64_t max_num_reqs = running ? *running : std::clamp<uint64_t>(checked_mul(tokens, 512) / context, 2048, 4096);
  p.max_running_requests = running ? std::min(*running, tokens / 2) : std::min(tokens / 2, max_num_reqs);
  // Hybrid: each running request holds state slots (1 with the radix cache disabled, 3 with it:
  // _calculate_mamba_ratio, no_buffer strategy).
  if (g.state_bytes) p.max_running_requests = std::min(p.max_running_requests, p.state_slots / (s.disable_radix_cache ? 1 : 3));
  // req_to_token_pool: (max_num_reqs + 1) x context_len int32 slots, allocated beside the pool.
  const uint64_t req_map = checked_product({max_num_reqs + 1, context, 4});
  if (drafting) {
    // The draft worker's pool: the target's tokens and room for the drafted and verified tokens.
    p.draft_pool_tokens = checked_add(checked_add(tokens, checked_product({max_num_reqs, s.spec_steps, s.spec_topk})),
                                      checked_add(checked_mul(max_num_reqs, s.spec_draft_tokens), 100));
    p.draft_pool_bytes = checked_mul(p.draft_pool_tokens, p.draft_token_bytes);
  }

  // 5. Lines: they add up to the card.
  const std::string pool_label = p.swa_tokens ? fmt::format("Token pool: {} full-attention tokens, {} window tokens", tokens, p.swa_tokens)
                                              : fmt::format("Token pool (KV cache): {} tokens", tokens);
  if (printed_free) {
    p.lines.push_back({"sglang.runtime", "CUDA context and NCCL before the weights", p.runtime_before_weights, "card - the free memory the log printed",
                       "as printed (\"Load weight begin. avail mem\")", kInitDistributed});
  } else {
    const uint64_t cuda_context = std::min(p.cuda_context, p.runtime_before_weights);
    p.lines.push_back({"sglang.runtime", "CUDA context", cuda_context, "0.5 GiB per GPU",
                       "uncertain: not printed; 0.38-0.73 GiB in public logs (the card less \"Load weight begin. avail mem\" and the communicators)",
                       kInitDistributed});
    if (p.communicators && s.rocm) {
      p.lines.push_back({"sglang.nccl", "RCCL communicators and aiter's custom all-reduce buffers", p.runtime_before_weights - cuda_context,
                         fmt::format("3.83 GiB: SGLang's ROCm build ({} ranks; GPUs joined by {})", ranks, link_name(s.gpu_link)),
                         "as SGLang printed \"Init torch distributed ends. mem usage=3.83 GB\" on 8 x MI355X (3.41-3.83 GB over the ranks)",
                         std::string(kInitDistributed) + "; " + kRocmLogs});
    } else if (p.communicators) {
      const bool nvlink = p.communicators == kCommunicatorsNvlink;
      p.lines.push_back({"sglang.nccl", p.custom_all_reduce ? "NCCL communicators and custom all-reduce buffers" : "NCCL communicators (custom all-reduce off)",
                         p.runtime_before_weights - cuda_context,
                         fmt::format("{} GiB: NCCL over {} ({} ranks; GPUs joined by {})", nvlink ? "2" : "0.13", nvlink ? "NVLink" : "PCIe", ranks,
                                     link_name(s.gpu_link)),
                         std::string(nvlink ? "as SGLang printed \"Init torch distributed ends. mem usage=2.01 GB\" on 8 x H200 (NVSwitch)"
                                            : "as SGLang printed \"Init torch distributed ends. mem usage=0.13 GB\" on 4 x L4 (PCIe)") +
                             "; custom all-reduce runs on 2, 4, 6 or 8 GPUs all joined by NVLink, or on two with P2P",
                         std::string(kInitDistributed) + "; " + kCustomAllReduce});
    }
  }
  p.lines.push_back({"sglang.weights", "Weights per GPU", p.weights,
                     s.loaded_weights ? fmt::format("as printed ({} B)", p.weights)
                                      : sglang_weights_formula(rank_weights, s.dtype, s.tensor_parallel, s.pipeline_parallel) +
                                            cpu_offload_moved_suffix(p.offload),
                     s.loaded_weights ? "as the log printed (\"Load weight end ... mem usage\")" : kSglangWeightsAssumption,
                     s.loaded_weights ? kModelRunner : kSglangWeightsSource});
  if (p.lora.bytes) {
    p.lines.push_back({"sglang.lora", sglang_lora_label(s.lora), p.lora.bytes, p.lora.formula,
                       p.lora.assumption + "; allocated after the weights, before the token pool, so the pool gets that much less", kSglangLoraSource});
  }
  const std::string lora_term = p.lora.bytes ? fmt::format(" - {} B LoRA pool", p.lora.bytes) : "";
  p.lines.push_back({"sglang.kv", pool_label, p.token_pool_bytes,
                     p.state_slots ? fmt::format("floor(({:.3f} x {} B free before the weights - {} B weights{} - {} state slots x {} B) / {} B a token) = {} tokens",
                                                 p.mem_fraction_static, p.free_before_weights, p.weights, lora_term, p.state_slots, p.state_bytes_per_request,
                                                 p.token_bytes, tokens)
                   : drafting ? fmt::format("floor(({:.3f} x {} B free before the weights - {} B weights{}) / ({} B a token x (1 + {} draft layers / {} layers) "
                                            "= {} B)) = {} tokens",
                                            p.mem_fraction_static, p.free_before_weights, p.weights, lora_term, p.cell_bytes, draft_layers, stage_layers,
                                            sizing_cell, tokens)
                   : p.cell_bytes != p.token_bytes && !p.swa_tokens
                       ? fmt::format("floor(({:.3f} x {} B free before the weights - {} B weights{}) / {} B a token as SGLang prices it "
                                     "(latent unpacked)) = {} tokens, each holding {} B (the latent packed with its scales and the rope part in bf16)",
                                     p.mem_fraction_static, p.free_before_weights, p.weights, lora_term, p.cell_bytes, tokens, p.token_bytes)
                                   : fmt::format("floor(({:.3f} x {} B free before the weights - {} B weights{}) / {} B a token) = {} tokens",
                                                 p.mem_fraction_static, p.free_before_weights, p.weights, lora_term, p.token_bytes, tokens),
                     (p.mem_fraction_chosen ? fmt::format("mem_fraction_static chosen by SGLang: (card {} MiB - reserved {} MiB) / card", gpu_mib, p.reserved_mib)
                                            : std::string("mem_fraction_static as given")) +
                         (dp > 1 ? fmt::format("; DP attention: one of {} groups' pools, KV heads split over tp / dp = {} ranks", dp, p.attention_tp)
                                 : std::string()),
                     kPools});
  if (p.state_pool_bytes) {
    p.lines.push_back({"sglang.state", fmt::format("Recurrent state pool: {} request slots", p.state_slots), p.state_pool_bytes,
                       fmt::format("({} slots + 1 padding slot) x {} B of conv (bf16) + SSM ({}) state a request{}", p.state_slots, g.state_bytes, s.mamba_ssm_dtype,
                                   dp > 1 ? fmt::format(", split over the attention group's tp / dp = {} ranks", p.attention_tp) : std::string()),
                       s.max_mamba_cache_size ? (dp > 1 ? fmt::format("--max-mamba-cache-size {} // dp {}", *s.max_mamba_cache_size, dp)
                                                        : std::string("--max-mamba-cache-size as given"))
                       : (s.disable_radix_cache && running)
                           ? "radix cache disabled: one slot per --max-running-requests"
                           : fmt::format("slots = floor(rest x {} / (1 + {}) / {} B); the attention pool gets the rest", s.mamba_full_memory_ratio,
                                         s.mamba_full_memory_ratio, g.state_bytes),
                       kStatePool});
  }
  if (drafting || s.draft_weights) {
    p.lines.push_back({"sglang.draft_weights", "Draft weights per GPU", s.draft_weights,
                       fmt::format("the drafter's weights / tp {}", s.tensor_parallel),
                       "the draft worker loads after the target's token pool, at the target's TP: out of what mem_fraction_static leaves", kSglangSpecSource});
    p.lines.push_back({"sglang.draft_kv", fmt::format("Draft token pool: {} tokens", p.draft_pool_tokens), p.draft_pool_bytes,
                       fmt::format("({} target tokens + {} requests x ({} steps x top-k {} + {} draft tokens) + 100) x {} B a draft token", tokens,
                                   max_num_reqs, s.spec_steps, s.spec_topk, s.spec_draft_tokens, p.draft_token_bytes),
                       "the draft worker's own pool (draft_runner_cache_size): the target's tokens plus room for drafted and verified ones",
                       kSglangSpecSource});
  }
  const uint64_t used = checked_add(checked_add(checked_add(checked_add(checked_add(p.runtime_before_weights, p.weights), p.lora.bytes), p.token_pool_bytes),
                                                p.state_pool_bytes),
                                    checked_add(s.draft_weights, p.draft_pool_bytes));
  if (used > s.card_bytes)
    p.notes.push_back("the draft's weights and pool do not fit in what mem_fraction_static leaves: SGLang runs out of memory loading the draft "
                      "(lower --mem-fraction-static)");
  const uint64_t rest = s.card_bytes > used ? s.card_bytes - used : 0;
  const uint64_t req_line = std::min(req_map, rest);
  p.lines.push_back({"sglang.req_to_token", "Request-to-token map", req_line, fmt::format("({} requests + 1) x {} tokens x 4 B", max_num_reqs, context),
                     "int32 slot table of ReqToTokenPool", kModelRunner});
  p.lines.push_back({"sglang.reserve", "Left for activations and CUDA graphs", rest - req_line,
                     fmt::format("card - the lines above; SGLang keeps (1 - {:.3f}) x free memory out of the static share", p.mem_fraction_static),
                     fmt::format("chunked prefill {} tokens{}, CUDA graphs up to batch {}", p.chunked_prefill_size,
                                 dp > 1 ? fmt::format(" (a DP rank's: {} / dp {})", chunk, dp) : std::string(), graph_bs), kServerArgs});
  return p;
}

}  // namespace vc
