#include "engines/sglang_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "catalogue/catalogue_tower.h"
#include "core/checked.h"
#include "core/error.h"
#include "engines/serving_dtype.h"
#include "engines/serving_speculative.h"
#include "engines/torch_caching_allocator.h"

namespace vc {
namespace {

// Bytes of n parameters of a class as the rank loads them: 16-bit classes at --dtype's width (as
// loaded_weight_bytes has it), quantized ones at the checkpoint's bytes a parameter of that class,
// and another tier than the native one at its bytes a parameter overall.
class ClassBytes {
 public:
  ClassBytes(const Model& m, uint64_t tier_bytes, uint64_t value_bytes) : m_(m), tier_(tier_bytes), value_bytes_(value_bytes) {}

  uint64_t operator()(ParamClass c, uint64_t n) const {
    const Ratio r = ratio(c);
    return r.params ? mul_div_round(n, r.bytes, r.params) : checked_mul(n, value_bytes_);
  }

  // A quantized tensor is two allocations, as its quant method creates them: the values (1 byte
  // each at 8 bits and more, half a byte at 4 to 8: FP8, INT4, MXFP4, NVFP4) and then their scales
  // (weight_scale_inv, weight_scale), the rest of the class's bytes a parameter. {values, scales}.
  std::pair<uint64_t, uint64_t> split(ParamClass c, uint64_t n) const {
    const uint64_t total = (*this)(c, n);
    const Ratio r = ratio(c);
    if (!r.params || r.bytes >= checked_mul(r.params, 2)) return {total, 0};
    const uint64_t values = r.bytes >= r.params ? n : ceil_div(n, 2);
    return values < total ? std::pair{values, total - values} : std::pair{total, uint64_t{0}};
  }

 private:
  struct Ratio {
    uint64_t bytes = 0, params = 0;  // params 0: --dtype's width
  };
  Ratio ratio(ParamClass c) const {
    const uint64_t total_params = m_.params.total();
    if (tier_ != m_.native.bytes) return {tier_, total_params};
    if (m_.native.bytes_by_class.empty()) {
      const bool unquantized = m_.native.format == "BF16" || m_.native.format == "F16" || m_.native.format == "F32";
      return unquantized ? Ratio{} : Ratio{tier_, total_params};
    }
    const auto b = m_.native.bytes_by_class.find(c);
    const auto p = m_.params.by_class.find(c);
    if (b == m_.native.bytes_by_class.end() || p == m_.params.by_class.end() || p->second == 0) return {};
    const bool unquantized = b->second == checked_mul(p->second, 2) || b->second == checked_mul(p->second, 4);
    return unquantized ? Ratio{} : Ratio{b->second, p->second};
  }

  const Model& m_;
  uint64_t tier_;
  uint64_t value_bytes_;
};

// The rank's tensors in creation order, and what they hold beyond an even 1/tp share.
struct Layout {
  const ClassBytes& bytes;
  uint64_t tp;
  std::vector<uint64_t> tensors;  // the live tensors
  std::vector<TorchStep> steps;   // the allocator's input: the live tensors and the temporaries
  uint64_t extra = 0;
  std::vector<size_t>* params = nullptr;  // while a decoder layer is created: its parameters' steps
  std::vector<std::string>* names = nullptr;  // and their names within the layer (vLLM's, for --cpu-offload-params)

  std::vector<size_t> tensor_steps = {};  // the step of each of `tensors`
  void keep(uint64_t b) {
    tensors.push_back(b);
    tensor_steps.push_back(steps.size());
    steps.push_back(TorchStep::alloc(b));
  }
  // A tensor of `whole` parameters of which this rank creates `on_rank` (whole when replicated).
  // `name`: the parameter's name within the decoder layer; a quantized tensor's scales are the
  // name + "_scale" (weight_scale, w13_weight_scale).
  void add(ParamClass c, uint64_t whole, uint64_t on_rank, const char* name = "") {
    const auto [values, scales] = bytes.split(c, on_rank);
    keep(values);
    if (params) params->push_back(steps.size() - 1);
    if (names) names->push_back(name);
    if (scales) {
      keep(scales);
      if (params) params->push_back(steps.size() - 1);
      if (names) names->push_back(std::string(name) + "_scale");
    }
    const uint64_t b = values + scales, share = bytes(c, whole) / tp;
    if (b > share) extra = checked_add(extra, b - share);
  }
  // A tensor of `on_rank` bytes whatever the checkpoint's width (a float32 parameter), of which the even
  // share holds `whole` bytes / tp.
  void add_bytes(uint64_t on_rank, uint64_t whole, const char* name) {
    keep(on_rank);
    if (params) params->push_back(steps.size() - 1);
    if (names) names->push_back(name);
    if (on_rank > whole / tp) extra = checked_add(extra, on_rank - whole / tp);
  }
  // A temporary: its step index, for release().
  size_t temp(uint64_t b) {
    steps.push_back(TorchStep::alloc(b));
    return steps.size() - 1;
  }
  void release(size_t step) { steps.push_back(TorchStep::release(step)); }
};

// The RoPE cos/sin cache (layers/rotary_embedding/base.py RotaryEmbedding.__init__ and
// _compute_cos_sin_cache), built on the GPU while the model is created (the loader creates the
// model under `with torch.device(...)`, model_loader/loader.py, so torch.arange lands there): for
// P = max_position_embeddings positions and rotary dim R, inv_freq (R/2), t (P), freqs = outer(t,
// inv_freq) (P x R/2), cos and sin (P x R/2 each), then cache = cat(cos, sin) (P x R), all fp32; the
// cache is kept as a buffer in fp32 ("cache needs to be in FP32 for numerical stability": CUDA, HIP
// and XPU), the others are freed when _compute_cos_sin_cache returns. get_rope (rotary_embedding/
// factory.py) keeps one instance per (head size, rotary dim, positions, base, scaling, dtype) in
// _ROPE_DICT, so the layers share it: built once, in the first attention layer, after its projections.
// Returns the cache's bytes.
uint64_t build_rope_cache(Layout& t, uint64_t positions, uint64_t rotary_dim) {
  const uint64_t half = checked_mul(checked_mul(positions, rotary_dim / 2), 4);
  const size_t inv_freq = t.temp(checked_mul(rotary_dim / 2, 4));
  const size_t pos = t.temp(checked_mul(positions, 4));
  const size_t freqs = t.temp(half), cos = t.temp(half), sin = t.temp(half);
  const uint64_t cache = checked_mul(half, 2);
  t.keep(cache);
  for (size_t step : {inv_freq, pos, freqs, cos, sin}) t.release(step);
  return cache;
}

uint64_t linear_params(uint64_t in, uint64_t out) { return checked_add(checked_mul(in, out), out); }  // weight and bias

// Kimi K2.5's MoonViT tower and projector (models/kimi_k25.py KimiK25ForConditionalGeneration,
// created before the language model): MoonViTEncoderLayer's VisionAttention splits qkv_proj
// (QKVParallelLinear) and proj (RowParallelLinear, its bias whole) over the attention TP ranks,
// but its MLP2 (models/kimi_vl_moonvit.py: nn.Linear fc0 and fc1 unless use_tensor_parallel, which
// kimi_k25.py does not pass), the LayerNorms, the patch embedding (Conv2dLayer), the learned
// positions and K2VLMultiModalProjector (ReplicatedLinear linear_1 and linear_2) are whole on
// every rank. Tensors in creation order, weight then bias. The position grid is what the tower's
// encoder count (config_tower.h) leaves after the patch embedding, the blocks and the final norm.

void lay_out_moonvit(Layout& t, const TowerSpec& v, uint64_t tp) {
  const uint64_t h = v.hidden, f = v.ffn, heads_rank = ceil_div(v.heads, tp), head = v.heads ? h / v.heads : 0;
  const auto whole = [&](uint64_t n) { t.add(ParamClass::Vision, n, n); };
  whole(checked_product({v.channels, v.patch, v.patch, h}));  // patch_embed.proj
  whole(h);
  const uint64_t encoder = v.encoder_params;
  uint64_t one_block = 0;
  std::vector<std::pair<uint64_t, uint64_t>> block;  // {whole, on rank} in creation order
  block.push_back({h, h});                            // norm0 weight
  block.push_back({h, h});                            // norm0 bias
  block.push_back({h, h});                            // norm1
  block.push_back({h, h});
  block.push_back({checked_mul(h, f), checked_mul(h, f)});  // mlp.fc0
  block.push_back({f, f});
  block.push_back({checked_mul(f, h), checked_mul(f, h)});  // mlp.fc1
  block.push_back({h, h});
  const uint64_t qkv_rank = checked_product({3, heads_rank, head});
  block.push_back({checked_mul(3 * h, h), checked_mul(qkv_rank, h)});  // attn.qkv_proj
  block.push_back({3 * h, qkv_rank});
  block.push_back({checked_mul(h, h), checked_product({heads_rank, head, h})});  // attn.proj
  block.push_back({h, h});                                                      // its bias, whole
  for (const auto& [w, r] : block) one_block = checked_add(one_block, w);
  const uint64_t fixed = checked_add(checked_add(checked_product({v.channels, v.patch, v.patch, h}), h), checked_add(checked_mul(v.layers, one_block), 2 * h));
  whole(encoder > fixed ? encoder - fixed : 0);  // pos_emb.weight (init_pos_emb_height x width x hidden)
  for (uint64_t i = 0; i < v.layers; ++i)
    for (const auto& [w, r] : block) t.add(ParamClass::Vision, w, r);
  whole(h);  // final_layernorm
  whole(h);
  // K2VLMultiModalProjector: pre_norm, then linear_1 (m x m) and linear_2 (m x text), with biases,
  // m = hidden x the merge kernel's patches: m solved from the projector's count, 2h + m^2 + m + m x text + text.
  const uint64_t p = v.projector_params, text = v.text_hidden;
  uint64_t m = 0;
  for (uint64_t j = 1; j <= 64 && !m; ++j) {
    const uint64_t w = checked_mul(j, h);
    if (checked_add(checked_add(2 * h, linear_params(w, w)), linear_params(w, text)) == p) m = w;
  }
  if (!m) {  // not that layout: the projector whole, one tensor
    whole(p);
    return;
  }
  whole(h);  // pre_norm
  whole(h);
  whole(checked_mul(m, m));
  whole(m);
  whole(checked_mul(m, text));
  whole(text);
}

void lay_out_attention(Layout& t, const AttentionSpec& a, uint64_t hidden, uint64_t tp, std::vector<uint64_t>& mla_copies, uint64_t value_bytes) {
  const uint64_t heads = a.query_heads, heads_rank = ceil_div(heads, tp);
  switch (a.kind) {
    case AttentionKind::Full:
    case AttentionKind::SlidingWindow: {
      if (!heads || !a.head_dim_k || !a.kv_heads) return;
      // QKVParallelLinear: the KV heads split, one replicated on each rank when there are fewer than ranks.
      // An output gate (Qwen3-Next's attn_output_gate) doubles the query rows: models/qwen3_next.py
      // Qwen3HybridAttentionDecoderLayer builds QKVParallelLinear with total_num_heads * (1 + attn_output_gate).
      const uint64_t kv_rank = std::max<uint64_t>(1, a.kv_heads / tp), hk = a.head_dim_k, hv = a.head_dim_v, hq = a.output_gate ? 2 * hk : hk;
      t.add(ParamClass::Attention, checked_mul(checked_add(checked_mul(heads, hq), checked_mul(a.kv_heads, hk + hv)), hidden),
            checked_mul(checked_add(checked_mul(heads_rank, hq), checked_mul(kv_rank, hk + hv)), hidden), "self_attn.qkv_proj.weight");
      t.add(ParamClass::Attention, checked_product({heads, hv, hidden}), checked_product({heads_rank, hv, hidden}), "self_attn.o_proj.weight");
      return;
    }
    case AttentionKind::Latent: {
      if (!heads || !a.value_dim || !a.nope_dim) return;  // the MLA widths were not read (GGUF)
      const uint64_t q_rank = a.query_rank, kv_lora = a.latent_rank, rope = a.rope_dim, qk = uint64_t{a.nope_dim} + rope, v = a.value_dim;
      if (q_rank) {
        const uint64_t fused = checked_mul(hidden, q_rank + kv_lora + rope);  // fused_qkv_a_proj_with_mqa, whole on every rank
        t.add(ParamClass::Attention, fused, fused, "self_attn.fused_qkv_a_proj.weight");
        t.add(ParamClass::Attention, q_rank, q_rank, "self_attn.q_a_layernorm.weight");
        t.add(ParamClass::Attention, checked_product({q_rank, heads, qk}), checked_product({q_rank, heads_rank, qk}), "self_attn.q_b_proj.weight");
      } else {
        t.add(ParamClass::Attention, checked_product({hidden, heads, qk}), checked_product({hidden, heads_rank, qk}), "self_attn.q_proj.weight");
        const uint64_t kv_a = checked_mul(hidden, kv_lora + rope);  // kv_a_proj_with_mqa, whole on every rank
        t.add(ParamClass::Attention, kv_a, kv_a, "self_attn.kv_a_proj_with_mqa.weight");
      }
      t.add(ParamClass::Attention, checked_product({kv_lora, heads, a.nope_dim + v}), checked_product({kv_lora, heads_rank, a.nope_dim + v}),
            "self_attn.kv_b_proj.weight");
      t.add(ParamClass::Attention, checked_product({heads, v, hidden}), checked_product({heads_rank, v, hidden}), "self_attn.o_proj.weight");
      t.add(ParamClass::Attention, kv_lora, kv_lora, "self_attn.kv_a_layernorm.weight");
      // post_load_weights: w_kc (heads x nope x kv_lora) and w_vc (heads x v x kv_lora), 16-bit.
      mla_copies.push_back(checked_product({heads_rank, a.nope_dim, kv_lora, value_bytes}));
      mla_copies.push_back(checked_product({heads_rank, v, kv_lora, value_bytes}));
      return;
    }
    case AttentionKind::LinearState:
    case AttentionKind::None: return;
  }
}

// Qwen3-Next's Gated DeltaNet mixer (models/qwen3_next.py Qwen3GatedDeltaNet.__init__), its tensors in
// creation order, each split over the `tp` ranks it is built on (tp_rank=attn_tp_rank,
// tp_size=attn_tp_size: the attention-TP group, tp / dp under --enable-dp-attention, tp without it):
// conv1d (ColumnParallelLinear, conv_dim = 2 x key heads x key dim + value heads x value dim rows of the
// kernel width, quant_config=None), in_proj_qkvz (hidden x (2 x key_dim + 2 x value_dim)), in_proj_ba
// (hidden x 2 x value heads), dt_bias (value heads), A_log (value heads, float32), the gated norm
// (RMSNormGated over one value head's dim, whole on every rank) and out_proj (RowParallelLinear,
// value_dim x hidden).
// Qwen3.5's mixer (https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/qwen3_5.py
// Qwen3_5GatedDeltaNet.__init__) builds the same tensors in the same order on the same group: "self.conv1d
// = ColumnParallelLinear(input_size=self.conv_kernel_size, output_size=self.conv_dim, bias=False,
// quant_config=None, tp_rank=self.attn_tp_rank, tp_size=self.attn_tp_size"; in_proj_qkvz a
// MergedColumnParallelLinear with "output_sizes=[key_dim, key_dim, value_dim, value_dim]" (the
// checkpoint's in_proj_qkv and in_proj_z loaded into it), in_proj_ba one with "output_sizes=[num_v_heads,
// num_v_heads]" (in_proj_b and in_proj_a), both on attn_tp_rank / attn_tp_size; "self.dt_bias =
// nn.Parameter(torch.ones(self.num_v_heads // self.attn_tp_size))", "self.A_log = nn.Parameter(torch.empty(
// self.num_v_heads // self.attn_tp_size, dtype=torch.float32))", "self.norm = RMSNormGated(self.head_v_dim"
// and out_proj "RowParallelLinear(self.value_dim, self.hidden_size, ... tp_rank=self.attn_tp_rank,
// tp_size=self.attn_tp_size".
void lay_out_gated_delta_net(Layout& t, const AttentionSpec& a, uint64_t hidden, uint64_t tp, uint64_t value_bytes) {
  const uint64_t key_dim = checked_mul(a.mixer_key_heads, a.mixer_key_dim), value_dim = checked_mul(a.mixer_heads, a.mixer_head_dim);
  const uint64_t conv_dim = checked_add(checked_mul(2, key_dim), value_dim), v_heads = a.mixer_heads;
  const uint64_t qkvz = checked_add(checked_mul(2, key_dim), checked_mul(2, value_dim));
  t.add(ParamClass::Attention, checked_mul(conv_dim, a.conv_kernel), checked_mul(ceil_div(conv_dim, tp), a.conv_kernel), "linear_attn.conv1d.weight");
  t.add(ParamClass::Attention, checked_mul(qkvz, hidden), checked_mul(ceil_div(qkvz, tp), hidden), "linear_attn.in_proj_qkvz.weight");
  t.add(ParamClass::Attention, checked_mul(2 * v_heads, hidden), checked_mul(ceil_div(2 * v_heads, tp), hidden), "linear_attn.in_proj_ba.weight");
  t.add(ParamClass::Attention, v_heads, ceil_div(v_heads, tp), "linear_attn.dt_bias");
  // A_log: torch.zeros(num_v_heads // attn_tp_size, dtype=torch.float32), 4 B a value whatever --dtype.
  t.add_bytes(checked_mul(ceil_div(v_heads, tp), 4), checked_mul(v_heads, value_bytes), "linear_attn.A_log");
  t.add(ParamClass::Norms, a.mixer_head_dim, a.mixer_head_dim, "linear_attn.norm.weight");
  t.add(ParamClass::Attention, checked_mul(value_dim, hidden), checked_mul(ceil_div(value_dim, tp), hidden), "linear_attn.out_proj.weight");
}

// `shared`: the MoE block's shared experts (mlp.shared_experts.*), else the layer's dense MLP (mlp.*).
// Gated: gate_up_proj (MergedColumnParallelLinear, 2 x width rows) and down_proj; not gated: one up
// projection of width rows (Phi's ColumnParallelLinear fc1, models/phi.py PhiMLP; Nemotron-H's
// up_proj, models/nemotron_h.py NemotronHMLP) and the down projection (fc2 / down_proj).
void lay_out_mlp(Layout& t, ParamClass c, const FeedForwardSpec& f, uint64_t width, uint64_t hidden, uint64_t tp, bool shared = false) {
  const uint64_t rank = ceil_div(width, tp);
  const char* up = f.gated ? (shared ? "mlp.shared_experts.gate_up_proj.weight" : "mlp.gate_up_proj.weight")
                           : (shared ? "mlp.shared_experts.up_proj.weight" : "mlp.up_proj.weight");
  t.add(c, checked_mul(f.up_rows(width), hidden), checked_mul(f.up_rows(rank), hidden), up);  // column-parallel
  t.add(c, checked_mul(width, hidden), checked_mul(rank, hidden), shared ? "mlp.shared_experts.down_proj.weight" : "mlp.down_proj.weight");  // row-parallel
}

}  // namespace

const char* const kSglangWeightsAssumption =
    "SGLang prints the fall in free memory over load_model: the segments PyTorch's caching allocator reserved for this rank's tensors "
    "(each of 10 MiB and more rounded up to 2 MiB; smaller ones packed in 20 MiB and 2 MiB segments), with the layer norms, the MoE "
    "router and MLA's down-projections whole on every rank, and the RoPE cos/sin cache SGLang builds on the GPU (max positions x rotary dim x 4 B, "
    "one per rotary dim; the rotary dim taken as the head dim, partial rotary factors and scaled lengths not read)";
const char* const kSglangWeightsSource =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/model_executor/model_runner.py (load_model: \"Load weight end ... mem "
    "usage\"); https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/deepseek_v2.py (DeepseekV2AttentionMLA, "
    "post_load_weights); https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/layers/rotary_embedding/base.py (RotaryEmbedding "
    "cos_sin_cache); https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/kimi_k25.py (the vision tower); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/qwen3_next.py (Qwen3GatedDeltaNet on the attention-TP group); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/qwen3_5.py (Qwen3_5GatedDeltaNet, the same tensors); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/models/phi.py (PhiMLP: fc1 and fc2, no gate); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/layers/quantization/unquant.py (UnquantizedFusedMoEMethod.create_weights: "
    "w13 of 2 x or 1 x the expert width as the experts are gated or not); "
    "https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDACachingAllocator.cpp";

std::string sglang_weights_formula(const SglangRankWeights& w, const std::string& dtype, uint64_t tp, uint64_t pp) {
  std::string dp_attention;
  if (w.attention_tp && w.attention_tp != tp)
    dp_attention = fmt::format(" (--enable-dp-attention: attention{}{} split over tp / dp = {} ranks{})", w.mixer_tp == w.attention_tp ? ", recurrent mixers" : "",
                               w.embedding_tp == w.attention_tp ? " and embedding" : "", w.attention_tp,
                               w.embedding_tp == 1 && w.attention_tp != 1 ? ", the embedding whole" : "");
  if (w.dense_mlp_tp && w.dense_mlp_tp != tp) dp_attention += " (--moe-dense-tp-size 1: the dense MLP layers whole)";
  if (w.head_tp && w.head_tp != tp) dp_attention += fmt::format(" (--enable-dp-lm-head: the output head split over {} ranks)", w.head_tp);
  return fmt::format("checkpoint at --dtype {} / (tp {} x pp {}) = {} B + {} B of tensors whole on every rank{}{} + {} B MLA w_kc/w_vc copies + "
                     "{} B RoPE cos/sin cache (fp32) + {} B the caching allocator rounds up",
                     dtype, tp, pp, w.even_share, w.replicated_extra, dp_attention,
                     w.tower_extra ? fmt::format(" ({} B of them the vision tower's)", w.tower_extra) : std::string(), w.mla_copies, w.rope_cache,
                     w.allocator_overhead);
}

namespace {

// The classes of models/deepseek_v2.py: DeepseekV2ForCausalLM, DeepseekV3ForCausalLM (Kimi K2, and
// Kimi K2.5's text model, are DeepseekV3), DeepseekV32ForCausalLM (DeepseekV2ForCausalLM's subclass
// there) and GLM-5's GlmMoeDsaForCausalLM (models/glm4_moe.py: class GlmMoeDsaForCausalLM(DeepseekV2ForCausalLM),
// only its shared-experts fusion rule its own).
bool deepseek_v2_class(const Model& m) {
  return m.architecture == "deepseek_v2" || m.architecture == "deepseek_v3" || m.architecture == "kimi_k2" || m.architecture == "kimi_k25" ||
         m.architecture == "deepseek_v32" || m.architecture == "glm_moe_dsa";
}

// The classes models/llama.py builds: LlamaForCausalLM, and its subclasses MistralForCausalLM
// (models/mistral.py: `class MistralForCausalLM(LlamaForCausalLM): pass`) and Phi3ForCausalLM
// (models/llama.py: `class Phi3ForCausalLM(LlamaForCausalLM): pass`; Phi-3 and Phi-4 are model_type phi3).
bool llama_class(const Model& m) { return m.architecture == "llama" || m.architecture == "mistral" || m.architecture == "phi3"; }

const char* const kDpAttentionAccepted =
    "accepted: DeepSeek V2 / V3 / V3.2, Kimi K2 / K2.5, GLM-5 (glm_moe_dsa), GLM-4.5 / 4.6 / 4.7 (glm4_moe), MiniMax-M2 (minimax_m2), "
    "gpt-oss (gpt_oss), Qwen2-MoE, Qwen3-MoE, Qwen3 (dense), Qwen3-Next (qwen3_next, its Gated DeltaNet mixers on the group too), Llama, "
    "Mistral and Phi-3 / Phi-4 (phi3)";

// The Qwen3.5 / Qwen3.6 classes (models/qwen3_5.py: Qwen3_5ForConditionalGeneration and
// Qwen3_5MoeForConditionalGeneration, the EntryClass; model_type qwen3_5 / qwen3_5_moe and their text
// configs qwen3_5_text / qwen3_5_moe_text).
bool qwen3_5_class(const Model& m) {
  return m.architecture == "qwen3_5" || m.architecture == "qwen3_5_text" || m.architecture == "qwen3_5_moe" || m.architecture == "qwen3_5_moe_text";
}

// A recurrent layer whose mixer tensors are laid out here: Qwen3-Next's Gated DeltaNet (models/qwen3_next.py
// Qwen3GatedDeltaNet) and Qwen3.5's (models/qwen3_5.py Qwen3_5GatedDeltaNet), with its geometry read
// from config.json (not from a GGUF file).
bool sglang_lays_out_gated_delta_net(const Model& m, const AttentionSpec& a) {
  return (m.architecture == "qwen3_next" || qwen3_5_class(m)) && a.kind == AttentionKind::LinearState &&
         a.state_family == StateFamily::GatedDeltaNet && a.mixer_heads && a.mixer_head_dim && a.mixer_key_heads && a.mixer_key_dim && a.conv_kernel;
}

}  // namespace

bool sglang_dp_attention_read(const Model& m) {
  // The classes named in sglang_attention_on_dp_group below, with the files read for each.
  static const char* const kOnGroup[] = {"qwen2_moe", "qwen3_moe", "qwen3", "glm4_moe", "minimax_m2", "gpt_oss", "qwen3_next"};
  if (deepseek_v2_class(m) || llama_class(m)) return true;
  for (const char* a : kOnGroup)
    if (m.architecture == a) return true;
  return false;
}

bool sglang_ep_split_runs_dp_attention(const Model& m, SplitMode split, uint64_t ranks) {
  return split == SplitMode::Expert && ranks > 1 && sglang_dp_attention_read(m);
}

bool sglang_attention_on_dp_group(const Model& m) {
  // models/deepseek_v2.py, models/qwen2_moe.py, models/qwen3_moe.py, models/qwen3.py
  // (Qwen3Attention: tp_rank=attn_tp_rank, tp_size=attn_tp_size; sglang PR #7681) and models/llama.py
  // (sglang PR #15268, 2025-12: "Using attn-tp group for llama attention module"; before it Llama's
  // attention stayed on the whole TP group, which is what this function said until 2026-12-06),
  // with Mistral and Phi-3 its subclasses; models/glm4_moe.py (Glm4MoeAttention: QKVParallelLinear and
  // o_proj with tp_rank=attn_tp_rank, tp_size=attn_tp_size), models/minimax_m2.py (MiniMaxM2Attention
  // likewise, "Use attention TP rank/size for dp-attention support"; sglang PR #20067, 2026-03,
  // "Attention modules in MiniMax-M2.5 model definition now use the attention TP group") and
  // models/gpt_oss.py (GptOssAttention: attn_tp_rank / attn_tp_size, its sinks num_heads // attn_tp_size;
  // sglang PR #9359, merged 2025-08, "Support DP attention with GPT-OSS"; PR #9308 was closed):
  // attention on the attention-TP group. Added 2026-12-06 (issue 13).
  // models/qwen3_next.py: Qwen3HybridAttentionDecoderLayer (qkv_proj and o_proj with tp_rank=attn_tp_rank,
  // tp_size=attn_tp_size) and Qwen3GatedDeltaNet (conv1d, in_proj_qkvz, in_proj_ba, out_proj on
  // attn_tp_rank / attn_tp_size, dt_bias and A_log num_v_heads // attn_tp_size), Qwen3NextModel's
  // VocabParallelEmbedding(use_attn_tp_group=is_dp_attention_enabled()); the MoE (Qwen2MoeSparseMoeBlock)
  // on the whole TP group. Its recurrent state follows the group too (configs/qwen3_next.py
  // mamba2_cache_params: Mamba2StateShape.create(tp_world_size=attn_tp_size)). Added 2026-12-06.
  if (sglang_dp_attention_read(m)) return true;
  // Qwen3.5 / Qwen3.6 (models/qwen3_5.py): the language model is read: Qwen3_5GatedDeltaNet and
  // Qwen3_5AttentionDecoderLayer (qkv_proj with the output gate's rows, o_proj) on attn_tp_rank /
  // attn_tp_size, the embedding "VocabParallelEmbedding(config.vocab_size, config.hidden_size,
  // org_num_embeddings=config.vocab_size, enable_tp=not is_dp_attention_enabled())" whole, the MLP
  // (Qwen2MoeMLP) and MoE (Qwen2MoeSparseMoeBlock) over all tp ranks, the state on attn_tp_size
  // (configs/qwen3_5.py: "class Qwen3_5TextConfig(Qwen3NextConfig)"). But both entry classes subclass
  // Qwen3VLForConditionalGeneration, which builds the vision tower (self.visual) and lm_head, and the
  // tower's split under DP attention was not read: layers/attention/vision.py's VisionAttention takes
  // "self.tp_size = 1 if use_data_parallel else get_parallel().attn_tp_size" (the attention group), while
  // the stored models/qwen3_vl.py builds Qwen3_VisionMLP and the patch mergers with plain
  // ColumnParallelLinear / RowParallelLinear (all tp ranks) and predates sglang PR #13724 ("support
  // qwen3_vl vision model dp", 2025-11), after which they take a use_data_parallel argument whose tp
  // was not read; nor was the wrapper's ParallelLMHead under --enable-dp-lm-head. Refused until then.
  if (qwen3_5_class(m))
    throw InputError("--enable-dp-attention",
                     fmt::format("with a '{}' (Qwen3.5 / Qwen3.6) model is not modelled: SGLang's Qwen3_5ForConditionalGeneration / "
                                 "Qwen3_5MoeForConditionalGeneration build their Gated DeltaNet mixers and attention on the attention group and "
                                 "their embedding whole, but also the Qwen3-VL vision tower, whose split under DP attention was not read "
                                 "(VisionAttention on the attention group, the tower's MLP and mergers in the version after sglang PR #13724 "
                                 "not read); {}",
                                 m.architecture, kDpAttentionAccepted));
  throw InputError("--enable-dp-attention",
                   fmt::format("with a '{}' model is not modelled: SGLang's class for it was not read as building its attention on the attention-TP "
                               "group (Qwen2's Qwen2Attention and Mixtral's MixtralAttention keep the whole TP group; the hybrid recurrent classes "
                               "other than Qwen3-Next (Nemotron-H, Falcon-H1, Granite 4.0-H, Jamba, Kimi Linear) split their mixers "
                               "over it too, which the weights here do not lay out for them); {}",
                               m.architecture.empty() ? std::string("unknown") : m.architecture, kDpAttentionAccepted));
}

bool sglang_dp_embedding_on_group(const Model& m) {
  // models/gpt_oss.py GptOssModel: VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled()),
  // whole on every rank under DP attention (the form sglang PR #17403 replaced elsewhere; the stored
  // gpt_oss.py still has it). The other accepted classes: use_attn_tp_group=is_dp_attention_enabled().
  return m.architecture != "gpt_oss";
}

bool sglang_dp_lm_head_on_group(const Model& m) {
  // models/minimax_m2.py MiniMaxM2ForCausalLM: ParallelLMHead(...) without use_attn_tp_group, so
  // --enable-dp-lm-head leaves its head over all tp ranks. The others pass
  // use_attn_tp_group=enable_dp_lm_head (deepseek_v2.py, qwen2_moe.py, qwen3_moe.py, qwen3.py,
  // llama.py, glm4_moe.py, gpt_oss.py).
  return m.architecture != "minimax_m2";
}

uint64_t sglang_dense_mlp_tp(const Model& m, uint64_t tp, uint64_t moe_dense_tp_size) {
  if (moe_dense_tp_size == 0) return tp;  // not given (None)
  // server_args.py: assert self.moe_dense_tp_size in {1, None}.
  if (moe_dense_tp_size != 1)
    throw InputError("--moe-dense-tp-size", fmt::format("{} is not accepted; SGLang asserts moe_dense_tp_size in {{1, None}}: give 1 or leave it out", moe_dense_tp_size));
  // layers/communicator.py enable_moe_dense_fully_dp(): moe_dense_tp_size == 1; models/deepseek_v2.py
  // DeepseekV2DecoderLayer: its dense layers' DeepseekV2MLP with tp_rank 0, tp_size 1; models/glm4_moe.py
  // Glm4MoeDecoderLayer: `if enable_moe_dense_fully_dp(): mlp_tp_rank, mlp_tp_size = 0, 1` for its
  // dense layers' Glm4MoeMLP (the shared experts keep tp unless an all-to-all backend or FP4 all-gather).
  if (deepseek_v2_class(m) || m.architecture == "glm4_moe") return 1;
  bool dense = false;
  for (const LayerConfig& l : m.layers) dense = dense || l.feed_forward.kind == FeedForwardKind::Dense;
  // models/qwen2.py Qwen2MLP (Qwen3's too), models/llama.py LlamaMLP (Mistral's and Phi-3's),
  // models/qwen3_moe.py Qwen3MoeMLP take no tp override: their dense MLPs stay split over tp. A model
  // without dense MLP layers (gpt-oss, MiniMax-M2) has nothing the flag moves.
  static const char* const kTpMlp[] = {"qwen2", "qwen3", "qwen3_moe"};
  if (llama_class(m)) return tp;
  for (const char* a : kTpMlp)
    if (m.architecture == a) return tp;
  if (!dense) return tp;
  throw InputError("--moe-dense-tp-size", fmt::format("with a '{}' model is not modelled: whether SGLang's class for it builds its dense MLP layers with "
                                                      "tp_size 1 was not read; accepted with DeepSeek V2 / V3 / V3.2, Kimi K2 / K2.5, GLM-5 and "
                                                      "GLM-4.5 / 4.6 / 4.7 (dense layers whole on every rank), Qwen2, Qwen3, Qwen3-MoE, Llama, "
                                                      "Mistral and Phi-3 (their MLPs keep tp) and models without dense MLP layers",
                                                      m.architecture.empty() ? std::string("unknown") : m.architecture));
}

SglangRankWeights sglang_rank_weights(const Model& m, uint64_t tier_bytes, uint64_t tp, uint64_t pp, const std::string& dtype, uint64_t attention_dp,
                                      bool dp_lm_head, uint64_t offload_cap, uint64_t moe_dense_tp_size) {
  OffloadRule rule;
  rule.cap = offload_cap;
  return sglang_rank_weights(m, tier_bytes, tp, pp, dtype, attention_dp, dp_lm_head, rule, moe_dense_tp_size);
}

SglangRankWeights sglang_rank_weights(const Model& m, uint64_t tier_bytes, uint64_t tp, uint64_t pp, const std::string& dtype, uint64_t attention_dp,
                                      bool dp_lm_head, const OffloadRule& offload, uint64_t moe_dense_tp_size) {
  if (attention_dp == 0 || tp % attention_dp != 0)
    throw InputError("--dp-size", fmt::format("{} does not divide --tp-size {}; with --enable-dp-attention SGLang asserts tp_size % dp_size == 0", attention_dp, tp));
  if (dp_lm_head && attention_dp == 1)
    throw InputError("--enable-dp-lm-head", "needs --enable-dp-attention with --dp-size above 1 (SGLang asserts enable_dp_attention with it)");
  const uint64_t value_bytes = serving_dtype_bytes(dtype);
  SglangRankWeights w;
  // --enable-dp-attention: attn_tp_size = tp / dp for the classes built on the attention-TP group.
  const bool on_group = attention_dp > 1 && sglang_attention_on_dp_group(m);
  w.attention_tp = on_group ? tp / attention_dp : tp;
  // VocabParallelEmbedding(use_attn_tp_group=is_dp_attention_enabled()) in the classes on the group
  // (sglang PR #17403, 2026-01, after Llama joined the classes in PR #15268): the embedding over the
  // attention group's tp / dp ranks; gpt-oss's enable_tp=not is_dp_attention_enabled(): whole.
  w.embedding_tp = on_group && !sglang_dp_embedding_on_group(m) ? 1 : w.attention_tp;
  w.dense_mlp_tp = sglang_dense_mlp_tp(m, tp, moe_dense_tp_size);
  // The checkpoint's MTP layers are not built for the target (serving_speculative.h mtp_weight_bytes).
  const uint64_t loaded = loaded_weight_bytes(m, tier_bytes, dtype);
  w.even_share = ceil_div(loaded - std::min(loaded, mtp_weight_bytes(m, loaded, false)), checked_mul(tp, pp));
  const ClassBytes bytes(m, tier_bytes, value_bytes);
  Layout t{bytes, tp, {}, {}, 0};
  std::vector<uint64_t> mla_copies;
  const uint64_t hidden = m.hidden;
  // Kimi K2.5 (KimiK25ForConditionalGeneration) creates its vision tower and projector first, the
  // text model (DeepseekV3ForCausalLM) after.
  if (m.architecture == "kimi_k25") {
    if (const std::optional<TowerSpec> v = catalogue_tower(m); v && v->kind == "MoonViT" && v->hidden && v->heads) {
      const uint64_t before = t.extra;
      lay_out_moonvit(t, *v, tp);
      w.tower_extra = t.extra - before;
    }
  }
  // VocabParallelEmbedding / ParallelLMHead: the vocabulary padded to a multiple of 64, then split.
  const uint64_t padded_vocab = checked_mul(ceil_div(m.vocab, 64), 64);
  const uint64_t embed_rows = ceil_div(padded_vocab, w.embedding_tp);
  if (hidden && m.vocab) t.add(ParamClass::Embedding, checked_mul(m.vocab, hidden), checked_mul(embed_rows, hidden));
  const uint64_t stage_layers = std::min<uint64_t>(ceil_div(m.layers.size(), pp), m.layers.size());
  std::vector<uint64_t> rope_dims;  // one cache per rotary dim (get_rope's _ROPE_DICT)
  OffloadWalker walker(offload);  // --cpu-offload-gb / vLLM's prefetch offloader (serving_cpu_offload.h)
  w.offload = walker.result();
  for (uint64_t i = 0; i < stage_layers && hidden; ++i) {
    const LayerConfig& l = m.layers[i];
    std::vector<size_t> params;
    std::vector<std::string> names;
    t.params = &params;
    t.names = &names;
    lay_out_attention(t, l.attention, hidden, w.attention_tp, mla_copies, value_bytes);
    if (sglang_lays_out_gated_delta_net(m, l.attention)) {
      lay_out_gated_delta_net(t, l.attention, hidden, w.attention_tp, value_bytes);
      w.mixer_tp = w.attention_tp;
    } else if (on_group && (l.attention.kind == AttentionKind::LinearState || l.parallel_mixer)) {
      // The mixer's share would be the even 1/tp one, not SGLang's 1/(tp / dp) on the attention group.
      throw InputError("--enable-dp-attention", fmt::format("with a '{}' model whose recurrent mixer geometry was not read (a GGUF file?) is not modelled: "
                                                            "SGLang splits the mixers over the attention group's tp / dp ranks; {}",
                                                            m.architecture, kDpAttentionAccepted));
    }
    if (m.rope_positions()) {
      const AttentionSpec& a = l.attention;
      const uint64_t rotary = a.kind == AttentionKind::Latent                                                           ? a.rope_dim
                              : (a.kind == AttentionKind::Full || a.kind == AttentionKind::SlidingWindow) && a.rotary ? a.head_dim_k
                                                                                                                      : 0;
      if (rotary >= 2 && std::find(rope_dims.begin(), rope_dims.end(), rotary) == rope_dims.end()) {
        rope_dims.push_back(rotary);
        w.rope_cache = checked_add(w.rope_cache, build_rope_cache(t, m.rope_positions(), rotary));
      }
    }
    const FeedForwardSpec& f = l.feed_forward;
    if (f.kind == FeedForwardKind::Dense && f.dense_width) {
      lay_out_mlp(t, ParamClass::DenseMlp, f, f.dense_width, hidden, w.dense_mlp_tp);
    } else if (f.kind == FeedForwardKind::MoE && f.experts && f.expert_width) {
      const uint64_t router = checked_mul(f.experts, hidden);  // the gate, whole on every rank
      t.add(ParamClass::Router, router, router, "mlp.gate.weight");
      // Fused experts: w13 and w2, each expert's width split; w13 holds gate and up (2 x width rows)
      // only when gated (layers/quantization/unquant.py UnquantizedFusedMoEMethod.create_weights:
      // "2 * intermediate_size_per_partition if layer.moe_runner_config.is_gated else
      // intermediate_size_per_partition"; Nemotron-H's experts are up and down only).
      const uint64_t rank = ceil_div(f.expert_width, tp);
      t.add(ParamClass::RoutedExperts, checked_product({f.experts, f.up_rows(f.expert_width), hidden}), checked_product({f.experts, f.up_rows(rank), hidden}),
            "mlp.experts.w13_weight");
      t.add(ParamClass::RoutedExperts, checked_product({f.experts, f.expert_width, hidden}), checked_product({f.experts, rank, hidden}),
            "mlp.experts.w2_weight");
      if (f.shared_width) lay_out_mlp(t, ParamClass::SharedExperts, f, f.shared_width, hidden, tp, true);
    }
    t.add(ParamClass::Norms, hidden, hidden, "input_layernorm.weight");
    t.add(ParamClass::Norms, hidden, hidden, "post_attention_layernorm.weight");
    t.params = nullptr;
    t.names = nullptr;
    // --cpu-offload-gb: the offloader walks the layer as soon as it is built (wrap_modules over
    // make_layers' generator), moving parameters while under the cap; their GPU blocks are freed.
    if (offload.on()) {
      std::vector<NamedParam> layer;
      for (size_t k = 0; k < params.size(); ++k) layer.push_back({names[k], t.steps[params[k]].bytes});
      const std::vector<bool> moved = walker.layer(layer);
      for (size_t k = 0; k < params.size(); ++k)
        if (moved[k]) t.release(params[k]);
      w.offload = walker.result();
    }
  }
  if (offload.on()) w.offload.stage_layers = stage_layers;
  if (pp == 1 && hidden) {
    t.add(ParamClass::Norms, hidden, hidden);  // the final norm
    // --enable-dp-lm-head: ParallelLMHead(use_attn_tp_group=True) splits the padded vocabulary over
    // the attention group's tp / dp ranks (deepseek_v2.py, qwen2_moe.py, qwen3_moe.py, qwen3.py, llama.py,
    // glm4_moe.py, gpt_oss.py alike); MiniMax-M2's head takes no use_attn_tp_group and stays over tp.
    w.head_tp = dp_lm_head && sglang_dp_lm_head_on_group(m) ? tp / attention_dp : tp;
    const uint64_t head_rows = ceil_div(padded_vocab, w.head_tp);
    if (!m.tied_embeddings && m.vocab) t.add(ParamClass::OutputHead, checked_mul(m.vocab, hidden), checked_mul(head_rows, hidden));
  }
  for (uint64_t b : mla_copies) {
    w.mla_copies = checked_add(w.mla_copies, b);
    t.keep(b);
  }
  w.replicated_extra = t.extra;
  w.tensors = std::move(t.tensors);
  const TorchReserved r = torch_reserved_steps(t.steps);
  w.allocator_overhead = r.reserved - r.requested;
  // The moved parameters are no longer requested on the GPU: out of the live tensors and the total.
  if (w.offload.params) {
    std::vector<bool> freed(t.steps.size(), false);
    for (const TorchStep& st : t.steps)
      if (st.free) freed[st.allocation] = true;
    std::vector<uint64_t> live;
    for (size_t k = 0; k < w.tensors.size(); ++k)
      if (!freed[t.tensor_steps[k]]) live.push_back(w.tensors[k]);
    w.tensors = std::move(live);
  }
  w.total = checked_add(checked_add(checked_add(w.even_share, w.replicated_extra), checked_add(w.mla_copies, w.rope_cache)), w.allocator_overhead);
  w.total = checked_sub(w.total, w.offload.bytes);  // the prefetch offloader's staging buffers are not in it (allocated later)
  return w;
}

}  // namespace vc
