// The calculator page. Every figure shown comes from the API (/api/*): this file only gathers
// inputs, keeps them in the URL, and draws what the library returned. It computes no figure.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const PARAMS = ['model', 'quant', 'context', 'seqs', 'cache-dtype', 'overhead'];
const COMPARE_PARAMS = ['b', 'b-quant', 'b-context'];
let models = [];
let pending = null;     // AbortController of the calculator's requests in flight
let timer = null;

function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }

async function api(verb, params, signal) {
  const q = new URLSearchParams(params);
  const res = await fetch(`/api/${verb}?${q}`, { signal });
  const body = await res.json();
  if (!res.ok) {
    const e = body.error || {};
    throw new Error(`${e.field}: ${e.message}`);
  }
  return body;
}

function currentModel() { return models.find((m) => m.id === $('model').value); }

// The context slider steps through doublings from 4K up to the model's maximum (inputs, not figures).
function contextSteps() {
  const m = currentModel();
  const steps = [];
  if (!m) return steps;
  for (let t = 4096; t <= m.max_context_tokens; t *= 2) steps.push(t);
  if (steps[steps.length - 1] !== m.max_context_tokens) steps.push(m.max_context_tokens);
  return steps;
}

function tokenLabel(t) {
  if (t % 1048576 === 0) return `${t / 1048576}M`;
  if (t % 1024 === 0) return `${t / 1024}K`;
  return String(t);
}

function fillModels() {
  for (const id of ['model', 'b']) {
    const sel = $(id);
    clear(sel);
    for (const m of models) sel.appendChild(new Option(`${m.name} (${m.id})`, m.id));
  }
}

function filterModels() {
  const q = $('model-filter').value.trim().toLowerCase();
  const sel = $('model');
  let first = null;
  for (const opt of sel.options) {
    const show = !q || opt.text.toLowerCase().includes(q);
    opt.hidden = !show;
    if (show && !first) first = opt;
  }
  if (first && sel.selectedOptions[0] && sel.selectedOptions[0].hidden) {
    sel.value = first.value;
    onModelChange();
  }
}

function onModelChange() {
  const m = currentModel();
  const group = $('quant-builds');
  clear(group);
  if (m) for (const b of m.builds) group.appendChild(new Option(`${b.name} (${b.format} build)`, b.name));
  const slider = $('context-slider');
  slider.max = String(Math.max(0, contextSteps().length - 1));
  syncSlider();
  schedule();
}

function syncSlider() {
  const steps = contextSteps();
  const text = $('context').value.trim().toUpperCase();
  const i = steps.findIndex((t) => tokenLabel(t) === text || String(t) === text);
  if (i >= 0) $('context-slider').value = String(i);
}

function readParams(ids) {
  const p = {};
  for (const id of ids) {
    const v = $(id).value.trim();
    if (v !== '') p[id] = v;
  }
  return p;
}

function saveUrl() {
  const p = { ...readParams(PARAMS), ...readParams(COMPARE_PARAMS) };
  const url = `${location.pathname}?${new URLSearchParams(p)}`;
  history.replaceState(null, '', url);
  $('share').href = url;
}

function loadUrl() {
  const q = new URLSearchParams(location.search);
  for (const id of [...PARAMS, ...COMPARE_PARAMS]) {
    if (q.has(id)) $(id).value = q.get(id);
  }
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(update, 120);
}

async function update() {
  if (pending) pending.abort();
  pending = new AbortController();
  const signal = pending.signal;
  saveUrl();
  const p = { ...readParams(PARAMS), units: 'gb' };
  const m = currentModel();
  try {
    const contexts = contextSteps().map(tokenLabel).join(',');
    const sweepParams = { ...p, contexts };
    delete sweepParams.context;
    const b = readParams(COMPARE_PARAMS);
    const cmp = { ...p, a: p.model, ...b };
    delete cmp.model;
    if (!cmp.b) cmp.b = p.model;
    const [est, sw, comp] = await Promise.all([
      api('estimate', p, signal),
      m ? api('sweep', sweepParams, signal) : null,
      api('compare', cmp, signal),
    ]);
    $('error').hidden = true;
    showEstimate(est);
    if (sw) drawCurve(sw, est);
    showCompare(comp);
  } catch (e) {
    if (e.name === 'AbortError') return;
    $('error').textContent = e.message;
    $('error').hidden = false;
  }
}

const PARTS = [
  ['weights', 'weights_bytes', 'Weights'],
  ['cache', 'cache_bytes', 'Cache'],
  ['state', 'state_bytes', 'Recurrent state'],
  ['overhead', 'overhead_bytes', 'Overhead'],
];

function showEstimate(est) {
  const d = est.display;
  $('total').textContent = d.total;
  $('total-scenario').textContent = `(${est.weights.tier}, ${d.context} context, ${est.inputs.sequences} sequence(s))`;
  const notice = $('clamp-notice');
  notice.hidden = !est.weights.clamped;
  notice.textContent = est.weights.clamped ? `Clamped: ${d.clamp_note}` : '';

  const body = $('breakdown').tBodies[0];
  clear(body);
  const list = $('explain-list');
  clear(list);
  est.lines.forEach((l, i) => {
    const tr = body.insertRow();
    tr.title = `= ${l.formula}\nassumes: ${l.assumption}\nsource: ${l.source}`;
    tr.tabIndex = 0;
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = l.label;
    tr.appendChild(th);
    tr.insertCell().textContent = d.lines[i];
    list.appendChild(Object.assign(document.createElement('dt'), { textContent: `${l.label}: ${d.lines[i]}` }));
    for (const [k, v] of [['=', l.formula], ['assumes', l.assumption], ['source', l.source]]) {
      list.appendChild(Object.assign(document.createElement('dd'), { textContent: `${k} ${v}` }));
    }
  });
  $('cache-and-state').textContent = d.cache_and_state;
  $('total-row').textContent = d.total;
  $('cards').textContent = `Cards (aggregate, before sharding): ${d.cards.join(', ')}.`;
  $('verdict').textContent = est.verdict.text;
  $('model-page').href = `/models/${encodeURIComponent(est.model.id)}`;
  $('model-page').textContent = `The ${est.model.name} page`;
  drawStack(est);
}

// Stacked bar: each part's width is its share of the total bytes (drawing, not a figure).
function drawStack(est) {
  const el = $('stack');
  const title = el.querySelector('title');
  clear(el);
  el.appendChild(title);
  const legend = $('stack-legend');
  clear(legend);
  const total = est.totals.total_bytes || 1;
  let x = 0;
  for (const [key, field, label] of PARTS) {
    const w = (est.totals[field] / total) * 600;
    const shown = est.display[key];
    if (w > 0) {
      const r = svg('rect', { x, y: 0, width: w, height: 48, class: `part-${key}` });
      r.appendChild(svg('title', {}, `${label}: ${shown}`));
      el.appendChild(r);
      x += w;
    }
    const li = document.createElement('li');
    li.innerHTML = `<span class="swatch part-${key}"></span>`;
    li.appendChild(document.createTextNode(`${label}: ${shown}`));
    legend.appendChild(li);
  }
}

// Memory against context: x is the row index (contexts double, so the axis is log scale).
function drawCurve(sw, est) {
  const el = $('curve');
  const title = el.querySelector('title');
  clear(el);
  el.appendChild(title);
  const rows = sw.rows;
  if (!rows.length) return;
  const L = 70, R = 585, T = 15, B = 225;
  const top = Math.max(...rows.map((r) => r.totals.total_bytes)) || 1;
  const X = (i) => L + (rows.length === 1 ? 0 : (i * (R - L)) / (rows.length - 1));
  const Y = (v) => B - (v / top) * (B - T);
  el.appendChild(svg('line', { x1: L, y1: B, x2: R, y2: B, class: 'axis' }));
  el.appendChild(svg('line', { x1: L, y1: T, x2: L, y2: B, class: 'axis' }));
  el.appendChild(svg('text', { x: L - 6, y: T + 4, class: 'tick', 'text-anchor': 'end' }, rows.reduce((a, r) => (r.totals.total_bytes === top ? r : a)).display.total.replace(' GB', '')));
  el.appendChild(svg('text', { x: L - 6, y: B, class: 'tick', 'text-anchor': 'end' }, '0 GB'));
  const total = rows.map((r, i) => `${X(i)},${Y(r.totals.total_bytes)}`).join(' ');
  const weights = rows.map((r, i) => `${X(i)},${Y(r.totals.weights_bytes)}`).join(' ');
  el.appendChild(svg('polyline', { points: weights, class: 'weights-line' }));
  el.appendChild(svg('polyline', { points: total, class: 'total-line' }));
  rows.forEach((r, i) => {
    const c = svg('circle', { cx: X(i), cy: Y(r.totals.total_bytes), r: 4, class: r.display.context === est.display.context ? 'point current' : 'point' });
    c.appendChild(svg('title', {}, `${r.display.context}: ${r.display.total} (cache and state ${r.display.cache_and_state})`));
    el.appendChild(c);
    el.appendChild(svg('text', { x: X(i), y: B + 16, class: 'tick', 'text-anchor': 'middle' }, r.display.context));
  });
}

function showCompare(c) {
  const t = $('compare-table');
  const head = t.tHead;
  clear(head);
  const hr = head.insertRow();
  for (const h of ['', `A: ${c.a.model.id} @ ${c.a.display.context}`, `B: ${c.b.model.id} @ ${c.b.display.context}`]) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = h;
    hr.appendChild(th);
  }
  const body = t.tBodies[0];
  clear(body);
  const rows = [['Weights tier', (e) => e.weights.tier], ['Weights', (e) => e.display.weights], ['Cache', (e) => e.display.cache],
    ['Recurrent state', (e) => e.display.state], ['Overhead', (e) => e.display.overhead], ['Total', (e) => e.display.total]];
  for (const [label, f] of rows) {
    const tr = body.insertRow();
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = label;
    tr.appendChild(th);
    tr.insertCell().textContent = f(c.a);
    tr.insertCell().textContent = f(c.b);
  }
  $('compare-difference').textContent = c.difference_display;
}

// ---- The GPU checker: /api/devices for the choices, /api/check for the ranking, /api/plan for one
// model's per-card view. The box is text the API parses (gpu=h200x8,rtx-4090x2), as the CLI's --gpu.
let devices = [];
let checkPending = null;
let lastBox = null;    // the box parameters of the last check, reused by the plan view

function addGpuRow(id, count) {
  const row = document.createElement('div');
  row.className = 'gpu-row';
  const n = $('gpu-rows').querySelectorAll('.gpu-row').length + 1;
  const sel = document.createElement('select');
  sel.className = 'gpu-device';
  sel.id = `gpu-device-${n}`;
  for (const d of devices) sel.appendChild(new Option(d.name, d.id));
  if (id) sel.value = id;
  const num = Object.assign(document.createElement('input'), { type: 'number', min: '1', max: '64', value: String(count || 1), className: 'gpu-count', id: `gpu-count-${n}` });
  const remove = Object.assign(document.createElement('button'), { type: 'button', textContent: 'Remove' });
  remove.addEventListener('click', () => { if ($('gpu-rows').querySelectorAll('.gpu-row').length > 1) row.remove(); });
  const f1 = document.createElement('div');
  f1.className = 'field';
  f1.append(Object.assign(document.createElement('label'), { htmlFor: sel.id, textContent: 'GPU' }), sel);
  const f2 = document.createElement('div');
  f2.className = 'field';
  f2.append(Object.assign(document.createElement('label'), { htmlFor: num.id, textContent: 'Count' }), num);
  row.append(f1, f2, remove);
  $('gpu-rows').appendChild(row);
}

function boxParams() {
  const gpus = [...$('gpu-rows').querySelectorAll('.gpu-row')].map((r) => {
    const id = r.querySelector('.gpu-device').value;
    const count = r.querySelector('.gpu-count').value.trim() || '1';
    return `${id}x${count}`;
  });
  return { gpu: gpus.join(','), nodes: $('check-nodes').value.trim() || '1', ram: $('check-ram').value.trim() || '0',
    'ssd-gbps': $('check-ssd').value.trim() || '0', context: $('check-context').value.trim() || '8K' };
}

function cells(tr, values) {
  for (const v of values) tr.insertCell().textContent = v;
}

async function runCheck() {
  if (checkPending) checkPending.abort();
  checkPending = new AbortController();
  const box = boxParams();
  $('check-run').disabled = true;
  try {
    const c = await api('check', { ...box, units: 'gb' }, checkPending.signal);
    lastBox = box;
    $('check-error').hidden = true;
    showCheck(c);
  } catch (e) {
    if (e.name === 'AbortError') return;
    $('check-error').textContent = e.message;
    $('check-error').hidden = false;
    $('check-results').hidden = true;
    $('plan-view').hidden = true;
  } finally {
    $('check-run').disabled = false;
  }
}

function showCheck(c) {
  $('check-results').hidden = false;
  $('plan-view').hidden = true;
  $('check-box').textContent = `Box: ${c.box}${c.ram_bytes ? `, RAM ${$('check-ram').value.trim()}` : ''}; context ${lastBox.context} per sequence.`;
  const body = $('check-table').tBodies[0];
  clear(body);
  const fits = c.rows.filter((r) => r.fit !== 'none');
  fits.forEach((r, i) => {
    const tr = body.insertRow();
    tr.dataset.model = r.model;
    tr.title = r.note;
    tr.insertCell().textContent = String(i + 1);
    const th = document.createElement('th');
    th.scope = 'row';
    const b = Object.assign(document.createElement('button'), { type: 'button', textContent: r.model, title: `Per-card plan for ${r.model}` });
    b.addEventListener('click', () => {
      for (const row of body.rows) row.classList.toggle('selected', row === tr);
      showPlan(r);
    });
    th.appendChild(b);
    tr.appendChild(th);
    cells(tr, [r.fit === 'gpu' ? 'GPUs' : 'offload', r.tier, r.display.total, r.display.max_context, r.display.decode_tok_s]);
  });
  const rest = c.rows.filter((r) => r.fit === 'none').map((r) => r.model);
  $('check-rest').textContent = fits.length === 0 ? `No model fits this box. ${rest.length} checked.`
    : rest.length ? `${fits.length} of ${c.rows.length} models fit. Not even with offload: ${rest.join(', ')}.` : `All ${c.rows.length} models fit.`;
}

async function showPlan(row) {
  const p = { ...lastBox, model: row.model, units: 'gb' };
  if (row.display.quant) p.quant = row.display.quant;
  try {
    const plan = await api('plan', p);
    drawPlan(plan);
  } catch (e) {
    $('check-error').textContent = e.message;
    $('check-error').hidden = false;
  }
}

function drawPlan(plan) {
  const d = plan.display;
  $('plan-view').hidden = false;
  $('plan-title').textContent = `${plan.model} on ${plan.box}: ${plan.weights_tier}, ${d.context} context, split ${plan.split}`;
  $('plan-verdict').textContent = plan.verdict;
  const body = $('plan-devices').tBodies[0];
  clear(body);
  const devs = plan.devices || [];
  $('plan-devices').hidden = devs.length === 0;
  devs.forEach((dev, i) => {
    const s = d.devices[i];
    const tr = body.insertRow();
    if (i === plan.busiest) tr.className = 'busiest';
    cells(tr, [String(dev.rank + 1)]);
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = dev.device + (i === plan.busiest ? ' (busiest)' : '');
    tr.appendChild(th);
    cells(tr, [String(dev.node + 1), s.weights, s.cache, s.state, s.overhead, s.total, s.capacity, s.headroom, dev.fits ? 'yes' : 'NO', dev.holds]);
  });
  $('plan-busiest').textContent = devs.length
    ? `Busiest: #${devs[plan.busiest].rank + 1} ${devs[plan.busiest].device}, ${d.devices[plan.busiest].total} of ${d.devices[plan.busiest].capacity} (headroom ${d.devices[plan.busiest].headroom}).`
    : 'No GPU holds a shard: everything is offloaded.';
  $('plan-speed').textContent = `Decode: ${d.decode_expected_tok_s} tok/s expected, ${d.decode_upper_tok_s} upper bound (one sequence). `
    + `Largest context: ${d.max_context}; most sequences at ${d.context}: ${d.max_sequences}.`;
  const cmds = $('plan-commands');
  clear(cmds);
  for (const c of plan.commands) {
    cmds.appendChild(Object.assign(document.createElement('h4'), { textContent: c.engine }));
    cmds.appendChild(Object.assign(document.createElement('pre'), { textContent: [c.command, ...c.notes.map((n) => `# ${n}`)].join('\n') }));
  }
}

async function setupChecker() {
  devices = await api('devices', {});
  addGpuRow(devices.some((d) => d.id === 'h200') ? 'h200' : (devices[0] || {}).id, 1);
  $('gpu-add').addEventListener('click', () => addGpuRow(null, 1));
  $('check-run').addEventListener('click', (e) => { e.preventDefault(); runCheck(); });
}

async function main() {
  models = await api('models', {});
  fillModels();
  loadUrl();
  if (!currentModel() && models.length) $('model').value = models[0].id;
  if (!$('b').value && models.length) $('b').value = $('model').value;
  onModelChange();
  $('model-filter').addEventListener('input', filterModels);
  $('model').addEventListener('change', onModelChange);
  $('context-slider').addEventListener('input', () => {
    $('context').value = tokenLabel(contextSteps()[Number($('context-slider').value)]);
    schedule();
  });
  $('context').addEventListener('input', () => { syncSlider(); schedule(); });
  for (const id of ['quant', 'seqs', 'cache-dtype', 'overhead', 'b', 'b-quant', 'b-context']) {
    $(id).addEventListener('input', schedule);
    $(id).addEventListener('change', schedule);
  }
  await setupChecker();
}

main().catch((e) => {
  $('error').textContent = `Could not load the catalogue: ${e.message}`;
  $('error').hidden = false;
});
