// Writes GGUF v3 files (ggml docs/gguf.md): magic, version, tensor count, key count, key/values,
// tensor infos, padding to general.alignment, tensor data. The data is zeros: these models are
// only loaded and given contexts, never asked for a sensible token.
import fs from 'node:fs';

// ggml type ids (ggml.h enum ggml_type) with [values per block, bytes per block].
export const TYPES = {
  F32: [0, 1, 4], F16: [1, 1, 2], Q4_0: [2, 32, 18], Q8_0: [8, 32, 34], Q4_K: [12, 256, 144], Q6_K: [14, 256, 210], IQ4_NL: [20, 32, 18], MXFP4: [39, 32, 17],
};
export const typeId = (name) => TYPES[name][0];
export function tensorBytes(type, ne) {
  const [, block, bytes] = TYPES[type];
  if (ne[0] % block !== 0) throw new Error(`row of ${ne[0]} values is not whole ${type} blocks`);
  return (ne.reduce((a, b) => a * b, 1) / block) * bytes;
}

const ALIGN = 32;

class Out {
  constructor() { this.parts = []; this.size = 0; }
  push(buf) { this.parts.push(buf); this.size += buf.length; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  i32(v) { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  u8(v) { this.push(Buffer.from([v])); }
  str(s) { const b = Buffer.from(s, 'utf8'); this.u64(b.length); this.push(b); }
}

// A metadata value is tagged: {u32: 5}, {f32: 0.5}, {str: "x"}, {bool: true}, {i32: -1},
// {arr: "u32"|"i32"|"f32"|"str", of: [...]}; a bare number is u32 and a bare string is str.
function writeValue(out, v) {
  if (typeof v === 'number') v = { u32: v };
  if (typeof v === 'string') v = { str: v };
  if (typeof v === 'boolean') v = { bool: v };
  const [kind] = Object.keys(v);
  const code = { u32: 4, i32: 5, f32: 6, bool: 7, str: 8, arr: 9 }[kind];
  out.u32(code);
  if (kind === 'arr') {
    const elem = { u32: 4, i32: 5, f32: 6, str: 8 }[v.arr];
    out.u32(elem);
    out.u64(v.of.length);
    for (const x of v.of) {
      if (v.arr === 'str') out.str(x); else out[v.arr](x);
    }
  } else if (kind === 'bool') out.u8(v.bool ? 1 : 0);
  else out[kind](v[kind]);
}

// A 512-entry SentencePiece-style ("llama") vocabulary: unk, bos, eos, the 256 byte tokens and
// plain pieces, enough for llama.cpp's tokenizer loader.
export function tinyVocab(n = 512) {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  for (let b = 0; b < 256; b++) { tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`); types.push(6); }
  while (tokens.length < n) { tokens.push(`\u2581t${tokens.length}`); types.push(1); }
  return {
    'tokenizer.ggml.model': 'llama',
    'tokenizer.ggml.tokens': { arr: 'str', of: tokens },
    'tokenizer.ggml.scores': { arr: 'f32', of: tokens.map(() => 0) },
    'tokenizer.ggml.token_type': { arr: 'i32', of: types },
    'tokenizer.ggml.bos_token_id': 1,
    'tokenizer.ggml.eos_token_id': 2,
    'tokenizer.ggml.unknown_token_id': 0,
    'tokenizer.ggml.add_bos_token': true,
    'tokenizer.ggml.add_eos_token': false,
  };
}

// metadata: {key: value}; tensors: [{name, ne: [ggml order], type: 'F16'|...}]. Returns the file size.
// With {data: false} only the header is written: `truncate -s file_bytes` then makes the whole file
// (a sparse one, all zeros), which is how gpu-run.sh makes models of many gigabytes.
export function writeGguf(path, metadata, tensors, { data = true } = {}) {
  const out = new Out();
  out.u32(0x46554747);  // "GGUF"
  out.u32(3);
  out.u64(tensors.length);
  const kv = { 'general.alignment': ALIGN, ...metadata };
  out.u64(Object.keys(kv).length);
  for (const [k, v] of Object.entries(kv)) { out.str(k); writeValue(out, v); }
  let offset = 0;
  const sized = tensors.map((t) => ({ ...t, bytes: tensorBytes(t.type, t.ne) }));
  for (const t of sized) {
    out.str(t.name);
    out.u32(t.ne.length);
    for (const n of t.ne) out.u64(n);
    out.u32(typeId(t.type));
    out.u64(offset);
    offset += Math.ceil(t.bytes / ALIGN) * ALIGN;
  }
  const header = Math.ceil(out.size / ALIGN) * ALIGN;
  out.push(Buffer.alloc(header - out.size));
  const fd = fs.openSync(path, 'w');
  for (const p of out.parts) fs.writeSync(fd, p);
  if (data) fs.writeSync(fd, Buffer.alloc(offset));
  fs.closeSync(fd);
  return { file_bytes: header + offset, tensors: sized };
}
