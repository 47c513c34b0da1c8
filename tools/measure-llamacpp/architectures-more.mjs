// Tiny models of nine more architectures, written after vramcalc's llama.cpp rules were fixed on
// the nine in architectures.mjs: each is measured once as it stands, so its cases say how the
// rules hold on architectures they were never written against (`node measure.mjs --more`).
// Tensor names and shapes as llama.cpp's loader expects them (src/models/<arch>.cpp
// load_arch_tensors, llama.cpp 80fb11ac); shapes in ggml order (ne[0] is the row length).
import { t, layers, moeFfn, denseFfn, model, globals } from './architectures.mjs';

const eps = { f32: 1e-6 };
const u32s = (of) => ({ arr: 'u32', of });

// q/k/v with biases, as create_tensor_qkv loads them (Qwen2, GLM-4.5).
function biasedQkv(b, E, HD, KD, type = 'F16') {
  return [t(`${b}.attn_q.weight`, [E, HD], type), t(`${b}.attn_k.weight`, [E, KD], type), t(`${b}.attn_v.weight`, [E, KD], type),
    t(`${b}.attn_q.bias`, [HD]), t(`${b}.attn_k.bias`, [KD]), t(`${b}.attn_v.bias`, [KD])];
}
// Mamba-2 mixer tensors (granite-hybrid.cpp, nemotron-h.cpp).
function mamba2Mixer(b, E, DI, DS, NH, G, K, type) {
  const conv = DI + 2 * G * DS;
  return [t(`${b}.ssm_in.weight`, [E, 2 * DI + 2 * G * DS + NH], type), t(`${b}.ssm_conv1d.weight`, [K, conv]), t(`${b}.ssm_conv1d.bias`, [conv]),
    t(`${b}.ssm_dt.bias`, [NH]), t(`${b}.ssm_a`, [1, NH]), t(`${b}.ssm_d`, [1, NH]), t(`${b}.ssm_norm.weight`, [DI / G, G]),
    t(`${b}.ssm_out.weight`, [DI, E], type)];
}

export function moreArchitectures() {
  const list = [];
  // qwen2 (Qwen2.5, the DeepSeek-R1 Qwen distills): llama's decoder with q/k/v biases.
  {
    const E = 128, H = 4, KV = 2, D = 32, F = 352, L = 3;
    list.push(model('qwen2', 'tiny-qwen2', {
      context_length: 32768, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
      'attention.head_count_kv': KV, 'rope.freq_base': { f32: 1e6 }, 'attention.layer_norm_rms_epsilon': eps,
    }, [...globals(E), ...layers(L, (b) => [t(`${b}.attn_norm.weight`, [E]), ...biasedQkv(b, E, H * D, KV * D),
      t(`${b}.attn_output.weight`, [H * D, E], 'F16'), ...denseFfn(b, E, F, ['Q4_0', 'Q4_0', 'Q8_0'])])]));
  }
  // phi3 (Phi-3, Phi-4): fused q/k/v and fused gate/up projections.
  {
    const E = 128, H = 4, KV = 2, D = 32, F = 320, L = 3;
    list.push(model('phi3', 'tiny-phi' /* not 'phi3': llama-vocab.cpp looks up Phi-3's <|end|> token by that name */, {
      context_length: 16384, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
      'attention.head_count_kv': KV, 'rope.dimension_count': D, 'rope.freq_base': { f32: 250000 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
    }, [...globals(E), ...layers(L, (b) => [t(`${b}.attn_norm.weight`, [E]), t(`${b}.attn_qkv.weight`, [E, (H + 2 * KV) * D], 'Q8_0'),
      t(`${b}.attn_output.weight`, [H * D, E], 'F16'), t(`${b}.ffn_norm.weight`, [E]), t(`${b}.ffn_up.weight`, [E, 2 * F], 'Q4_0'),
      t(`${b}.ffn_down.weight`, [F, E], 'Q8_0')])]));
  }
  // glm4moe (GLM-4.5, 4.6, 4.7): q/k/v biases, q/k norms, half-rotary heads of 64, one dense
  // layer then MoE with a shared expert and sigmoid gating.
  {
    const E = 128, H = 4, KV = 2, D = 64, L = 3, X = 8, FX = 64;
    list.push(model('glm4moe', 'tiny-glm4moe', {
      context_length: 131072, embedding_length: E, block_count: L, feed_forward_length: 256, 'attention.head_count': H,
      'attention.head_count_kv': KV, 'attention.key_length': D, 'attention.value_length': D, 'rope.dimension_count': D / 2,
      'rope.freq_base': { f32: 1e6 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 }, leading_dense_block_count: 1,
      expert_feed_forward_length: FX, expert_count: X, expert_used_count: 2, expert_shared_count: 1, expert_weights_scale: { f32: 2.5 },
      expert_weights_norm: true, expert_gating_func: 2,
    }, [...globals(E), ...layers(L, (b, il) => [t(`${b}.attn_norm.weight`, [E]), ...biasedQkv(b, E, H * D, KV * D),
      t(`${b}.attn_output.weight`, [H * D, E], 'F16'), t(`${b}.attn_q_norm.weight`, [D]), t(`${b}.attn_k_norm.weight`, [D]),
      t(`${b}.post_attention_norm.weight`, [E]),
      ...(il === 0 ? [t(`${b}.ffn_gate.weight`, [E, 256], 'Q8_0'), t(`${b}.ffn_down.weight`, [256, E], 'Q8_0'), t(`${b}.ffn_up.weight`, [E, 256], 'Q8_0')]
        : [t(`${b}.ffn_gate_inp.weight`, [E, X]), t(`${b}.exp_probs_b.bias`, [X]), t(`${b}.ffn_gate_exps.weight`, [E, FX, X], 'Q4_0'),
          t(`${b}.ffn_down_exps.weight`, [FX, E, X], 'Q4_0'), t(`${b}.ffn_up_exps.weight`, [E, FX, X], 'Q4_0'),
          t(`${b}.ffn_gate_shexp.weight`, [E, FX], 'Q8_0'), t(`${b}.ffn_down_shexp.weight`, [FX, E], 'Q8_0'), t(`${b}.ffn_up_shexp.weight`, [E, FX], 'Q8_0')])])]));
  }
  // granitehybrid (Granite 4.0 H): Mamba-2 layers with one attention layer in four, MoE with a
  // shared expert on every layer.
  {
    const E = 128, H = 4, KV = 2, D = 32, DI = 256, DS = 32, NH = 8, G = 1, K = 4, L = 4, X = 8, FX = 64;
    list.push(model('granitehybrid', 'tiny-granitehybrid', {
      context_length: 131072, embedding_length: E, block_count: L, feed_forward_length: FX, 'attention.head_count': H,
      'attention.head_count_kv': u32s([0, 0, KV, 0]), 'rope.freq_base': { f32: 10000 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
      'ssm.conv_kernel': K, 'ssm.inner_size': DI, 'ssm.state_size': DS, 'ssm.time_step_rank': NH, 'ssm.group_count': G,
      expert_count: X, expert_used_count: 2, expert_shared_feed_forward_length: 128,
    }, [...globals(E), ...layers(L, (b, il) => [t(`${b}.attn_norm.weight`, [E]),
      ...(il === 2 ? [t(`${b}.attn_q.weight`, [E, H * D], 'F16'), t(`${b}.attn_k.weight`, [E, KV * D], 'F16'), t(`${b}.attn_v.weight`, [E, KV * D], 'F16'),
        t(`${b}.attn_output.weight`, [H * D, E], 'F16')] : mamba2Mixer(b, E, DI, DS, NH, G, K, 'Q8_0')),
      ...moeFfn(b, E, FX, X, 'Q4_0'), t(`${b}.ffn_gate_shexp.weight`, [E, 128], 'Q8_0'), t(`${b}.ffn_up_shexp.weight`, [E, 128], 'Q8_0'),
      t(`${b}.ffn_down_shexp.weight`, [128, E], 'Q8_0')])]));
  }
  // nemotron_h (Nemotron-H): every layer one block: Mamba-2, attention (no feed-forward) or a
  // squared-ReLU feed-forward (up and down only), in the pattern M * - M - M.
  {
    const E = 128, H = 4, KV = 2, D = 32, DI = 256, DS = 32, NH = 8, G = 2, K = 4, F = 384;
    const kinds = ['M', '*', '-', 'M', '-', 'M'];
    list.push(model('nemotron_h', 'tiny-nemotron-h', {
      context_length: 8192, embedding_length: E, block_count: kinds.length, feed_forward_length: u32s(kinds.map((k) => (k === '-' ? F : 0))),
      'attention.head_count': H, 'attention.head_count_kv': u32s(kinds.map((k) => (k === '*' ? KV : 0))), 'attention.key_length': D,
      'attention.value_length': D, 'rope.freq_base': { f32: 10000 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
      'attention.layer_norm_epsilon': { f32: 1e-5 }, 'ssm.conv_kernel': K, 'ssm.inner_size': DI, 'ssm.state_size': DS,
      'ssm.time_step_rank': NH, 'ssm.group_count': G,
    }, [...globals(E), ...layers(kinds.length, (b, il) => [t(`${b}.attn_norm.weight`, [E]),
      ...(kinds[il] === 'M' ? mamba2Mixer(b, E, DI, DS, NH, G, K, 'Q4_0')
        : kinds[il] === '*' ? [t(`${b}.attn_q.weight`, [E, H * D], 'F16'), t(`${b}.attn_k.weight`, [E, KV * D], 'F16'), t(`${b}.attn_v.weight`, [E, KV * D], 'F16'),
          t(`${b}.attn_output.weight`, [H * D, E], 'F16')]
          : [t(`${b}.ffn_up.weight`, [E, F], 'Q8_0'), t(`${b}.ffn_down.weight`, [F, E], 'Q8_0')])])]));
  }
  // jamba (Jamba): Mamba-1 layers with one attention layer in four; MoE every other layer.
  {
    const E = 128, H = 4, KV = 2, DI = 256, DS = 16, R = 8, K = 4, L = 4, X = 4, F = 256;
    list.push(model('jamba', 'tiny-jamba', {
      context_length: 262144, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
      'attention.head_count_kv': u32s([0, 0, KV, 0]), 'attention.layer_norm_rms_epsilon': eps, 'ssm.conv_kernel': K, 'ssm.inner_size': DI,
      'ssm.state_size': DS, 'ssm.time_step_rank': R, expert_count: X, expert_used_count: 2,
    }, [...globals(E), ...layers(L, (b, il) => [t(`${b}.attn_norm.weight`, [E]),
      ...(il === 2 ? [t(`${b}.attn_q.weight`, [E, E], 'F16'), t(`${b}.attn_k.weight`, [E, KV * (E / H)], 'F16'), t(`${b}.attn_v.weight`, [E, KV * (E / H)], 'F16'),
        t(`${b}.attn_output.weight`, [E, E], 'F16')]
        : [t(`${b}.ssm_in.weight`, [E, 2 * DI], 'Q8_0'), t(`${b}.ssm_conv1d.weight`, [K, DI]), t(`${b}.ssm_conv1d.bias`, [DI]),
          t(`${b}.ssm_x.weight`, [DI, R + 2 * DS], 'F16'), t(`${b}.ssm_dt_norm.weight`, [R]), t(`${b}.ssm_dt.weight`, [R, DI], 'F16'),
          t(`${b}.ssm_dt.bias`, [DI]), t(`${b}.ssm_b_norm.weight`, [DS]), t(`${b}.ssm_c_norm.weight`, [DS]), t(`${b}.ssm_a`, [DS, DI]),
          t(`${b}.ssm_d`, [DI]), t(`${b}.ssm_out.weight`, [DI, E], 'Q8_0')]),
      ...(il % 2 === 1 ? moeFfn(b, E, F, X, 'Q4_0') : denseFfn(b, E, F, ['Q4_0', 'Q4_0', 'Q8_0']))])]));
  }
  // qwen35moe (Qwen3.5 / 3.6 MoE): gated delta-net layers with one gated attention layer in
  // four, separate alpha/beta projections, MoE with a gated shared expert, sectioned RoPE.
  {
    const E = 128, H = 4, KV = 2, D = 64, L = 4, X = 8, FX = 64, DS = 32, NV = 4, NK = 2, K = 4;
    const DV = DS * NV, DK = DS * NK;
    list.push(model('qwen35moe', 'tiny-qwen35moe', {
      context_length: 262144, embedding_length: E, block_count: L, feed_forward_length: FX, expert_feed_forward_length: FX,
      expert_shared_feed_forward_length: FX, expert_count: X, expert_used_count: 2, 'attention.head_count': H, 'attention.head_count_kv': KV,
      'attention.key_length': D, 'attention.value_length': D, 'rope.dimension_count': 16, 'rope.dimension_sections': u32s([4, 2, 2, 0]),
      'rope.freq_base': { f32: 1e7 }, 'attention.layer_norm_rms_epsilon': eps, full_attention_interval: 4, 'ssm.conv_kernel': K,
      'ssm.inner_size': DV, 'ssm.state_size': DS, 'ssm.time_step_rank': NV, 'ssm.group_count': NK,
    }, [...globals(E), ...layers(L, (b, il) => [t(`${b}.attn_norm.weight`, [E]), t(`${b}.post_attention_norm.weight`, [E]),
      ...((il + 1) % 4 === 0
        ? [t(`${b}.attn_q.weight`, [E, 2 * H * D], 'F16'), t(`${b}.attn_k.weight`, [E, KV * D], 'F16'), t(`${b}.attn_v.weight`, [E, KV * D], 'F16'),
          t(`${b}.attn_output.weight`, [H * D, E], 'F16'), t(`${b}.attn_q_norm.weight`, [D]), t(`${b}.attn_k_norm.weight`, [D])]
        : [t(`${b}.attn_qkv.weight`, [E, 2 * DK + DV], 'F16'), t(`${b}.attn_gate.weight`, [E, DV], 'F16'), t(`${b}.ssm_conv1d.weight`, [K, 2 * DK + DV]),
          t(`${b}.ssm_dt.bias`, [NV]), t(`${b}.ssm_a`, [NV]), t(`${b}.ssm_beta.weight`, [E, NV], 'F16'), t(`${b}.ssm_alpha.weight`, [E, NV], 'F16'),
          t(`${b}.ssm_norm.weight`, [DS]), t(`${b}.ssm_out.weight`, [DV, E], 'F16')]),
      ...moeFfn(b, E, FX, X, 'Q8_0', { norm: false }), t(`${b}.ffn_gate_inp_shexp.weight`, [E]), t(`${b}.ffn_gate_shexp.weight`, [E, FX], 'IQ4_NL'),
      t(`${b}.ffn_up_shexp.weight`, [E, FX], 'IQ4_NL'), t(`${b}.ffn_down_shexp.weight`, [FX, E], 'IQ4_NL')])]));
  }
  // llama4 (Llama 4 Scout, Maverick): no sliding_window key, as convert_hf_to_gguf writes it, so
  // llama.cpp makes three of every four layers chunked attention over 8,192-token chunks
  // (src/models/llama4.cpp); MoE with a shared expert every other layer.
  {
    const E = 128, H = 4, KV = 2, D = 32, L = 4, X = 4, FX = 64;
    list.push(model('llama4', 'tiny-llama4', {
      context_length: 262144, embedding_length: E, block_count: L, feed_forward_length: 256, 'attention.head_count': H,
      'attention.head_count_kv': KV, 'rope.dimension_count': D, 'rope.freq_base': { f32: 500000 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
      expert_count: X, expert_used_count: 1, expert_feed_forward_length: FX, interleave_moe_layer_step: 2,
    }, [...globals(E), ...layers(L, (b, il) => [t(`${b}.attn_norm.weight`, [E]), t(`${b}.attn_q.weight`, [E, H * D], 'F16'),
      t(`${b}.attn_k.weight`, [E, KV * D], 'F16'), t(`${b}.attn_v.weight`, [E, KV * D], 'F16'), t(`${b}.attn_output.weight`, [H * D, E], 'F16'),
      ...((il + 1) % 2 === 0
        ? [...moeFfn(b, E, FX, X, 'Q4_0'), t(`${b}.ffn_gate_shexp.weight`, [E, FX], 'Q8_0'), t(`${b}.ffn_down_shexp.weight`, [FX, E], 'Q8_0'),
          t(`${b}.ffn_up_shexp.weight`, [E, FX], 'Q8_0')]
        : denseFfn(b, E, 256, ['Q4_0', 'Q4_0', 'Q8_0']))])]));
  }
  // gemma2 (Gemma 2): sliding window on every other layer, soft-capped attention, the tied
  // embedding as the output head, post-norms.
  {
    const E = 128, H = 4, KV = 2, D = 64, F = 384, L = 4;
    list.push(model('gemma2', 'tiny-gemma2', {
      context_length: 8192, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
      'attention.head_count_kv': KV, 'attention.key_length': D, 'attention.value_length': D, 'attention.sliding_window': 512,
      'attn_logit_softcapping': { f32: 50 }, 'final_logit_softcapping': { f32: 30 }, 'rope.freq_base': { f32: 10000 },
      'attention.layer_norm_rms_epsilon': eps,
    }, [...globals(E, { tied: true }), ...layers(L, (b) => [t(`${b}.attn_norm.weight`, [E]), t(`${b}.attn_q.weight`, [E, H * D], 'F16'),
      t(`${b}.attn_k.weight`, [E, KV * D], 'F16'), t(`${b}.attn_v.weight`, [E, KV * D], 'F16'), t(`${b}.attn_output.weight`, [H * D, E], 'F16'),
      t(`${b}.post_attention_norm.weight`, [E]), ...denseFfn(b, E, F, ['Q4_0', 'Q4_0', 'Q4_0']), t(`${b}.post_ffw_norm.weight`, [E])])]));
  }
  return list;
}
