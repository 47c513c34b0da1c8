// The grid of measure.mjs for a native llama.cpp build (native_probe.cpp), such as a CUDA build on a
// GPU machine (gpu-run.sh): --emit writes the models and a case list; --collect turns the probe's
// answers into tests/data/llamacpp-cuda-measured.json. README.md says how and why.
//
//   node measure.mjs --emit DIR                      # DIR/*.gguf, DIR/cases.tsv, DIR/cases.json
//   node measure.mjs --collect DIR RESULTS.jsonl --out FILE [--about ABOUT.json]
import fs from 'node:fs';
import path from 'node:path';

import { typeId } from './gguf.mjs';
import { setAside } from './split.mjs';

const ALL_LAYERS = 999;  // llama-server -ngl 999: every repeating layer and the output head on the GPU

// Every case of the CPU grid with the whole model on the GPU, then the placements people run when a
// model does not fit: half the layers (-ngl L/2), none (-ngl 0, the GPU still takes big batches), and
// for mixture-of-experts models the routed experts in host memory (-ot exps=CPU).
function placements(m) {
  const layers = m.metadata[`${m.arch}.block_count`];
  const moe = m.tensors.some((t) => /_exps\.weight$/.test(t.name));
  const out = m.cases.map((k) => ({ ...k, ngl: ALL_LAYERS, override: '-' }));
  if (m.cases.length < 10) return out;  // the repack variants: their three cases are enough
  const base = m.cases[0];
  const variant = (extra, tag) => out.push({ ...base, ...extra, id: `${base.id}|${tag}` });
  for (const fa of ['on', 'off']) {
    variant({ fa, ngl: Math.floor(layers / 2), override: '-' }, `ngl${Math.floor(layers / 2)}|${fa}`);
    variant({ fa, ngl: 0, override: '-' }, `ngl0|${fa}`);
    if (moe) variant({ fa, ngl: ALL_LAYERS, override: 'exps' }, `ot-exps|${fa}`);
  }
  return out;
}

const settings = (k) => [`n_ctx=${k.c}`, `n_batch=${k.b}`, `n_ubatch=${k.ub}`, `n_seq_max=${k.np}`, `flash_attn=${k.fa === 'on' ? 1 : 0}`,
  `type_k=${typeId(k.ctk.toUpperCase())}`, `type_v=${typeId(k.ctv.toUpperCase())}`, `swa_full=${k.swa_full ? 1 : 0}`, 'kv_unified=0', 'n_threads=4'].join(',');

export function emit(dir, writeModels) {
  fs.mkdirSync(dir, { recursive: true });
  const models = writeModels(dir);
  const cases = models.flatMap((m) => placements(m).map((k) => ({ ...k, model: m.name })));
  fs.writeFileSync(path.join(dir, 'cases.json'), JSON.stringify(cases));
  fs.writeFileSync(path.join(dir, 'cases.tsv'), cases.map((k) => [`${k.model}.gguf`, k.id, k.ngl, k.override, settings(k)].join('\t')).join('\n') + '\n');
  console.log(`${cases.length} cases on ${models.length} models -> ${dir}`);
}

export function collect(dir, resultsFile, dest, aboutFile = null) {
  const models = JSON.parse(fs.readFileSync(path.join(dir, 'models.json'), 'utf8'));
  const cases = JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8'));
  const byId = new Map(fs.readFileSync(resultsFile, 'utf8').split('\n').filter(Boolean).map((l) => { const o = JSON.parse(l); return [o.id, o]; }));
  const about = aboutFile && fs.existsSync(aboutFile) ? JSON.parse(fs.readFileSync(aboutFile, 'utf8')) : {};
  const out = {
    what: 'llama.cpp allocations per buffer type measured to the byte (llama_get_memory_breakdown) with a CUDA build, on the tiny generated GGUF models of tests/data/llamacpp-measured.json; tools/measure-llamacpp/README.md',
    llama_cpp: { commit: about.commit ?? null, build: about.build ?? null },
    machine: about.machine ?? null,
    set_aside_rule: 'set_aside = (first 4 bytes of SHA-256(id), big-endian) % 100 < 30',
    settings_meaning: 'llama-server -c c -np np -b b -ub ub -fa fa -ctk ctk -ctv ctv [--swa-full] -ngl ngl [-ot exps=CPU]; kv_unified off, mmap on',
    models: models.map((m) => m.name),
    cases: cases.map((k) => {
      const r = byId.get(k.id) ?? { created: false, crashed: 'not run' };
      const o = { id: k.id, model: k.model, set_aside: setAside(k.id),
        settings: { c: k.c, np: k.np, b: k.b, ub: k.ub, fa: k.fa, ctk: k.ctk, ctv: k.ctv, swa_full: k.swa_full, ngl: k.ngl, ot: k.override }, created: !!r.created };
      if (r.created) {
        o.n_ctx = r.n_ctx; o.n_ctx_seq = r.n_ctx_seq; o.n_batch = r.n_batch; o.n_ubatch = r.n_ubatch; o.n_seq_max = r.n_seq_max;
        o.buffers = r.buffers;
      } else {
        o.errors = (r.errors ?? []).map((e) => e.trim().slice(0, 300)); if (r.crashed) o.crashed = r.crashed;
      }
      return o;
    }),
  };
  fs.writeFileSync(dest, `${JSON.stringify(out).replace(/\{"id"/g, '\n{"id"')}\n`);
  console.log(`${out.cases.length} cases (${out.cases.filter((c) => c.created).length} created) -> ${dest}`);
}
