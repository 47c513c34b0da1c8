// Tiny models of the architectures vramcalc maps, with the metadata keys and tensor names and
// shapes llama.cpp's loader expects (llama.cpp src/llama-arch.cpp LLM_TENSOR_NAMES and
// src/llama-model.cpp load_tensors). Shapes are in ggml order: ne[0] is the row length.
// Quantized weights are chosen to exercise the CPU backend's repacking (Q4_0, IQ4_NL, MXFP4)
// beside types it leaves alone (Q8_0, F16), including tensors whose shape it cannot repack.
import { tinyVocab } from './gguf.mjs';

const V = 512;  // vocabulary (tinyVocab)

export function model(arch, name, meta, tensors) {
  const metadata = { 'general.architecture': arch, 'general.name': name, [`${arch}.vocab_size`]: V, ...tinyVocab(V) };
  for (const [k, v] of Object.entries(meta)) metadata[`${arch}.${k}`] = v;
  return { name, arch, metadata, tensors };
}
export const t = (name, ne, type = 'F32') => ({ name, ne, type });

export function globals(E, { tied = false, out = 'F16', embd = 'F16' } = {}) {
  const g = [t('token_embd.weight', [E, V], embd), t('output_norm.weight', [E])];
  if (!tied) g.push(t('output.weight', [E, V], out));
  return g;
}
export function denseFfn(b, E, F, types) {
  return [t(`${b}.ffn_norm.weight`, [E]), t(`${b}.ffn_gate.weight`, [E, F], types[0]), t(`${b}.ffn_up.weight`, [E, F], types[1]),
    t(`${b}.ffn_down.weight`, [F, E], types[2])];
}
export function moeFfn(b, E, F, X, type, { norm = true } = {}) {
  return [...(norm ? [t(`${b}.ffn_norm.weight`, [E])] : []), t(`${b}.ffn_gate_inp.weight`, [E, X]), t(`${b}.ffn_gate_exps.weight`, [E, F, X], type),
    t(`${b}.ffn_up_exps.weight`, [E, F, X], type), t(`${b}.ffn_down_exps.weight`, [F, E, X], type)];
}
function shared(b, E, F, type) {
  return [t(`${b}.ffn_gate_shexp.weight`, [E, F], type), t(`${b}.ffn_up_shexp.weight`, [E, F], type), t(`${b}.ffn_down_shexp.weight`, [F, E], type)];
}
export function gqa(b, E, H, KV, D, { qk_norm = false, type = 'F16', qk_type = type, bias = false } = {}) {
  const ts = [t(`${b}.attn_norm.weight`, [E]), t(`${b}.attn_q.weight`, [E, H * D], qk_type), t(`${b}.attn_k.weight`, [E, KV * D], qk_type),
    t(`${b}.attn_v.weight`, [E, KV * D], type), t(`${b}.attn_output.weight`, [H * D, E], type)];
  if (qk_norm) ts.push(t(`${b}.attn_q_norm.weight`, [D]), t(`${b}.attn_k_norm.weight`, [D]));
  if (bias) ts.push(t(`${b}.attn_q.bias`, [H * D]), t(`${b}.attn_k.bias`, [KV * D]), t(`${b}.attn_v.bias`, [KV * D]), t(`${b}.attn_output.bias`, [E]));
  return ts;
}
export const layers = (n, f) => Array.from({ length: n }, (_, il) => f(`blk.${il}`, il)).flat();
const eps = { f32: 1e-6 };

export function architectures() {
  const list = [];

  // llama: GQA; Q4_K q/k, Q4_0 gate and IQ4_NL up and Q4_0 output head (all repacked on CPU),
  // Q8_0 down (not repacked on x86).
  {
    const E = 256, H = 8, KV = 2, D = 32, F = 768, L = 3;
    list.push(model('llama', 'tiny-llama-q4', {
      context_length: 131072, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
      'attention.head_count_kv': KV, 'rope.dimension_count': D, 'rope.freq_base': { f32: 500000 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
    }, [...globals(E, { out: 'Q4_0' }), ...layers(L, (b) => [...gqa(b, E, H, KV, D, { qk_type: 'Q4_K' }), ...denseFfn(b, E, F, ['Q4_0', 'IQ4_NL', 'Q8_0'])])]));
  }
  // qwen3: head_dim 64 wider than n_embd / n_head, q/k norms, tied embeddings; Q4_0 gate/up.
  {
    const E = 128, H = 4, KV = 2, D = 64, F = 320, L = 5;
    list.push(model('qwen3', 'tiny-qwen3', {
      context_length: 40960, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
      'attention.head_count_kv': KV, 'attention.key_length': D, 'attention.value_length': D, 'rope.freq_base': { f32: 1e6 },
      'attention.layer_norm_rms_epsilon': eps,
    }, [...globals(E, { tied: true }), ...layers(L, (b) => [...gqa(b, E, H, KV, D, { qk_norm: true }), ...denseFfn(b, E, F, ['Q4_0', 'Q4_0', 'Q8_0'])])]));
  }
  // gemma3: 5 sliding-window layers per global one (7 layers: 0-4 and 6 local), window 256.
  {
    const E = 128, H = 4, KV = 2, D = 64, F = 384, L = 7;
    list.push(model('gemma3', 'tiny-gemma3', {
      context_length: 32768, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
      'attention.head_count_kv': KV, 'attention.key_length': D, 'attention.value_length': D, 'attention.sliding_window': 256,
      'attention.sliding_window_pattern': 6, 'rope.freq_base': { f32: 1e6 }, 'rope.freq_base_swa': { f32: 10000 },
      'attention.layer_norm_rms_epsilon': eps,
    }, [...globals(E, { tied: true }), ...layers(L, (b) => [...gqa(b, E, H, KV, D, { qk_norm: true }), t(`${b}.post_attention_norm.weight`, [E]),
      ...denseFfn(b, E, F, ['Q4_0', 'Q4_0', 'Q4_0']), t(`${b}.post_ffw_norm.weight`, [E])])]));
  }
  // deepseek2: MLA (q_lora 64, kv_lora 96 + rope 32 = 128 per cached row), one dense layer then
  // MoE with a shared expert and sigmoid gating.
  {
    const E = 128, H = 4, QL = 64, KL = 96, R = 32, KM = 96, VM = 64, L = 3, X = 8;
    list.push(model('deepseek2', 'tiny-deepseek2', {
      context_length: 163840, embedding_length: E, block_count: L, feed_forward_length: 384, 'attention.head_count': H,
      'attention.head_count_kv': 1, 'attention.key_length': KL + R, 'attention.value_length': KL, 'attention.key_length_mla': KM,
      'attention.value_length_mla': VM, 'attention.q_lora_rank': QL, 'attention.kv_lora_rank': KL, 'rope.dimension_count': R,
      'rope.freq_base': { f32: 10000 }, 'attention.layer_norm_rms_epsilon': eps, leading_dense_block_count: 1,
      expert_feed_forward_length: 64, expert_count: X, expert_used_count: 2, expert_shared_count: 1,
      expert_weights_scale: { f32: 2.5 }, expert_weights_norm: true, expert_gating_func: 2,
    }, [...globals(E), ...layers(L, (b, il) => [t(`${b}.attn_norm.weight`, [E]), t(`${b}.attn_q_a_norm.weight`, [QL]), t(`${b}.attn_kv_a_norm.weight`, [KL]),
      t(`${b}.attn_q_a.weight`, [E, QL], 'F16'), t(`${b}.attn_q_b.weight`, [QL, H * KM], 'F16'), t(`${b}.attn_kv_a_mqa.weight`, [E, KL + R], 'F16'),
      t(`${b}.attn_k_b.weight`, [KM - R, KL, H], 'F16'), t(`${b}.attn_v_b.weight`, [KL, VM, H], 'F16'), t(`${b}.attn_output.weight`, [H * VM, E], 'F16'),
      ...(il === 0 ? denseFfn(b, E, 384, ['Q8_0', 'Q8_0', 'Q8_0'])
        : [...moeFfn(b, E, 64, X, 'Q4_0'), t(`${b}.exp_probs_b.bias`, [X]), ...shared(b, E, 64, 'Q8_0')])])]));
  }
  // qwen3moe: 8 experts, 2 used, Q4_0 experts (repacked as 3-D tensors).
  {
    const E = 128, H = 4, KV = 1, D = 64, L = 4, X = 8;
    list.push(model('qwen3moe', 'tiny-qwen3moe', {
      context_length: 40960, embedding_length: E, block_count: L, feed_forward_length: 384, expert_feed_forward_length: 96,
      expert_count: X, expert_used_count: 2, 'attention.head_count': H, 'attention.head_count_kv': KV, 'attention.key_length': D,
      'attention.value_length': D, 'rope.freq_base': { f32: 1e6 }, 'attention.layer_norm_rms_epsilon': eps,
    }, [...globals(E), ...layers(L, (b) => [...gqa(b, E, H, KV, D, { qk_norm: true }), ...moeFfn(b, E, 96, X, 'Q4_0')])]));
  }
  // gpt-oss: attention sinks, window 128 alternating with full layers, MXFP4 experts, biases.
  {
    const E = 128, H = 4, KV = 1, D = 64, L = 4, X = 8, F = 128;
    list.push(model('gpt-oss', 'tiny-gpt-oss', {
      context_length: 131072, embedding_length: E, block_count: L, feed_forward_length: F, expert_feed_forward_length: F,
      expert_count: X, expert_used_count: 2, 'attention.head_count': H, 'attention.head_count_kv': KV, 'attention.key_length': D,
      'attention.value_length': D, 'rope.dimension_count': D, 'rope.freq_base': { f32: 150000 }, 'rope.scaling.type': 'yarn',
      'rope.scaling.factor': { f32: 32 }, 'rope.scaling.original_context_length': 4096, 'attention.sliding_window': 128,
      'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
    }, [...globals(E), ...layers(L, (b) => [...gqa(b, E, H, KV, D, { bias: true }), t(`${b}.post_attention_norm.weight`, [E]), t(`${b}.attn_sinks.weight`, [H]),
      ...moeFfn(b, E, F, X, 'MXFP4', { norm: false }), t(`${b}.ffn_gate_inp.bias`, [X]), t(`${b}.ffn_gate_exps.bias`, [F, X]),
      t(`${b}.ffn_up_exps.bias`, [F, X]), t(`${b}.ffn_down_exps.bias`, [E, X])])]));
  }
  // mamba2: pure recurrent; d_inner 384, d_state 32, 6 heads, 2 groups. Q4_0 in-projection with
  // 902 rows (not a multiple of 8: left unpacked) and Q4_0 out-projection (repacked).
  {
    const E = 128, DI = 384, DS = 32, NH = 6, G = 2, K = 4, L = 3;
    const conv = DI + 2 * G * DS;
    list.push(model('mamba2', 'tiny-mamba2', {
      context_length: 1048576, embedding_length: E, block_count: L, feed_forward_length: 0, 'attention.head_count': 0,
      'ssm.conv_kernel': K, 'ssm.inner_size': DI, 'ssm.state_size': DS, 'ssm.time_step_rank': NH, 'ssm.group_count': G,
      'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
    }, [...globals(E, { tied: true }), ...layers(L, (b) => [t(`${b}.attn_norm.weight`, [E]), t(`${b}.ssm_in.weight`, [E, 2 * DI + 2 * G * DS + NH], 'Q4_0'),
      t(`${b}.ssm_conv1d.weight`, [K, conv]), t(`${b}.ssm_conv1d.bias`, [conv]), t(`${b}.ssm_dt.bias`, [NH]), t(`${b}.ssm_a`, [1, NH]),
      t(`${b}.ssm_d`, [1, NH]), t(`${b}.ssm_norm.weight`, [DI / G, G]), t(`${b}.ssm_out.weight`, [DI, E], 'Q4_0')])]));
  }
  // qwen3next: gated delta-net layers with one gated full-attention layer in four (8 layers),
  // MoE with a gated shared expert.
  {
    const E = 128, H = 4, KV = 2, D = 64, L = 8, X = 8, F = 64, DI = 128, DS = 32, NV = 4, NK = 2, K = 4;
    list.push(model('qwen3next', 'tiny-qwen3next', {
      context_length: 262144, embedding_length: E, block_count: L, feed_forward_length: F, expert_feed_forward_length: F,
      expert_shared_feed_forward_length: F, expert_count: X, expert_used_count: 2, 'attention.head_count': H, 'attention.head_count_kv': KV,
      'attention.key_length': D, 'attention.value_length': D, 'rope.dimension_count': 16, 'rope.freq_base': { f32: 1e7 },
      'attention.layer_norm_rms_epsilon': eps, full_attention_interval: 4, 'ssm.conv_kernel': K, 'ssm.inner_size': DI,
      'ssm.state_size': DS, 'ssm.time_step_rank': NV, 'ssm.group_count': NK,
    }, [...globals(E), ...layers(L, (b, il) => [t(`${b}.attn_norm.weight`, [E]), t(`${b}.post_attention_norm.weight`, [E]),
      ...((il + 1) % 4 === 0
        ? [t(`${b}.attn_q.weight`, [E, 2 * H * D], 'F16'), t(`${b}.attn_k.weight`, [E, KV * D], 'F16'), t(`${b}.attn_v.weight`, [E, KV * D], 'F16'),
          t(`${b}.attn_output.weight`, [H * D, E], 'F16'), t(`${b}.attn_q_norm.weight`, [D]), t(`${b}.attn_k_norm.weight`, [D])]
        : [t(`${b}.attn_qkv.weight`, [E, 2 * NK * DS + DI], 'F16'), t(`${b}.attn_gate.weight`, [E, DI], 'F16'), t(`${b}.ssm_conv1d.weight`, [K, 2 * NK * DS + DI]),
          t(`${b}.ssm_dt.bias`, [NV]), t(`${b}.ssm_a`, [NV]), t(`${b}.ssm_ba.weight`, [E, 2 * NV], 'F16'), t(`${b}.ssm_norm.weight`, [DI / NV]),
          t(`${b}.ssm_out.weight`, [DI, E], 'F16')]),
      ...moeFfn(b, E, F, X, 'Q8_0', { norm: false }), t(`${b}.ffn_gate_inp_shexp.weight`, [E]), ...shared(b, E, F, 'IQ4_NL')])]));
  }
  // kimi-linear: three KDA layers then one MLA layer (kv_lora 96 + rope 32 = 128, so quantized
  // caches are accepted), MoE after a dense first layer.
  {
    const E = 128, H = 4, HD = 32, K = 4, KL = 96, R = 32, KM = 48, VM = 32, L = 4, X = 8;
    const mla = (il) => il === 3;
    list.push(model('kimi-linear', 'tiny-kimi-linear', {
      context_length: 1048576, embedding_length: E, block_count: L, feed_forward_length: 256, 'attention.head_count': H,
      'attention.head_count_kv': { arr: 'u32', of: [0, 0, 0, 1] }, 'attention.key_length': KL + R, 'attention.value_length': KL,
      'attention.key_length_mla': KM, 'attention.value_length_mla': VM, 'attention.kv_lora_rank': KL, 'rope.dimension_count': R,
      'rope.freq_base': { f32: 10000 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 }, 'ssm.conv_kernel': K, 'kda.head_dim': HD,
      leading_dense_block_count: 1, expert_feed_forward_length: 64, expert_count: X, expert_used_count: 2, expert_shared_count: 1,
      expert_weights_scale: { f32: 2.446 }, expert_gating_func: 2,
    }, [...globals(E), ...layers(L, (b, il) => [t(`${b}.attn_norm.weight`, [E]),
      ...(mla(il)
        ? [t(`${b}.attn_kv_a_norm.weight`, [KL]), t(`${b}.attn_q.weight`, [E, H * KM], 'F16'), t(`${b}.attn_kv_a_mqa.weight`, [E, KL + R], 'F16'),
          t(`${b}.attn_k_b.weight`, [KM - R, KL, H], 'F16'), t(`${b}.attn_v_b.weight`, [KL, VM, H], 'F16'), t(`${b}.attn_output.weight`, [H * VM, E], 'F16')]
        : [t(`${b}.ssm_conv1d_q.weight`, [K, 1, H * HD]), t(`${b}.ssm_conv1d_k.weight`, [K, 1, H * HD]), t(`${b}.ssm_conv1d_v.weight`, [K, 1, H * HD]),
          t(`${b}.attn_q.weight`, [E, H * HD], 'F16'), t(`${b}.attn_k.weight`, [E, H * HD], 'F16'), t(`${b}.attn_v.weight`, [E, H * HD], 'F16'),
          t(`${b}.ssm_f_a.weight`, [E, HD], 'F16'), t(`${b}.ssm_f_b.weight`, [HD, H * HD], 'F16'), t(`${b}.ssm_beta.weight`, [E, H], 'F16'),
          t(`${b}.ssm_a`, [1, H]), t(`${b}.ssm_dt.bias`, [H * HD]), t(`${b}.ssm_g_a.weight`, [E, HD], 'F16'), t(`${b}.ssm_g_b.weight`, [HD, H * HD], 'F16'),
          t(`${b}.ssm_norm.weight`, [HD]), t(`${b}.attn_output.weight`, [H * HD, E], 'F16')]),
      ...(il === 0 ? denseFfn(b, E, 256, ['Q8_0', 'Q8_0', 'Q8_0'])
        : [...moeFfn(b, E, 64, X, 'Q8_0'), ...shared(b, E, 64, 'Q8_0'), t(`${b}.exp_probs_b.bias`, [X])])])]));
  }
  return list;
}

// Smaller grids on more type and shape mixes, mainly for the CPU model buffer (which tensors the
// CPU backend repacks, and what stays memory-mapped).
export function repackVariants() {
  const list = [];
  const llamaLike = (name, E, H, KV, D, F, L, types) => model('llama', name, {
    context_length: 8192, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
    'attention.head_count_kv': KV, 'rope.dimension_count': D, 'rope.freq_base': { f32: 10000 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
  }, [...globals(E, { out: types.out, embd: types.embd }), ...layers(L, (b) => [...gqa(b, E, H, KV, D, { type: types.attn, qk_type: types.qk ?? types.attn }),
    ...denseFfn(b, E, F, types.ffn)])]);
  // Everything Q4_0, the embedding included (read by row lookups, so never repacked).
  list.push(llamaLike('tiny-llama-all-q4_0', 128, 4, 2, 32, 352, 2, { out: 'Q4_0', embd: 'Q4_0', attn: 'Q4_0', ffn: ['Q4_0', 'Q4_0', 'Q4_0'] }));
  // IQ4_NL attention, MXFP4 dense feed-forward.
  list.push(llamaLike('tiny-llama-iq4nl-mxfp4', 128, 4, 2, 32, 256, 2, { out: 'F16', embd: 'F16', attn: 'IQ4_NL', ffn: ['MXFP4', 'MXFP4', 'Q8_0'] }));
  // Q4_K attention (256-value blocks) beside F16, IQ4_NL output head.
  list.push(llamaLike('tiny-llama-q4k', 256, 4, 4, 64, 512, 2, { out: 'IQ4_NL', embd: 'F16', attn: 'F16', qk: 'Q4_K', ffn: ['Q8_0', 'Q4_K', 'Q4_0'] }));
  // MoE experts in IQ4_NL and MXFP4.
  for (const [name, type] of [['tiny-qwen3moe-iq4nl', 'IQ4_NL'], ['tiny-qwen3moe-mxfp4', 'MXFP4']]) {
    const E = 128, H = 4, KV = 2, D = 32, L = 2, X = 4;
    list.push(model('qwen3moe', name, {
      context_length: 8192, embedding_length: E, block_count: L, feed_forward_length: 256, expert_feed_forward_length: 160,
      expert_count: X, expert_used_count: 2, 'attention.head_count': H, 'attention.head_count_kv': KV, 'attention.key_length': D,
      'attention.value_length': D, 'rope.freq_base': { f32: 1e6 }, 'attention.layer_norm_rms_epsilon': eps,
    }, [...globals(E, { tied: true }), ...layers(L, (b) => [...gqa(b, E, H, KV, D, { qk_norm: true, type: 'Q4_0' }), ...moeFfn(b, E, 160, X, type)])]));
  }
  return list;
}
