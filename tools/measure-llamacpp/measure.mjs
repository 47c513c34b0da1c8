#!/usr/bin/env node
// Measures what llama.cpp allocates, to the byte, over a grid of settings on tiny GGUF models
// written here, and writes tests/data/llamacpp-measured.json. README.md says how and why.
//
//   cd tools/measure-llamacpp && npm ci && node measure.mjs [--out FILE] [--only ARCH] [--quick] [--more]
//   --more: the architectures of architectures-more.mjs, into tests/data/llamacpp-measured-more.json
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { architectures, repackVariants } from './architectures.mjs';
import { moreArchitectures } from './architectures-more.mjs';
import { writeGguf, typeId } from './gguf.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const arg = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };

import { setAside } from './split.mjs';

// The grid. Each case is what llama-server would be given: -c C -np S -b B -ub U -fa on|off -ctk K
// -ctv V [--swa-full]. Defaults as llama-server's: -c 4096 -np 1 -b 2048 -ub 512, f16 caches.
function grid(model, quick, small) {
  const base = { c: 4096, np: 1, b: 2048, ub: 512, fa: 'on', ctk: 'f16', ctv: 'f16', swa_full: false };
  const cases = [];
  const add = (o) => cases.push({ ...base, ...o });
  if (small) {
    add({});
    add({ c: 5000, np: 2, fa: 'off' });
    add({ c: 3000, ub: 256, ctk: 'q8_0', ctv: 'q8_0' });
    return ids(model, cases);
  }
  for (const fa of ['on', 'off']) {
    for (const c of quick ? [1000, 4096] : [256, 1000, 3000, 4096, 7777, 16384, 32768]) add({ c, fa });
    for (const np of quick ? [3] : [2, 3, 4]) for (const c of quick ? [5000] : [4096, 5000, 12345]) add({ c, np, fa });
    for (const ub of quick ? [128] : [64, 128, 256, 1024]) add({ c: 8192, ub, fa });
  }
  add({ b: 256, ub: 512 });
  add({ c: 10000, np: 2, ub: 256, fa: 'off' });
  add({ c: 2500, np: 4, ub: 64, fa: 'on' });
  add({ c: 3000, np: 3, ub: 1024, fa: 'off' });  // n_batch below n_ubatch: the ubatch is clamped to the batch
  const kv = quick ? [['q8_0', 'q8_0'], ['q4_0', 'f16']] : [['q8_0', 'q8_0'], ['q4_0', 'q4_0'], ['q8_0', 'f16'], ['f16', 'q8_0'], ['q4_0', 'q8_0'], ['q8_0', 'q4_0'], ['f16', 'q4_0']];
  for (const [ctk, ctv] of kv) add({ ctk, ctv, fa: 'on' });
  add({ ctk: 'q8_0', ctv: 'f16', fa: 'off' });   // quantized K alone is accepted without flash attention
  add({ ctk: 'q4_0', ctv: 'f16', fa: 'off', c: 6000, np: 2 });
  add({ ctk: 'f16', ctv: 'q8_0', fa: 'off' });   // quantized V without flash attention: refused
  add({ ctk: 'q8_0', ctv: 'q8_0', fa: 'on', c: 6000, np: 2, ub: 256 });
  add({ ctk: 'q4_0', ctv: 'q4_0', fa: 'on', c: 9999, np: 3, ub: 128 });
  add({ ctk: 'q8_0', ctv: 'f16', fa: 'off', c: 20000, np: 4, ub: 1024 });
  if (model.metadata[`${model.arch}.attention.sliding_window`]) {
    add({ swa_full: true });
    add({ swa_full: true, np: 4, c: 8192 });
    add({ np: 4, c: 32768, fa: 'off' });
  }
  return ids(model, cases);
}

function ids(model, cases) {
  for (const k of cases) {
    k.id = `${model.name}|c${k.c}|np${k.np}|b${k.b}|ub${k.ub}|fa-${k.fa}|k-${k.ctk}|v-${k.ctv}${k.swa_full ? '|swa-full' : ''}`;
  }
  return cases;
}

const libDir = () => path.join(here, 'node_modules/@node-llama-cpp/linux-x64/bins/linux-x64');

// The prebuilt binary loads the best CPU variant for the machine. Keep only the AVX2 one
// (libggml-cpu-haswell.so): the AMX variant aborts on MLA models, and one variant everywhere
// keeps the repacking choices (which depend on the instruction set) the same on every machine.
function keepOnlyAvx2Backend() {
  const dir = libDir();
  const aside = path.join(dir, 'unused-cpu-variants');
  fs.mkdirSync(aside, { recursive: true });
  for (const f of fs.readdirSync(dir)) {
    if (/^libggml-cpu-.*\.so$/.test(f) && f !== 'libggml-cpu-haswell.so') fs.renameSync(path.join(dir, f), path.join(aside, f));
  }
}

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed (${r.status})`);
}

// The llama.cpp source node-llama-cpp ships (a git bundle) gives the headers the probe is built
// against and the commit we report.
function buildProbe(work) {
  const bundle = path.join(here, 'node_modules/node-llama-cpp/llama/gitRelease.bundle');
  const src = path.join(work, 'llama.cpp');
  run('git', ['clone', '-q', '--no-checkout', bundle, src]);
  run('git', ['-C', src, 'checkout', '-q', 'HEAD', '--', 'include', 'ggml/include', 'src/llama-ext.h', 'CMakeLists.txt']);
  const commit = spawnSync('git', ['-C', src, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
  const cmake = fs.readFileSync(path.join(src, 'CMakeLists.txt'), 'utf8');
  const v = ['MAJOR', 'MINOR', 'PATCH'].map((p) => cmake.match(new RegExp(`LLAMA_VERSION_${p} (\\d+)`))[1]).join('.');
  const so = path.join(work, 'breakdown_probe.so');
  run('g++', ['-std=c++17', '-O1', '-shared', '-fPIC', `-I${src}/include`, `-I${src}/ggml/include`, `-I${src}/src`,
    path.join(here, 'breakdown_probe.cpp'), '-o', so, '-ldl']);
  return { commit, version: v, so };
}

// ---- child: runs inside node with the probe preloaded ----
async function child(work) {
  const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
  const logs = [];
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.debug, logger: (_, msg) => logs.push(msg) });
  const models = JSON.parse(fs.readFileSync(path.join(work, 'models.json'), 'utf8'));
  const results = path.join(work, 'results.jsonl');
  const done = new Set(fs.existsSync(results) ? fs.readFileSync(results, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).id) : []);
  const typeOf = (name) => typeId(name.toUpperCase());
  for (const m of models) {
    const todo = m.cases.filter((k) => !done.has(k.id));
    if (!todo.length) continue;
    logs.length = 0;
    let model;
    try {
      model = await llama.loadModel({ modelPath: m.file, gpuLayers: 0 });
    } catch (e) {
      await new Promise((r) => setTimeout(r, 50));
      const why = [String(e?.message ?? e), ...logs.join('').split('\n').filter((l) => /error loading/i.test(l)).map((l) => l.slice(0, 300)).slice(0, 2)];
      for (const k of todo) fs.appendFileSync(results, `${JSON.stringify({ id: k.id, created: false, errors: why })}\n`);
      continue;
    }
    await new Promise((r) => setTimeout(r, 50));  // let the log callback drain
    const repacked = [...logs.join('').matchAll(/repack tensor (\S+) with ([A-Za-z0-9_]*?\d+x\d+)/g)].map((x) => [x[1], x[2]]);
    for (const k of todo) {
      fs.appendFileSync(path.join(work, 'current'), `${k.id}\n`);
      logs.length = 0;
      process.env.VC_OUT = path.join(work, 'probe.jsonl');
      fs.writeFileSync(process.env.VC_OUT, '');
      process.env.VC_CASE = [`n_ctx=${k.c}`, `n_batch=${k.b}`, `n_ubatch=${k.ub}`, `n_seq_max=${k.np}`, `flash_attn=${k.fa === 'on' ? 1 : 0}`,
        `type_k=${typeOf(k.ctk)}`, `type_v=${typeOf(k.ctv)}`, `swa_full=${k.swa_full ? 1 : 0}`, 'kv_unified=0', 'n_threads=1'].join(',');
      const ctx = new llama._bindings.AddonContext(model._model, { contextSize: k.c, batchSize: k.b, sequences: k.np, threads: 1 });
      let created = false;
      try { created = await ctx.init(); } catch { created = false; }
      await new Promise((r) => setTimeout(r, 20));  // let the log callback drain
      const probe = fs.readFileSync(process.env.VC_OUT, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)).pop() ?? { created: false };
      const out = { id: k.id, ...probe };
      if (!probe.created) out.errors = logs.join('').split('\n').filter((l) => l.includes('llama_init_from_model:')).map((l) => l.trim()).slice(0, 4);
      if (created) await ctx.dispose();
      // node-llama-cpp's own formula estimator for the same settings (its contextSize is per sequence).
      try {
        const est = model.fileInsights.estimateContextResourceRequirements({
          contextSize: Math.floor(k.c / k.np), modelGpuLayers: 0, batchSize: Math.min(k.b, k.ub), sequences: k.np,
          flashAttention: k.fa === 'on', swaFullCache: k.swa_full, kvCacheKeyType: typeOf(k.ctk), kvCacheValueType: typeOf(k.ctv),
        });
        out.node_llama_cpp_estimate = est.cpuRam + est.gpuVram;
      } catch { /* the estimator does not cover every architecture */ }
      if (k === todo[0]) {
        out.repacked = repacked;
        try {
          const me = model.fileInsights.estimateModelResourceRequirements({ gpuLayers: 0 });
          out.node_llama_cpp_model_estimate = me.cpuRam + me.gpuVram;
        } catch { /* as above */ }
      }
      fs.appendFileSync(results, `${JSON.stringify(out)}\n`);
    }
    await model.dispose();
  }
  await llama.dispose();
}

// The grid's models written as GGUF files into `dir`, each with its cases (--quick, --only ARCH).
function writeModels(dir) {
  const quick = args.includes('--quick');
  const only = arg('--only');
  const all = args.includes('--more') ? moreArchitectures().map((m) => ({ m, small: false }))
    : [...architectures().map((m) => ({ m, small: false })), ...repackVariants().map((m) => ({ m, small: true }))];
  const models = all.filter(({ m }) => !only || m.arch === only).map(({ m, small }) => {
    const file = path.join(dir, `${m.name}.gguf`);
    const written = writeGguf(file, m.metadata, m.tensors);
    return { ...m, file, file_bytes: written.file_bytes, tensors: written.tensors, cases: grid(m, quick, small) };
  });
  fs.writeFileSync(path.join(dir, 'models.json'), JSON.stringify(models));
  return models;
}

// ---- parent ----
async function main() {
  if (args[0] === '--child') return child(args[1]);
  if (args[0] === '--emit') return (await import('./native-cases.mjs')).emit(args[1], writeModels);
  if (args[0] === '--collect') return (await import('./native-cases.mjs')).collect(args[1], args[2], arg('--out'), arg('--about'));
  if (!fs.existsSync(libDir())) throw new Error('node-llama-cpp is not installed here: run `npm ci` in tools/measure-llamacpp first');
  keepOnlyAvx2Backend();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vc-measure-'));
  const probe = buildProbe(work);
  const models = writeModels(work);
  const env = { ...process.env, LD_PRELOAD: probe.so, VC_LIBLLAMA: path.join(libDir(), 'libllama.v0.4.0.so') };
  const total = models.reduce((n, m) => n + m.cases.length, 0);
  const results = path.join(work, 'results.jsonl');
  const count = () => (fs.existsSync(results) ? fs.readFileSync(results, 'utf8').split('\n').filter(Boolean).length : 0);
  // A case that kills the process is recorded as such and the run resumes after it.
  for (let tries = 0; count() < total && tries < 50; tries++) {
    const before = count();
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', work], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    if (count() < total) {
      const current = fs.existsSync(path.join(work, 'current')) ? fs.readFileSync(path.join(work, 'current'), 'utf8').trim().split('\n').pop() : '';
      const recorded = fs.readFileSync(results, 'utf8').includes(`"id":${JSON.stringify(current)}`);
      if (!current || recorded) { process.stderr.write(r.stderr); break; }
      fs.appendFileSync(results, `${JSON.stringify({ id: current, created: false, crashed: `exit ${r.status ?? r.signal}` })}\n`);
      if (count() === before) break;
    }
  }
  const byId = new Map(fs.readFileSync(results, 'utf8').split('\n').filter(Boolean).map((l) => { const o = JSON.parse(l); return [o.id, o]; }));
  const cpu = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const out = {
    what: 'llama.cpp allocations measured to the byte (llama_get_memory_breakdown) on tiny generated GGUF models; tools/measure-llamacpp/README.md',
    llama_cpp: { version: probe.version, commit: probe.commit, via: 'node-llama-cpp@3.21.1 prebuilt CPU binary (llama.cpp release v0.4.0)', cpu_variant: 'libggml-cpu-haswell.so (AVX2)' },
    machine: { cpu: (cpu.match(/model name\s*:\s*(.*)/) || [])[1] ?? os.arch(), cores: os.cpus().length, memory_bytes: os.totalmem(), os: `${os.type()} ${os.release()}`, threads: 1 },
    set_aside_rule: 'set_aside = (first 4 bytes of SHA-256(id), big-endian) % 100 < 30; models split the same way by name',
    settings_meaning: 'llama-server -c c -np np -b b -ub ub -fa fa -ctk ctk -ctv ctv [--swa-full]; kv_unified off, mmap on, CPU only',
    models: models.map((m) => {
      const first = byId.get(m.cases[0].id) ?? {};
      const model_buffers = {};
      for (const [buft, b] of Object.entries(first.buffers ?? {})) if (b.model) model_buffers[buft] = b.model;
      return {
        name: m.name, arch: m.arch, set_aside: setAside(m.name), file_bytes: m.file_bytes,
        metadata: Object.fromEntries(Object.entries(m.metadata).filter(([k]) => !k.startsWith('tokenizer.'))),
        tokenizer: 'tinyVocab(512) in tools/measure-llamacpp/gguf.mjs',
        tensors: m.tensors.map((x) => [x.name, x.ne, x.type]),
        model_buffers, repacked: first.repacked ?? [], node_llama_cpp_model_estimate: first.node_llama_cpp_model_estimate ?? null,
      };
    }),
    cases: models.flatMap((m) => m.cases.map((k) => {
      const r = byId.get(k.id) ?? { created: false, crashed: 'not run' };
      const o = { id: k.id, model: m.name, set_aside: setAside(k.id), settings: { c: k.c, np: k.np, b: k.b, ub: k.ub, fa: k.fa, ctk: k.ctk, ctv: k.ctv, swa_full: k.swa_full }, created: !!r.created };
      if (r.created) {
        o.n_ctx = r.n_ctx; o.n_ctx_seq = r.n_ctx_seq; o.n_batch = r.n_batch; o.n_ubatch = r.n_ubatch; o.n_seq_max = r.n_seq_max;
        const cpuBuf = r.buffers?.CPU ?? {};
        o.context_bytes = cpuBuf.context ?? 0;
        o.compute_bytes = cpuBuf.compute ?? 0;
      } else {
        o.errors = r.errors ?? []; if (r.crashed) o.crashed = r.crashed;
      }
      if (r.node_llama_cpp_estimate != null) o.node_llama_cpp_estimate = r.node_llama_cpp_estimate;
      return o;
    })),
  };
  const dest = arg('--out', path.join(here, `../../tests/data/llamacpp-measured${args.includes('--more') ? '-more' : ''}.json`));
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  fs.writeFileSync(dest, `${JSON.stringify(out, null, 0).replace(/\{"id"/g, '\n{"id"').replace(/\{"name"/g, '\n{"name"')}\n`);
  fs.rmSync(work, { recursive: true, force: true });
  const created = out.cases.filter((c) => c.created).length;
  console.log(`${out.cases.length} cases (${created} contexts created) on ${models.length} models -> ${dest}`);
}

await main();
