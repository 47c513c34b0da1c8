// The calculator page. Every figure shown comes from the API (/api/*): this file only gathers
// inputs, checks their shape, keeps them in the URL, and draws what the library returned. It
// computes no figure (byte counts are only rounded for display, as GB = 10^9 bytes).
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
// What loads beside the model: /api/estimate's parameters only (sweep and compare do not take them).
const EXTRA_FIELDS = ['mmproj', 'images', 'audio-seconds', 'draft', 'lora'];
const CALC_FIELDS = ['model', 'quant', 'context', 'seqs', 'cache-dtype', 'overhead', 'engine', ...EXTRA_FIELDS];
const COMPARE_FIELDS = ['b', 'b-quant', 'b-context'];
const CHECK_FIELDS = ['check-nodes', 'check-ram', 'check-ssd', 'check-context', 'check-prefer', 'check-tier', 'check-engine'];
// URL parameter -> field id, for the checker (short names in a shared link).
const CHECK_URL = { nodes: 'check-nodes', ram: 'check-ram', ssd: 'check-ssd', 'check-context': 'check-context', prefer: 'check-prefer', 'check-tier': 'check-tier', 'check-engine': 'check-engine' };
// API parameter named in an error -> the field it came from.
const FIELD_OF = {
  model: 'model', a: 'model', quant: 'quant', context: 'context', contexts: 'context', seqs: 'seqs', 'cache-dtype': 'cache-dtype',
  overhead: 'overhead', engine: 'engine', source: 'source', config: 'source', b: 'b', 'b-quant': 'b-quant', 'b-context': 'b-context',
  mmproj: 'mmproj', images: 'images', 'audio-seconds': 'audio-seconds', draft: 'draft', lora: 'lora',
};
const CHECK_FIELD_OF = { nodes: 'check-nodes', ram: 'check-ram', 'ssd-gbps': 'check-ssd', context: 'check-context', prefer: 'check-prefer', quant: 'check-tier', engine: 'check-engine' };

let models = [];
let devices = [];
let pending = null;       // AbortController of the calculator's requests in flight
let comparePending = null;
let timer = null;
let sourceModel = null;   // {params: {source|config}, summary} when the visitor read their own model
let firstFigure = false;
let tierNotice = '';      // said once with the next figure: why the tier changed

class ApiError extends Error {
  constructor(field, message) {
    super(message);
    this.field = field;
  }
}

function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

function el(tag, props, ...children) {
  const e = Object.assign(document.createElement(tag), props || {});
  for (const c of children) e.append(c);
  return e;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

// Empties a chart but keeps its <title>, its accessible name.
function clearChart(node) {
  for (const child of [...node.childNodes]) if (child.nodeName !== 'title') node.removeChild(child);
}

// GET with a query string; POST with a JSON body when a parameter is too long for a link
// (a pasted config.json). Both go through the same API route on the server.
async function api(verb, params, signal) {
  const long = Object.values(params).some((v) => String(v).length > 900);
  const res = long
    ? await fetch(`/api/${verb}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(params), signal })
    : await fetch(`/api/${verb}?${new URLSearchParams(params)}`, { signal });
  let body;
  try {
    body = await res.json();
  } catch (e) {
    throw new ApiError('request', `the server answered ${res.status} without JSON`);
  }
  if (!res.ok) {
    const e = body.error || {};
    throw new ApiError(e.field || 'request', e.message || `the server answered ${res.status}`);
  }
  return body;
}

// ---- Display formatting (rounding only; the bytes come from the API).
function gb(bytes) {
  if (bytes === null || bytes === undefined) return '–';
  return `${(bytes / 1e9).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} GB`;
}

// Token counts one way everywhere: 8K, 128K, 1M for whole multiples, 280,708 otherwise.
function tokens(t) {
  if (!t) return '–';
  if (t % 1048576 === 0) return `${t / 1048576}M`;
  if (t % 1024 === 0) return `${t / 1024}K`;
  return t.toLocaleString('en-US');
}

// "32K", "1M", "8192" as a number, only to compare with a model's maximum (the API parses for figures).
function tokenCount(text) {
  const m = /^(\d+)\s*([KM]?)$/i.exec(String(text).trim());
  if (!m) return null;
  return Number(m[1]) * ({ '': 1, K: 1024, M: 1048576 })[m[2].toUpperCase()];
}

function tokensLong(t) {
  const short = tokens(t);
  return /[KM]$/.test(short) ? `${short} (${t.toLocaleString('en-US')})` : short;
}

function plural(n, one, many) { return `${Number(n).toLocaleString('en-US')} ${Number(n) === 1 ? one : many}`; }

// Text with http(s) addresses as links.
function linked(text) {
  const frag = document.createDocumentFragment();
  const re = /https?:\/\/[^\s"'<>]+[^\s"'<>.,;:)]/g;
  let last = 0;
  for (const m of String(text).matchAll(re)) {
    frag.append(String(text).slice(last, m.index), el('a', { href: m[0], textContent: m[0], rel: 'noopener' }));
    last = m.index + m[0].length;
  }
  frag.append(String(text).slice(last));
  return frag;
}

// ---- Field errors: next to the field, named by its label; the headline says what stops the figure.
function labelOf(id) {
  const label = document.querySelector(`label[for="${id}"]`);
  return label ? label.textContent : id;
}

function setFieldError(id, message) {
  const p = $(`${id}-error`);
  if (!p) return false;
  p.textContent = message;
  p.hidden = false;
  $(id).setAttribute('aria-invalid', 'true');
  return true;
}

function clearFieldErrors(ids) {
  for (const id of ids) {
    const p = $(`${id}-error`);
    if (p) { p.hidden = true; p.textContent = ''; }
    if ($(id)) $(id).removeAttribute('aria-invalid');
  }
}

function setHeadline(text, isError) {
  $('headline-text').textContent = text;
  $('headline').classList.toggle('headline-error', !!isError);
}

// ---- Models and their release status.
function currentModel() {
  if (sourceModel && $('model').value === '__source') return sourceModel.summary;
  return models.find((m) => m.id === $('model').value);
}

// Only released weights run: "announced" or "withdrawn" models get figures, never a "fits".
function unreleased(m) { return !!(m && m.status && m.status !== 'released'); }

function statusText(m) {
  const what = m.status_text || (m.status === 'withdrawn' ? 'withdrawn' : 'announced, weights not released');
  return `${m.name}: ${what}.${m.status_note ? ` ${m.status_note}` : ''} The figures are what its published architecture would need; nothing can download or run it yet.`;
}

function contextSteps(m) {
  const steps = [];
  if (!m || !m.max_context_tokens) return steps;
  for (let t = 4096; t <= m.max_context_tokens; t *= 2) steps.push(t);
  if (steps[steps.length - 1] !== m.max_context_tokens) steps.push(m.max_context_tokens);
  return steps;
}

function fillModels() {
  const drafts = $('draft-list');
  clear(drafts);
  for (const m of models) drafts.appendChild(el('option', { value: m.id, label: m.name }));
  for (const id of ['model', 'b']) {
    const sel = $(id);
    clear(sel);
    sel.appendChild(new Option('Choose a model', ''));
    for (const m of models) sel.appendChild(new Option(`${m.name}${unreleased(m) ? ' (not released)' : ''}`, m.id));
  }
}

// Typing narrows the list; only picking a model changes the estimate. Enter picks the first match.
function filterModels() {
  const q = $('model-filter').value.trim().toLowerCase();
  let shown = 0;
  for (const opt of $('model').options) {
    if (!opt.value) continue;
    const show = !q || opt.text.toLowerCase().includes(q) || opt.value.includes(q);
    opt.hidden = !show;
    if (show) shown += 1;
  }
  $('model-filter-help').textContent = q ? `${plural(shown, 'model matches', 'models match')}; pick one from the list (Enter picks the first).`
    : 'Narrows the list below; the estimate changes only when you pick a model.';
}

function pickFirstMatch() {
  const first = [...$('model').options].find((o) => o.value && !o.hidden);
  if (first && first.value !== $('model').value) {
    $('model').value = first.value;
    onModelChange();
  }
}

function fillBuilds() {
  const m = currentModel();
  const keep = $('quant').value;
  const group = $('quant-builds');
  clear(group);
  if (m && m.builds) for (const b of m.builds) group.appendChild(new Option(`${b.name} (${b.format} build, ${gb(b.bytes)})`, b.name));
  group.hidden = !group.children.length;
  // A tier the list no longer has (a build of another model) falls back to native, and says so.
  if (keep && ![...$('quant').options].some((o) => o.value === keep)) {
    $('quant').value = '';
    return keep;
  }
  $('quant').value = keep;
  return null;
}

function onModelChange() {
  clearFieldErrors(['model']);
  const dropped = fillBuilds();
  const m = currentModel();
  $('model-status').hidden = !unreleased(m);
  $('model-status').textContent = unreleased(m) ? statusText(m) : '';
  const slider = $('context-slider');
  slider.max = String(Math.max(0, contextSteps(m).length - 1));
  syncSlider();
  const bl = $('b-quant-list');
  clear(bl);
  tierNotice = dropped ? `${dropped} is a build of another model, so the tier went back to ${m ? m.name : 'this model'}'s native checkpoint.` : '';
  schedule();
}

function syncSlider() {
  const steps = contextSteps(currentModel());
  const text = $('context').value.trim().toUpperCase();
  const i = steps.findIndex((t) => tokens(t) === text || String(t) === text);
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

// The calculator's parameters as the API names them; the overhead field is a percentage.
function calcParams() {
  const p = readParams(CALC_FIELDS);
  if (p.overhead !== undefined) p.overhead = `${p.overhead.replace(/%$/, '')}%`;
  if (p.engine === 'rule') delete p.engine;
  if (p.images === '0') delete p.images;
  if (p['audio-seconds'] === '0') delete p['audio-seconds'];
  if (sourceModel && p.model === '__source') {
    delete p.model;
    Object.assign(p, sourceModel.params);
  }
  return p;
}

function saveUrl() {
  const p = readParams(CALC_FIELDS);
  if (p.engine === 'rule') delete p.engine;
  if (p.overhead === '15') delete p.overhead;
  if (p.images === '0') delete p.images;
  if (p['audio-seconds'] === '0') delete p['audio-seconds'];
  if (p.model === '__source') {
    delete p.model;
    if (sourceModel.params.source) p.source = sourceModel.params.source;
  }
  Object.assign(p, readParams(COMPARE_FIELDS));
  if (p.b === p.model) delete p.b;
  if (checkState.ran) {
    p.gpu = gpuText();
    for (const [key, id] of Object.entries(CHECK_URL)) {
      const v = $(id).value.trim();
      if (v !== '' && v !== $(id).defaultValue && !(id === 'check-prefer' && v === 'balanced') && !(id === 'check-engine' && v === 'rule')) p[key] = v;
    }
    if (checkState.plan) p.plan = checkState.plan;
  }
  const url = `${location.pathname}?${new URLSearchParams(p)}`;
  history.replaceState(null, '', url);
  $('share').href = url;
}

// The calculator's parameters without what only /api/estimate takes (for sweep and compare).
function withoutExtras(p) {
  const q = { ...p };
  for (const id of EXTRA_FIELDS) delete q[id];
  return q;
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(update, 120);
}

// ---- The calculator: estimate and sweep together; compare on its own, so a bad B field never
// blocks A's figure.
function showCalcError(e) {
  const field = FIELD_OF[e.field] || FIELD_OF[String(e.field).split(':')[0]];
  const named = field && setFieldError(field, e.field.includes(':') ? `${e.field.split(':').slice(1).join(':').trim()}: ${e.message}` : e.message);
  const where = named ? `“${labelOf(field)}”: ` : '';
  $('error').textContent = `No figure: ${where}${e.message}`;
  $('error').hidden = false;
  setHeadline(`No figure: ${where}${e.message}`, true);
  clearFigures();
}

function clearFigures() {
  $('figures').hidden = true;
  clearChart($('curve'));
  clearChart($('stack'));
  clear($('curve-table').tBodies[0]);
  $('clamp-notice').hidden = true;
  $('tier-notice').hidden = true;
  clearCompare();
}

async function update() {
  if (pending) pending.abort();
  pending = new AbortController();
  const signal = pending.signal;
  saveUrl();
  clearFieldErrors(CALC_FIELDS.concat(['source']));
  $('error').hidden = true;
  const m = currentModel();
  if (!m) {
    clearFigures();
    if ($('model-error').hidden) setFieldError('model', 'Pick a model from the list.');
    setHeadline('No figure: pick a model.', true);
    return;
  }
  const p = { ...calcParams(), units: 'gb' };
  const sweepParams = { ...withoutExtras(p), contexts: contextSteps(m).map(tokens).join(',') };
  delete sweepParams.context;
  try {
    const [est, sw] = await Promise.all([api('estimate', p, signal), contextSteps(m).length ? api('sweep', sweepParams, signal) : null]);
    // Past the model's maximum the figure would describe a model that does not exist: refuse it.
    if (m.max_context_tokens && est.inputs.context_tokens > m.max_context_tokens) {
      // Images and audio add their tokens to the context: say how many, so the visitor knows what to cut.
      const media = [[est.components?.image_tokens, 'the images'], [est.components?.audio_tokens, 'the audio']].filter(([n]) => n > 0);
      const from = media.length ? ` (${media.map(([n, what]) => `${n.toLocaleString('en-US')} from ${what}`).join(', ')})` : '';
      throw new ApiError('context', `${m.name} reads at most ${tokensLong(m.max_context_tokens)} tokens; ${tokensLong(est.inputs.context_tokens)}${from} is beyond it, so there is no figure. Use ${tokens(m.max_context_tokens)} or less${media.length ? ' in all' : ''}.`);
    }
    showEstimate(est, m);
    if (sw) drawCurve(sw, est);
    if (!firstFigure) {
      firstFigure = true;
      performance.mark('vramcalc-first-figure');
    }
  } catch (e) {
    if (e.name === 'AbortError') return;
    showCalcError(e);
    return;
  }
  updateCompare(m);
}

const PARTS = [
  ['weights', 'weights_bytes', 'Weights'],
  ['cache', 'cache_bytes', 'Cache'],
  ['state', 'state_bytes', 'Recurrent state'],
  ['overhead', 'overhead_bytes', 'Overhead'],
];

function tierLabel(est, m) {
  if (est.weights.clamped) return `native ${m.native_checkpoint ? m.native_checkpoint.format : 'checkpoint'}; ${est.inputs.quant} would be larger`;
  return est.weights.tier;
}

function showEstimate(est, m) {
  const d = est.display;
  $('figures').hidden = false;
  $('total').textContent = d.total;
  const beside = est.components ? `; ${gb(est.components.total_with_bytes)} with what loads beside it` : '';
  const scenario = `${tierLabel(est, m)}, ${tokens(est.inputs.context_tokens)} context, ${plural(est.inputs.sequences, 'sequence', 'sequences')}${beside}`;
  $('total-scenario').textContent = `(${scenario})`;
  setHeadline(`${m.name}: ${d.total} (${scenario})${unreleased(m) ? '. Weights not released.' : ''}`);
  $('tier-notice').hidden = !tierNotice;
  $('tier-notice').textContent = tierNotice;
  tierNotice = '';
  const notice = $('clamp-notice');
  notice.hidden = !est.weights.clamped;
  notice.textContent = est.weights.clamped ? `Clamped: ${d.clamp_note}` : '';

  const body = $('breakdown').tBodies[0];
  clear(body);
  est.lines.forEach((l, i) => {
    const tr = body.insertRow();
    const th = el('th', { scope: 'row' });
    // The formula, assumption and source open from the keyboard or a tap, not only on hover.
    const det = el('details', { className: 'line' }, el('summary', { textContent: l.label }));
    det.append(el('p', {}, `= ${l.formula}`), el('p', {}, `Assumes: ${l.assumption}`), el('p', {}, 'Source: ', linked(l.source)));
    th.appendChild(det);
    tr.appendChild(th);
    tr.insertCell().textContent = d.lines[i];
  });
  $('cache-and-state').textContent = d.cache_and_state;
  $('total-row').textContent = d.total;
  $('cards').textContent = `Cards to hold it, in aggregate before sharding, by sizes as sold (decimal GB): ${d.cards.join(', ')}.`;
  $('verdict').textContent = unreleased(m) ? `Not runnable yet: ${m.name}'s weights are not released.` : est.verdict.text;
  const isCatalogue = !!models.find((x) => x.id === est.model.id) && $('model').value !== '__source';
  $('model-page').hidden = !isCatalogue;
  $('model-page').href = `/models/${encodeURIComponent(est.model.id)}`;
  $('model-page').textContent = `The ${est.model.name} page`;
  drawStack(est);
  showComponents(est.components);
  showEngine(est.engine, !!est.components);
}

// What loads beside the text model (the answer's `components`): its lines and the total with them.
// The engine's device tables below place the same lines per device.
function showComponents(c) {
  const view = $('components-view');
  view.hidden = !c;
  if (!c) return;
  const body = $('components').tBodies[0];
  clear(body);
  for (const l of c.lines) {
    const tr = body.insertRow();
    tr.dataset.id = l.id;
    tr.dataset.bytes = String(l.bytes);
    const det = el('details', { className: 'line' }, el('summary', { textContent: l.label }));
    det.append(el('p', {}, `= ${l.formula}`), el('p', {}, `Assumes: ${l.assumption}`), el('p', {}, 'Source: ', linked(l.source)));
    tr.appendChild(el('th', { scope: 'row' }, det));
    tr.insertCell().textContent = l.bytes ? gb(l.bytes) : '–';
  }
  $('components-total').textContent = gb(c.total_with_bytes);
  const notes = $('components-notes');
  clear(notes);
  for (const n of c.notes || []) notes.appendChild(el('li', {}, linked(n)));
}

// One table per device of an engine's answer: each line's kind, label and bytes, its formula,
// assumption and source one click away (and in the row's title).
function engineDeviceTables(engine) {
  const frag = document.createDocumentFragment();
  for (const dev of engine.devices || []) {
    const t = el('table', { className: 'engine-device' });
    const fits = dev.fits === true ? 'fits' : dev.fits === false ? 'does not fit' : 'capacity not given';
    t.createCaption().textContent = `${dev.name}: ${gb(dev.total_bytes)}${dev.capacity_bytes ? ` of ${gb(dev.capacity_bytes)}, ${fits}` : ''}`;
    const head = t.createTHead().insertRow();
    for (const h of ['Line', 'Memory']) head.appendChild(el('th', { scope: 'col', textContent: h }));
    const tb = t.createTBody();
    for (const l of dev.lines || []) {
      const tr = tb.insertRow();
      tr.dataset.kind = l.kind;
      tr.dataset.bytes = String(l.bytes);
      tr.title = `= ${l.formula}\nSource: ${l.source}`;
      const det = el('details', { className: 'line' }, el('summary', { textContent: `${l.label} (${l.kind})` }));
      det.append(el('p', {}, `= ${l.formula}`), el('p', {}, `Assumes: ${l.assumption}`), el('p', {}, 'Source: ', linked(l.source)));
      tr.appendChild(el('th', { scope: 'row' }, det));
      tr.insertCell().textContent = gb(l.bytes);
    }
    frag.appendChild(t);
  }
  return frag;
}

// The engine's own allocations, device by device (the `engine` object of the API's answer).
function showEngine(engine, withComponents) {
  const view = $('engine-view');
  // The rule's lines are the main table already: the view is for an engine's own accounting, or
  // for where the rule puts what loads beside the model.
  view.hidden = !engine || (engine.name === 'rule' && !withComponents);
  if (view.hidden) return;
  $('engine-title').textContent = engine.name === 'rule' ? `Per device, with what loads beside the model: ${gb(engine.total_bytes)} in all`
    : `What ${engine.name} allocates${engine.version_modelled ? ` (as of ${engine.version_modelled})` : ''}: ${gb(engine.total_bytes)} in all`;
  const settings = Object.entries(engine.settings || {}).map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  const extra = [];
  if (engine.kv_tokens !== null && engine.kv_tokens !== undefined) extra.push(`cache room for ${tokensLong(engine.kv_tokens)} tokens`);
  if (engine.max_concurrency !== null && engine.max_concurrency !== undefined) extra.push(`at most ${Number(engine.max_concurrency).toLocaleString('en-US', { maximumFractionDigits: 2 })} concurrent sequences at this context`);
  $('engine-settings').textContent = [settings.length ? `Settings assumed: ${settings.join(', ')}.` : '', extra.length ? `${extra.join('; ')}.` : ''].join(' ').trim();
  const box = $('engine-devices');
  clear(box);
  box.appendChild(engineDeviceTables(engine));
  const notes = $('engine-notes');
  clear(notes);
  for (const n of engine.notes || []) notes.appendChild(el('li', {}, linked(n)));
}

// Stacked bar: each part's width is its share of the total bytes (drawing, not a figure).
function drawStack(est) {
  const svgEl = $('stack');
  clearChart(svgEl);
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
      svgEl.appendChild(r);
      x += w;
    }
    const li = el('li', {}, el('span', { className: `swatch part-${key}` }), `${label}: ${shown}`);
    legend.appendChild(li);
  }
}

// Round tick steps (1, 2, 5 × 10^n GB) for the y axis.
function tickStep(maxGb) {
  const raw = maxGb / 4;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  for (const f of [1, 2, 5, 10]) if (raw <= f * mag) return f * mag;
  return 10 * mag;
}

// Memory against context: x is log2 of the context (true positions, so 280,708 sits where it
// belongs between 256K and 512K); y in GB from 0 with round ticks. Drawn at the element's own
// width so the labels stay 12 px on a phone.
function drawCurve(sw, est) {
  const chart = $('curve');
  clearChart(chart);
  const rows = sw.rows;
  const tbody = $('curve-table').tBodies[0];
  clear(tbody);
  if (!rows.length) return;
  const W = Math.max(300, Math.round(chart.getBoundingClientRect().width) || 600);
  const H = W < 500 ? 240 : 280;
  chart.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const L = 64, R = W - 16, T = 24, B = H - 48;
  const ctx = rows.map((r) => r.inputs.context_tokens);
  const lo = Math.log2(ctx[0]), hi = Math.log2(ctx[ctx.length - 1]);
  const X = (t) => L + (hi === lo ? 0 : ((Math.log2(t) - lo) * (R - L)) / (hi - lo));
  const maxGb = Math.max(...rows.map((r) => r.totals.total_bytes)) / 1e9;
  const step = tickStep(maxGb);
  const top = Math.ceil(maxGb / step) * step || 1;
  const Y = (bytes) => B - ((bytes / 1e9) / top) * (B - T);
  for (let v = 0; v <= top + step / 2; v += step) {
    const y = B - (v / top) * (B - T);
    chart.appendChild(svg('line', { x1: L, y1: y, x2: R, y2: y, class: v === 0 ? 'axis' : 'grid' }));
    chart.appendChild(svg('text', { x: L - 6, y: y + 4, class: 'tick', 'text-anchor': 'end' }, v.toLocaleString('en-US', { maximumFractionDigits: 2 })));
  }
  chart.appendChild(svg('line', { x1: L, y1: T, x2: L, y2: B, class: 'axis' }));
  chart.appendChild(svg('text', { x: 4, y: T - 8, class: 'axis-title' }, 'GB (10⁹ bytes)'));
  chart.appendChild(svg('text', { x: (L + R) / 2, y: H - 6, class: 'axis-title', 'text-anchor': 'middle' }, 'Context per sequence (tokens, log scale)'));
  const weights = rows.map((r) => `${X(r.inputs.context_tokens)},${Y(r.totals.weights_bytes)}`).join(' ');
  const total = rows.map((r) => `${X(r.inputs.context_tokens)},${Y(r.totals.total_bytes)}`).join(' ');
  chart.appendChild(svg('polyline', { points: weights, class: 'weights-line' }));
  chart.appendChild(svg('polyline', { points: total, class: 'total-line' }));
  const minGap = 34;  // px between x labels, so they never overlap
  let lastLabel = -Infinity;
  rows.forEach((r, i) => {
    const x = X(r.inputs.context_tokens);
    const current = r.inputs.context_tokens === est.inputs.context_tokens;
    const c = svg('circle', { cx: x, cy: Y(r.totals.total_bytes), r: 4, class: current ? 'point current' : 'point' });
    c.appendChild(svg('title', {}, `${tokens(r.inputs.context_tokens)}: ${r.display.total} (cache and state ${r.display.cache_and_state})`));
    chart.appendChild(c);
    const last = i === rows.length - 1;
    if (x - lastLabel >= minGap && (last || R - x >= minGap)) {
      chart.appendChild(svg('text', { x, y: B + 16, class: 'tick', 'text-anchor': last ? 'end' : 'middle' }, tokens(r.inputs.context_tokens)));
      lastLabel = x;
    }
    const tr = tbody.insertRow();
    tr.appendChild(el('th', { scope: 'row', textContent: tokensLong(r.inputs.context_tokens) }));
    for (const v of [r.display.weights, r.display.cache_and_state, r.display.total]) tr.insertCell().textContent = v;
  });
  $('curve-desc').textContent = `Total memory from ${rows[0].display.total} at ${tokens(ctx[0])} to ${rows[rows.length - 1].display.total} at ${tokens(ctx[ctx.length - 1])} of context; the figures are in the table below.`;
}

// ---- Compare: B never borrows A's tier unless B is the same model.
function clearCompare() {
  clear($('compare-table').tHead);
  clear($('compare-table').tBodies[0]);
  $('compare-difference').textContent = '';
}

async function updateCompare(a) {
  if (comparePending) comparePending.abort();
  comparePending = new AbortController();
  clearFieldErrors(COMPARE_FIELDS);
  if ($('model').value === '__source') {
    clearCompare();
    $('compare-difference').textContent = 'Compare works between catalogue models.';
    return;
  }
  const p = { ...withoutExtras(calcParams()), units: 'gb' };
  const b = readParams(COMPARE_FIELDS);
  const cmp = { ...p, a: p.model, b: b.b || p.model };
  delete cmp.model;
  if (b['b-quant'] !== undefined) cmp['b-quant'] = b['b-quant'];
  else if (cmp.b !== cmp.a) cmp['b-quant'] = '';  // B's own native checkpoint, not A's tier
  if (b['b-context'] !== undefined) cmp['b-context'] = b['b-context'];
  try {
    const c = await api('compare', cmp, comparePending.signal);
    const bm = models.find((m) => m.id === c.b.model.id);
    if (bm && bm.max_context_tokens && c.b.inputs.context_tokens > bm.max_context_tokens) {
      throw new ApiError(b['b-context'] !== undefined ? 'b-context' : 'b', `${bm.name} reads at most ${tokensLong(bm.max_context_tokens)} tokens; ${tokensLong(c.b.inputs.context_tokens)} is beyond it. Give B a context of ${tokens(bm.max_context_tokens)} or less.`);
    }
    showCompare(c, a, bm);
  } catch (e) {
    if (e.name === 'AbortError') return;
    clearCompare();
    const field = FIELD_OF[e.field];
    if (field && COMPARE_FIELDS.includes(field)) setFieldError(field, e.message);
    else $('compare-difference').textContent = `No comparison: ${e.message}`;
  }
}

function showCompare(c, a, bm) {
  const t = $('compare-table');
  clear(t.tHead);
  const hr = t.tHead.insertRow();
  for (const h of ['', `A: ${a.name}, ${tokens(c.a.inputs.context_tokens)}`, `B: ${bm ? bm.name : c.b.model.id}, ${tokens(c.b.inputs.context_tokens)}`]) {
    hr.appendChild(el('th', { scope: 'col', textContent: h }));
  }
  const body = t.tBodies[0];
  clear(body);
  const rows = [['Weights tier', (e, m) => tierLabel(e, m || {})], ['Weights', (e) => e.display.weights], ['Cache', (e) => e.display.cache],
    ['Recurrent state', (e) => e.display.state], ['Overhead', (e) => e.display.overhead], ['Total', (e) => e.display.total]];
  for (const [label, f] of rows) {
    const tr = body.insertRow();
    tr.appendChild(el('th', { scope: 'row', textContent: label }));
    tr.insertCell().textContent = f(c.a, a);
    tr.insertCell().textContent = f(c.b, bm);
  }
  $('compare-difference').textContent = c.difference_display;
}

// ---- Your own model: hf:ORG/REPO[/FILE], a URL, or a pasted config.json, read by the server
// (/api/inspect for what it holds; estimate and sweep take the same `source` or `config`).
async function readSource() {
  clearFieldErrors(['source']);
  const text = $('source').value.trim();
  if (!text) {
    if (sourceModel) dropSource();
    return;
  }
  let params;
  if (text.startsWith('{')) params = { config: text };
  else if (/^(hf:|https?:\/\/)/.test(text)) params = { source: text };
  else {
    setFieldError('source', `“${text.slice(0, 60)}” is not a source: give hf:ORG/REPO (or hf:ORG/REPO/FILE), an http(s):// address, or paste the text of a config.json.`);
    return;
  }
  $('source-read').disabled = true;
  setHeadline('Reading your model…');
  try {
    const ins = await api('inspect', params);
    if (!ins.model) throw new ApiError('source', ins.no_model || 'the server could not work out the model from it');
    // A config.json carries no name: the source's own words name it (hf:ORG/REPO, the URL's file).
    const named = ins.model.name || (params.source ? params.source.replace(/^hf:/, '') : `a ${ins.model.architecture || 'model'} config.json`);
    sourceModel = { params, summary: { ...ins.model, name: `Your model: ${named}` } };
    let opt = [...$('model').options].find((o) => o.value === '__source');
    if (!opt) {
      opt = new Option('', '__source');
      $('model').insertBefore(opt, $('model').options[1] || null);
    }
    opt.text = sourceModel.summary.name;
    $('model').value = '__source';
    onModelChange();
  } catch (e) {
    setFieldError('source', e.message);
    setHeadline(`Your model was not read: ${e.message}`, true);
  } finally {
    $('source-read').disabled = false;
  }
}

function dropSource() {
  sourceModel = null;
  const opt = [...$('model').options].find((o) => o.value === '__source');
  if (opt) opt.remove();
  if (!$('model').value && models.length) $('model').value = models[0].id;
  onModelChange();
}

// ---- The GPU checker: /api/devices for the choices, /api/check for the ranking, /api/plan for one
// model's per-card view. The box is text the API parses (gpu=h200x8,rtx-4090x2), as the CLI's --gpu.
const checkState = { ran: false, plan: null, pending: null, box: null, rows: [] };
let gpuRowSerial = 0;   // ids stay unique after Remove and Add

// "H200, 141 GB"; cards sold as "24 GB" hold 24 GiB: "RTX 4090, 24 GiB = 25.77 GB", so the
// decimal figure beside the verdict's "24 GB" cards is not a surprise. A unified box (Apple
// silicon, Strix Halo, DGX Spark) shows the share its OS lets the GPU hold, which is what the
// plan counts: "Apple M3 Max 64GB, GPU share 48 GiB of 64 GiB".
function gibText(bytes) {
  const g = bytes / 2 ** 30;
  return `${Number.isInteger(g) ? g : g.toFixed(2)} GiB`;
}

function deviceLabel(d) {
  if (d.gpu_share) return `${d.name}, GPU share ${gibText(d.gpu_share.gpu_bytes)} of ${gibText(d.gpu_share.physical_bytes)}`;
  const bytes = d.memory_bytes;
  if (bytes % 1e9 === 0) return `${d.name}, ${bytes / 1e9} GB`;
  if (bytes % 2 ** 30 === 0) return `${d.name}, ${bytes / 2 ** 30} GiB = ${gb(bytes)}`;
  return `${d.name}, ${gb(bytes)}`;
}

function addGpuRow(id, count) {
  gpuRowSerial += 1;
  const n = gpuRowSerial;
  const row = el('div', { className: 'gpu-row' });
  const sel = el('select', { className: 'gpu-device', id: `gpu-device-${n}` });
  for (const d of devices) {
    const o = new Option(deviceLabel(d), d.id);
    if (d.gpu_share) o.title = `${d.gpu_share.formula}; raise: ${d.gpu_share.raise}`;
    sel.appendChild(o);
  }
  if (id) sel.value = id;
  const num = el('input', { type: 'number', min: '1', max: '64', value: String(count || 1), className: 'gpu-count', id: `gpu-count-${n}`, inputMode: 'numeric' });
  num.setAttribute('aria-describedby', `gpu-count-${n}-error`);
  const remove = el('button', { type: 'button', textContent: 'Remove', className: 'gpu-remove' });
  remove.setAttribute('aria-label', `Remove GPU row ${n}`);
  remove.addEventListener('click', () => { if ($('gpu-rows').querySelectorAll('.gpu-row').length > 1) row.remove(); });
  const f1 = el('div', { className: 'field' }, el('label', { htmlFor: sel.id, textContent: 'GPU' }), sel);
  const f2 = el('div', { className: 'field' }, el('label', { htmlFor: num.id, textContent: 'Count' }), num);
  const err = el('p', { className: 'field-error', id: `gpu-count-${n}-error`, hidden: true });
  row.append(f1, f2, remove, err);
  $('gpu-rows').appendChild(row);
  return row;
}

function gpuText() {
  return [...$('gpu-rows').querySelectorAll('.gpu-row')].map((r) => `${r.querySelector('.gpu-device').value}x${r.querySelector('.gpu-count').value.trim() || '1'}`).join(',');
}

// Shapes the API would misread are caught here, next to the field: a bare RAM figure is GB (not
// bytes), "7GB/s" is 7, counts are whole and positive.
function boxParams() {
  const ids = [...$('gpu-rows').querySelectorAll('.gpu-count')].map((i) => i.id).concat(CHECK_FIELDS);
  clearFieldErrors(ids);
  let ok = true;
  for (const input of $('gpu-rows').querySelectorAll('.gpu-count')) {
    const v = input.value.trim();
    if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 64) {
      setFieldError(input.id, `Count must be a whole number from 1 to 64 GPUs of this kind (got “${v || 'nothing'}”).`);
      ok = false;
    }
  }
  const nodes = $('check-nodes').value.trim() || '1';
  if (!/^\d+$/.test(nodes) || Number(nodes) < 1 || Number(nodes) > 1024) {
    setFieldError('check-nodes', `Nodes must be a whole number from 1 to 1,024 (got “${nodes}”).`);
    ok = false;
  }
  let ram = $('check-ram').value.trim() || '0';
  if (/^\d+(\.\d+)?$/.test(ram)) ram = `${ram}GB`;
  else if (/^-/.test(ram)) {
    setFieldError('check-ram', `RAM cannot be negative (got “${ram}”); give GB such as 64, or 0 for none.`);
    ok = false;
  }
  let ssd = ($('check-ssd').value.trim() || '0').replace(/\s+/g, '');
  const m = /^(\d+(?:\.\d+)?)(?:GB\/?s|GBps)?$/i.exec(ssd);
  if (m) ssd = m[1];
  else {
    setFieldError('check-ssd', `“${ssd}” is not a read speed: give GB per second such as 7 or 7GB/s, or 0 for none.`);
    ok = false;
  }
  if (!ok) return null;
  const p = { gpu: gpuText(), nodes, ram, 'ssd-gbps': ssd, context: $('check-context').value.trim() || '8K', prefer: $('check-prefer').value };
  if ($('check-tier').value) p.quant = $('check-tier').value;
  if ($('check-engine').value !== 'rule') p.engine = $('check-engine').value;
  return p;
}

async function runCheck(planModel) {
  if (checkState.pending) checkState.pending.abort();
  checkState.pending = new AbortController();
  $('check-error').hidden = true;
  const box = boxParams();
  if (!box) {
    $('check-results').hidden = true;
    $('plan-view').hidden = true;
    return;
  }
  $('check-run').disabled = true;
  $('check-results').setAttribute('aria-busy', 'true');  // figures on screen are the last box's until the answer
  try {
    const c = await api('check', { ...box, units: 'gb' }, checkState.pending.signal);
    checkState.ran = true;
    checkState.box = box;
    checkState.plan = null;
    showCheck(c);
    saveUrl();
    if (planModel) {
      const row = c.rows.find((r) => r.model === planModel);
      if (row) await showPlan(row);
    } else {
      $('check-summary').focus({ preventScroll: true });
    }
  } catch (e) {
    if (e.name === 'AbortError') return;
    const field = e.field === 'gpu' ? ($('gpu-rows').querySelector('.gpu-count') || {}).id : CHECK_FIELD_OF[e.field];
    if (!(field && setFieldError(field, e.message))) {
      $('check-error').textContent = e.message;
      $('check-error').hidden = false;
    }
    $('check-results').hidden = true;
    $('plan-view').hidden = true;
  } finally {
    $('check-run').disabled = false;
    $('check-results').removeAttribute('aria-busy');
  }
}

function modelName(id) {
  const m = models.find((x) => x.id === id);
  return m ? m.name : id;
}

function fitLabel(r) {
  if (r.fit === 'gpu') return 'GPUs alone';
  if (r.ssd_bytes) return 'GPUs + RAM + SSD';
  if (r.gpu_bytes) return 'GPUs + RAM';
  return 'RAM only';
}

function td(tr, label, value) {
  const c = tr.insertCell();
  c.textContent = value;
  c.dataset.label = label;
  return c;
}

// The engine's per-device lines behind a row's fit (the rule's rows have none): a button in the
// row opens a full-width row below it, so the table keeps its width on a desktop and a phone.
function perDeviceCell(tr, r, body, columns) {
  const c = td(tr, 'Per device', '');
  c.className = 'per-device';
  const a = r.engine_answer;
  if (!a) {
    c.textContent = '-';
    return;
  }
  const detail = body.insertRow();
  detail.className = 'devices-row';
  detail.dataset.devicesOf = r.model;
  detail.hidden = true;
  const cell = detail.insertCell();
  cell.colSpan = columns;
  const pool = a.kv_tokens !== null && a.kv_tokens !== undefined ? `; KV pool ${tokensLong(a.kv_tokens)} tokens` : '';
  cell.append(el('p', { textContent: `What ${a.name} allocates on each device for ${modelName(r.model)} at ${r.tier}${pool}:` }), engineDeviceTables(a));
  const b = el('button', { type: 'button', className: 'link', textContent: plural(a.devices.length, 'device', 'devices') });
  b.setAttribute('aria-expanded', 'false');
  b.setAttribute('aria-label', `${a.name}'s lines on each device for ${modelName(r.model)}`);
  b.addEventListener('click', () => {
    detail.hidden = !detail.hidden;
    b.setAttribute('aria-expanded', String(!detail.hidden));
  });
  c.appendChild(b);
}

function showCheck(c) {
  $('check-results').hidden = false;
  $('plan-view').hidden = true;
  const ctx = checkState.box.context;
  $('check-box').textContent = `Box: ${c.box}${c.ram_bytes ? `, RAM ${gb(c.ram_bytes)}` : ', no RAM offload'}${Number(checkState.box['ssd-gbps']) ? `, SSD at ${checkState.box['ssd-gbps']} GB/s` : ''}; context ${ctx} per sequence; engine ${c.engine}. ${c.tiers}.`;
  const body = $('check-table').tBodies[0];
  clear(body);
  $('check-table').classList.toggle('no-engine', c.engine === 'rule');
  const byId = Object.fromEntries(models.map((m) => [m.id, m]));
  const asked = tokenCount(ctx);
  // A model whose weights are not released never "fits": it goes with the rest, saying why.
  const fits = c.rows.filter((r) => r.fit !== 'none' && !unreleased(byId[r.model]));
  const rest = c.rows.filter((r) => !fits.includes(r));
  checkState.rows = c.rows;
  fits.forEach((r, i) => {
    const tr = body.insertRow();
    tr.dataset.model = r.model;
    td(tr, '#', String(i + 1));
    const th = el('th', { scope: 'row' });
    const b = el('button', { type: 'button', className: 'link', textContent: modelName(r.model) });
    b.setAttribute('aria-label', `Per-card plan for ${modelName(r.model)}`);
    b.addEventListener('click', () => {
      for (const row of body.rows) row.classList.toggle('selected', row === tr);
      showPlan(r);
    });
    th.appendChild(b);
    tr.appendChild(th);
    td(tr, 'Fit', fitLabel(r));
    td(tr, 'Tier', r.tier);
    td(tr, 'Total', r.display.total);
    td(tr, 'On GPUs / RAM / SSD', `${r.display.gpu} / ${r.display.ram} / ${r.display.ssd}`);
    // A context past the model's maximum is checked at the maximum: say so, never silently.
    const m = byId[r.model];
    const capped = asked && m && m.max_context_tokens && asked > m.max_context_tokens;
    td(tr, 'Largest context', capped ? `${tokens(r.max_context)} (the model's maximum; ${ctx} asked)` : tokens(r.max_context));
    td(tr, 'tok/s (estimate, likely range)', r.display.decode_tok_s);
    perDeviceCell(tr, r, body, $('check-table').tHead.rows[0].cells.length);
  });
  const onGpu = fits.filter((r) => r.fit === 'gpu').length;
  $('check-summary').textContent = fits.length === 0 ? `No model runs on this box (${plural(c.rows.length, 'model', 'models')} checked).`
    : `${fits.length} of ${plural(c.rows.length, 'model', 'models')} run on this box: ${onGpu} on the GPUs alone, ${fits.length - onGpu} with offload.`;
  const list = $('check-rest');
  clear(list);
  $('check-rest-title').hidden = rest.length === 0;
  for (const r of rest) {
    const m = byId[r.model];
    const why = unreleased(m) ? `weights not released, so nothing can run it yet.${m.status_note ? ` ${m.status_note}` : ''}` : r.note;
    const li = el('li', {}, el('strong', { textContent: modelName(r.model) }), `: ${why} `);
    if (!unreleased(m)) {
      const b = el('button', { type: 'button', className: 'link', textContent: `Plan it at ${r.tier}` });
      b.addEventListener('click', () => showPlan(r));
      li.append(b);
    }
    list.appendChild(li);
  }
}

async function showPlan(row) {
  const p = { ...checkState.box, model: row.model, units: 'gb' };
  delete p.prefer;
  if (row.quant) p.quant = row.quant;
  else delete p.quant;
  try {
    const plan = await api('plan', p);
    checkState.plan = row.model;
    drawPlan(plan, row);
    saveUrl();
    $('plan-view').scrollIntoView({ block: 'start' });
    $('plan-title').focus({ preventScroll: true });
  } catch (e) {
    $('check-error').textContent = e.message;
    $('check-error').hidden = false;
  }
}

function drawPlan(plan, row) {
  const d = plan.display;
  const m = models.find((x) => x.id === plan.model);
  $('plan-view').hidden = false;
  $('plan-title').textContent = `${modelName(plan.model)} on ${plan.box}: ${plan.weights_tier}, ${d.context} context, split ${plan.split}`;
  $('plan-verdict').textContent = plan.verdict;
  const body = $('plan-devices').tBodies[0];
  clear(body);
  // One device table: an engine's own per-device lines, or the rule's split.
  const byEngine = plan.engine && plan.engine.name !== 'rule';
  const engineView = $('plan-engine');
  clear(engineView);
  engineView.hidden = !byEngine;
  if (byEngine) {
    engineView.appendChild(el('h4', { textContent: `What ${plan.engine.name} allocates per device: ${gb(plan.engine.total_bytes)} in all` }));
    engineView.appendChild(engineDeviceTables(plan.engine));
  }
  const devs = byEngine ? [] : plan.devices || [];
  $('plan-devices').hidden = devs.length === 0;
  devs.forEach((dev, i) => {
    const s = d.devices[i];
    const tr = body.insertRow();
    if (i === plan.busiest) tr.className = 'busiest';
    td(tr, '#', String(dev.rank + 1));
    tr.appendChild(el('th', { scope: 'row', textContent: dev.device + (i === plan.busiest ? ' (busiest)' : '') }));
    const values = [['Node', String(dev.node + 1)], ['Weights', s.weights], ['Cache', s.cache], ['State', s.state], ['Overhead', s.overhead], ['Total', s.total],
      ['Capacity', s.capacity], ['Headroom', s.headroom], ['Fits', dev.fits ? 'yes' : 'NO'], ['Holds', dev.holds]];
    for (const [label, v] of values) td(tr, label, v);
  });
  $('plan-busiest').hidden = byEngine;
  $('plan-busiest').textContent = devs.length
    ? `Busiest: #${devs[plan.busiest].rank + 1} ${devs[plan.busiest].device}, ${d.devices[plan.busiest].total} of ${d.devices[plan.busiest].capacity} (headroom ${d.devices[plan.busiest].headroom}).`
    : 'No GPU holds a shard: everything is offloaded.';
  $('plan-speed').textContent = `Decode, an estimate from memory bandwidth: ${d.decode_expected_tok_s} tok/s`
    + (d.decode_range_tok_s ? ` (measured runs: likely ${d.decode_range_tok_s})` : '') + `, ${d.decode_upper_tok_s} upper bound (one sequence). `
    + `Largest context: ${d.max_context}; most sequences at ${d.context}: ${d.max_sequences}.`;
  const cmds = $('plan-commands');
  clear(cmds);
  if (unreleased(m)) {
    cmds.appendChild(el('p', { className: 'notice', textContent: `No engine commands: ${m.name}'s weights are not released, so there is no file to serve.` }));
    return;
  }
  if (row && row.fit === 'none') {
    cmds.appendChild(el('p', { className: 'notice', textContent: 'No engine commands: this box does not hold the model at any tier.' }));
    return;
  }
  for (const c of plan.commands || []) {
    cmds.appendChild(el('h4', { textContent: c.engine }));
    cmds.appendChild(el('pre', { textContent: [c.command, ...c.notes.map((n) => `# ${n}`)].join('\n') }));
  }
}

async function setupChecker(q) {
  devices = await api('devices', {});
  const gpus = q.get('gpu');
  let added = false;
  if (gpus) {
    for (const part of gpus.split(',').slice(0, 16)) {
      const m = /^(.+)x(\d+)$/.exec(part);
      if (m && devices.some((d) => d.id === m[1])) {
        addGpuRow(m[1], Number(m[2]));
        added = true;
      }
    }
  }
  if (!added) addGpuRow(devices.some((d) => d.id === 'h200') ? 'h200' : (devices[0] || {}).id, 1);
  for (const [key, id] of Object.entries(CHECK_URL)) if (q.has(key)) $(id).value = q.get(key);
  $('gpu-add').addEventListener('click', () => addGpuRow(null, 1).querySelector('select').focus());
  $('check-form').addEventListener('submit', (e) => { e.preventDefault(); runCheck(); });
  if (gpus && added) await runCheck(q.get('plan'));
}

// ---- A pasted start-up log beside vramcalc's figures (/api/validate-log): the server reads the
// settings and computes every figure; the page only draws the rows.
const LOG_FIELD_OF = { log: 'log-text', model: 'log-model', 'gpu-memory': 'log-gpu-memory' };

function number6(v) { return Number(v).toLocaleString('en-US', { maximumSignificantDigits: 6 }); }

async function runLogCheck() {
  clearFieldErrors(Object.values(LOG_FIELD_OF));
  $('log-error').hidden = true;
  const p = { log: $('log-text').value };
  if ($('log-model').value) p.model = $('log-model').value;
  if ($('log-gpu-memory').value.trim()) p['gpu-memory'] = $('log-gpu-memory').value.trim();
  $('log-run').disabled = true;
  try {
    const r = await api('validate-log', p);
    const body = $('log-table').querySelector('tbody');
    clear(body);
    for (const row of r.rows) {
      const tr = el('tr');
      tr.append(el('th', { scope: 'row', textContent: row.figure }));  // a card's heading on a phone
      if (row.computed) {
        td(tr, 'Printed', number6(row.printed));
        td(tr, 'vramcalc', number6(row.ours));
        td(tr, 'Error', `${row.error_percent >= 0 ? '+' : ''}${row.error_percent.toFixed(2)} %`);
      } else {
        const cell = el('td', { colSpan: 3, textContent: row.note });
        cell.dataset.label = 'Not computed';
        tr.append(cell);
      }
      body.append(tr);
    }
    $('log-summary').textContent = `A ${({ vllm: 'vLLM', sglang: 'SGLang', llamacpp: 'llama.cpp' })[r.engine] || r.engine} log of ${modelName(r.model)}: ${plural(r.rows.filter((x) => x.computed).length, 'figure', 'figures')} beside the printed ones.`;
    const notes = $('log-notes');
    clear(notes);
    for (const n of r.notes) notes.append(el('li', { textContent: n }));
    $('log-results').hidden = false;
  } catch (e) {
    if (!(LOG_FIELD_OF[e.field] && setFieldError(LOG_FIELD_OF[e.field], e.message))) {
      $('log-error').textContent = e.message;
      $('log-error').hidden = false;
    }
    $('log-results').hidden = true;
  } finally {
    $('log-run').disabled = false;
  }
}

function setupLogCheck() {
  for (const m of models) $('log-model').append(new Option(m.name, m.id));
  $('log-form').addEventListener('submit', (e) => { e.preventDefault(); runLogCheck(); });
}

// ---- Start: the catalogue, then the link's state (saying what in it is wrong), then the checker.
function loadUrl(q) {
  for (const id of CALC_FIELDS.concat(COMPARE_FIELDS)) {
    if (!q.has(id) || id === 'model' || id === 'quant') continue;
    $(id).value = id === 'overhead' ? q.get(id).replace(/%$/, '') : q.get(id);
  }
  if (q.has('engine') && $('engine').value !== q.get('engine')) {
    $('engine').value = 'rule';
    setFieldError('engine', `The link asks for engine “${q.get('engine')}”, which this page does not offer; accepted: rule, llamacpp, vllm, sglang.`);
  }
  const want = q.get('model');
  if (want && !models.some((m) => m.id === want)) {
    $('model').value = '';
    const near = models.filter((m) => m.id.split(/[-.]/)[0] === want.split(/[-.]/)[0]).map((m) => m.id).slice(0, 5);
    setFieldError('model', `The link asks for “${want}”, which is not in the catalogue${near.length ? `; similar: ${near.join(', ')}` : ''}. Pick a model from the list.`);
    return false;
  }
  $('model').value = want || (models.find((m) => m.id === 'deepseek-v3') || models[0]).id;
  fillBuilds();
  const quant = q.get('quant');
  if (quant && ![...$('quant').options].some((o) => o.value === quant)) {
    // Keep the link's tier so the API can say what is wrong with it, next to the field.
    $('quant').appendChild(new Option(`${quant} (from the link)`, quant));
  }
  if (quant) $('quant').value = quant;
  return true;
}

async function main() {
  models = await api('models', {});
  fillModels();
  const q = new URLSearchParams(location.search);
  const known = loadUrl(q);
  if (q.has('source') && /^(hf:|https?:\/\/)/.test(q.get('source'))) {
    $('source').value = q.get('source');
    readSource();
  } else if (known) {
    onModelChange();
  } else {
    clearFigures();
    setHeadline('No figure: the link names a model that is not in the catalogue.', true);
  }
  $('model-filter').addEventListener('input', filterModels);
  $('model-filter').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); pickFirstMatch(); } });
  $('model').addEventListener('change', onModelChange);
  $('source-read').addEventListener('click', readSource);
  $('source').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); readSource(); } });
  $('context-slider').addEventListener('input', () => {
    $('context').value = tokens(contextSteps(currentModel())[Number($('context-slider').value)]);
    schedule();
  });
  $('context').addEventListener('input', () => { syncSlider(); schedule(); });
  $('overhead').addEventListener('input', () => {
    const v = Number($('overhead').value);
    $('overhead-help').textContent = v > 0 && v < 1 ? `Read as ${v} % of weights + cache, not ${v * 100} %: type ${v * 100} for ${v * 100} %.`
      : 'Percent of weights + cache (15 means 15 %). Used by the percentage rule only.';
    schedule();
  });
  for (const id of ['quant', 'seqs', 'cache-dtype', 'engine', 'images', 'audio-seconds', 'b', 'b-quant', 'b-context']) {
    $(id).addEventListener('input', schedule);
    $(id).addEventListener('change', schedule);
  }
  // Addresses are read by the server: sent when committed (Enter, leaving the field, a pick from
  // the list), not at every keystroke.
  for (const id of ['mmproj', 'draft', 'lora']) {
    $(id).addEventListener('change', schedule);
    $(id).addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); schedule(); } });
  }
  setupLogCheck();
  await setupChecker(q);
}

main().catch((e) => {
  $('error').textContent = `Could not load the catalogue: ${e.message}`;
  $('error').hidden = false;
  setHeadline(`Could not load the catalogue: ${e.message}`, true);
});
