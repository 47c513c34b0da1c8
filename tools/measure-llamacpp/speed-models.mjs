// Full-size models with zero weights for llama-bench on a GPU machine (gpu-run.sh): decode and prefill
// speed depend on the bytes and shapes a token touches, not on the weights' values. Shapes are the
// published configs' (the model named in each entry); every 2-D weight is Q4_K except as noted.
// Only the GGUF header is written here; gpu-run.sh extends each file to its size with `truncate`.
//
//   node speed-models.mjs DIR      # DIR/<name>.gguf headers and DIR/speed-models.json
import fs from 'node:fs';
import path from 'node:path';

import { denseFfn, gqa, layers, moeFfn, t } from './architectures.mjs';
import { tinyVocab, writeGguf } from './gguf.mjs';

function model(arch, name, like, V, meta, body, { tied = false, type = 'Q4_K', head = 'Q6_K' } = {}) {
  const E = meta.embedding_length;
  const metadata = { 'general.architecture': arch, 'general.name': name, [`${arch}.vocab_size`]: V, ...tinyVocab(V) };
  for (const [k, v] of Object.entries(meta)) metadata[`${arch}.${k}`] = v;
  const tensors = [t('token_embd.weight', [E, V], type), t('output_norm.weight', [E]), ...(tied ? [] : [t('output.weight', [E, V], head)]), ...body];
  return { name, arch, like, metadata, tensors };
}

// Llama 3 geometry (meta-llama/Llama-3.2-1B, Llama-3.1-8B, Llama-3.3-70B config.json).
function llama(name, like, { E, L, H, KV, F, tied = false, type = 'Q4_K' }) {
  const D = E / H;
  return model('llama', name, like, 128256, {
    context_length: 131072, embedding_length: E, block_count: L, feed_forward_length: F, 'attention.head_count': H,
    'attention.head_count_kv': KV, 'rope.dimension_count': D, 'rope.freq_base': { f32: 500000 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-5 },
  }, layers(L, (b) => [...gqa(b, E, H, KV, D, { type }), ...denseFfn(b, E, F, [type, type, type])]), { tied, type, head: type === 'Q4_K' ? 'Q6_K' : type });
}

export function speedModels() {
  return [
    llama('llama-1b-q4k', 'Llama 3.2 1B', { E: 2048, L: 16, H: 32, KV: 8, F: 8192, tied: true }),
    llama('llama-8b-q4k', 'Llama 3.1 8B', { E: 4096, L: 32, H: 32, KV: 8, F: 14336 }),
    llama('llama-8b-q8', 'Llama 3.1 8B', { E: 4096, L: 32, H: 32, KV: 8, F: 14336, type: 'Q8_0' }),
    llama('llama-70b-q4k', 'Llama 3.3 70B', { E: 8192, L: 80, H: 64, KV: 8, F: 28672 }),
    // Qwen/Qwen3-30B-A3B config.json: 48 layers, 128 experts of 768, 8 used, head_dim 128, 4 KV heads.
    model('qwen3moe', 'qwen3-30b-a3b-q4k', 'Qwen3-30B-A3B', 151936, {
      context_length: 40960, embedding_length: 2048, block_count: 48, feed_forward_length: 6144, expert_feed_forward_length: 768,
      expert_count: 128, expert_used_count: 8, 'attention.head_count': 32, 'attention.head_count_kv': 4, 'attention.key_length': 128,
      'attention.value_length': 128, 'rope.freq_base': { f32: 1e6 }, 'attention.layer_norm_rms_epsilon': { f32: 1e-6 },
    }, layers(48, (b) => [...gqa(b, 2048, 32, 4, 128, { qk_norm: true, type: 'Q4_K' }), ...moeFfn(b, 2048, 768, 128, 'Q4_K')])),
  ];
}

if (process.argv[2]) {
  const dir = process.argv[2];
  fs.mkdirSync(dir, { recursive: true });
  const list = speedModels().map((m) => {
    const w = writeGguf(path.join(dir, `${m.name}.gguf`), m.metadata, m.tensors, { data: false });
    const params = w.tensors.reduce((n, x) => n + x.ne.reduce((a, b) => a * b, 1), 0);
    return { name: m.name, like: m.like, arch: m.arch, file_bytes: w.file_bytes, params };
  });
  fs.writeFileSync(path.join(dir, 'speed-models.json'), JSON.stringify(list, null, 1));
  for (const m of list) console.log(`${m.name}\t${m.file_bytes}\t${m.params}`);
}
