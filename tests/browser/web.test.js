// Browser tests for `vramcalc serve`: playwright-core drives Debian's chromium (headless) against
// a server this script starts on a free loopback port and stops. Every path of issue 15 is replayed
// as a visitor takes it, at desktop (1440x900) and phone (390x844) sizes. Usage:
//   node web.test.js PATH/TO/vramcalc OUTPUT_DIR      (CTest passes both; screenshots go to OUTPUT_DIR)
// VRAMCALC_WEB_DIR=DIR serves the page's files (index.html, app.js, style.css) from DIR instead of
// the binary, to replay the tests against another version of the page (such as main's) unbuilt.
'use strict';
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const assert = require('assert');
const { chromium } = require('playwright-core');

const binary = process.argv[2];
const outDir = process.argv[3] || path.join(os.tmpdir(), 'vramcalc-browser');
const only = process.env.VRAMCALC_BROWSER_ONLY ? new RegExp(process.env.VRAMCALC_BROWSER_ONLY) : null;
fs.mkdirSync(outDir, { recursive: true });

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
// Words from the project's working files that must never reach a visitor.
const INTERNAL = /\bseeds?\b|seeds' rule|reference\/|architectures\.md|reference folder|the Zipf one/i;

// Starts `vramcalc serve --port 0` and resolves with its base URL once it prints the port.
function startServer() {
  return new Promise((resolve, reject) => {
    const proc = spawn(binary, ['serve', '--host', '127.0.0.1', '--port', '0', '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 10000);
    proc.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\//.exec(err);
      if (m) { clearTimeout(timer); resolve({ proc, base: m[1] }); }
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
}

// Bytes as the page prints them (GB = 10^9, two decimals, grouped).
const gbText = (b) => (b / 1e9).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
function cli(args) { return execFileSync(binary, args, { encoding: 'utf8' }); }
function cliJson(args) { return JSON.parse(cli([...args, '--json'])); }
// The CLI's own text for the same inputs: the "Total" line of `vramcalc estimate`.
function cliTotal(args) {
  const out = cli(['estimate', ...args]);
  const m = /^\s*Total\s+(\S.*\S)\s*$/m.exec(out);
  assert(m, `no Total line in:\n${out}`);
  return m[1];
}

// WCAG relative luminance and contrast ratio of two "rgb(r, g, b)" colours.
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number).map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

async function run() {
  const { proc, base } = await startServer();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'vramcalc-chromium-'));
  // A fresh --user-data-dir: playwright takes it as the persistent context's directory.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: DESKTOP,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const webDir = process.env.VRAMCALC_WEB_DIR;
  if (webDir) {
    const types = { 'index.html': 'text/html', 'app.js': 'text/javascript', 'style.css': 'text/css' };
    await browser.route((url) => url.origin === base && ['/', '/app.js', '/style.css'].includes(url.pathname), (route) => {
      const name = new URL(route.request().url()).pathname.slice(1) || 'index.html';
      route.fulfill({ status: 200, contentType: types[name], body: fs.readFileSync(path.join(webDir, name)) });
    });
  }
  const failures = [];
  const timings = [];
  async function test(name, viewport, body) {
    if (only && !only.test(name)) return;
    const page = await browser.newPage();
    await page.setViewportSize(viewport);
    const started = Date.now();
    try {
      await body(page);
      console.log(`ok - ${name} (${Date.now() - started} ms)`);
    } catch (e) {
      failures.push(name);
      console.log(`not ok - ${name}\n${e.stack}`);
    } finally {
      await page.screenshot({ path: path.join(outDir, `${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.png`), fullPage: true }).catch(() => {});
      await page.close();
    }
  }
  const totalShown = (page) => page.waitForFunction(() => !document.getElementById('figures').hidden && /GB/.test(document.getElementById('total').textContent), null, { timeout: 8000 });
  const waitTotal = (page, want) => page.waitForFunction((w) => !document.getElementById('figures').hidden && document.getElementById('total').textContent === w, want, { timeout: 8000 });
  const visibleText = (page, sel) => page.$eval(sel, (e) => (e.hidden ? '' : e.textContent));
  async function runCheck(page) {
    await page.click('#check-run');
    await page.waitForSelector('#check-results:not([hidden]):not([aria-busy]) #check-summary', { timeout: 30000 });
  }
  const models = cliJson(['models']);
  const hasStatus = Array.isArray(models) ? models.some((m) => 'status' in m) : false;

  try {
    // ---- Item 1: builds are selectable, kept in the URL, and Compare's B keeps its own tier.
    await test('01 a build of Kimi K3 gives its figure, survives a reload, and B keeps its own tier', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=kimi-k3&b=deepseek-v3`);
      await totalShown(page);
      await page.selectOption('#quant', 'UD-IQ1_S');
      const want = cliTotal(['kimi-k3', '--quant', 'UD-IQ1_S']);
      await waitTotal(page, want);
      assert.match(await page.textContent('#total-scenario'), /UD-IQ1_S/);
      assert.strictEqual(await page.isVisible('#error'), false, 'an error beside a build');
      assert.match(page.url(), /quant=UD-IQ1_S/);
      // B (DeepSeek-V3) is at its own native checkpoint, not at A's build.
      await page.waitForFunction(() => document.querySelectorAll('#compare-table tbody tr').length > 0);
      const bTier = await page.textContent('#compare-table tbody tr:first-child td:nth-child(3)');
      const dsv3 = cliJson(['estimate', 'deepseek-v3']);
      assert.strictEqual(bTier, dsv3.weights.tier);
      await page.reload();
      await waitTotal(page, want);
      assert.strictEqual(await page.inputValue('#quant'), 'UD-IQ1_S');
    });

    // ---- Item 2: a context past the model's maximum gets no figure and says why, by the field.
    await test('02 context past the maximum is refused next to the field', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=llama-3.1-8b&context=1M`);
      await page.waitForSelector('#context-error:not([hidden])', { timeout: 8000 });
      assert.match(await page.textContent('#context-error'), /at most 128K \(131,072\) tokens/);
      assert.strictEqual(await page.isVisible('#figures'), false, 'a figure for a context the model does not have');
      assert.match(await page.textContent('#headline'), /No figure/);
      assert.strictEqual(await page.locator('#curve circle').count(), 0);
      // Back within range, the figure returns.
      await page.fill('#context', '128K');
      await waitTotal(page, cliTotal(['llama-3.1-8b', '--context', '128K']));
    });

    // ---- Item 3: errors clear stale figures, sit by their field; a bad B never blocks A.
    await test('03 errors clear stale figures and sit next to their field, phone', PHONE, async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await totalShown(page);
      await page.fill('#context', '12abc');
      await page.waitForSelector('#context-error:not([hidden])');
      assert.strictEqual(await page.isVisible('#figures'), false, 'stale figures stay on screen');
      assert.strictEqual(await page.locator('#curve circle').count(), 0, 'stale chart');
      const field = await page.locator('#context').boundingBox();
      const error = await page.locator('#context-error').boundingBox();
      assert(error.y - (field.y + field.height) < 80, `the error is ${error.y - field.y}px from its field`);
      await page.screenshot({ path: path.join(outDir, 'phone-context-error.png') });
      await page.fill('#context', '8K');
      await totalShown(page);
      // A bad B tier: the error is B's, by B's field; A's figure stays.
      await page.fill('#b-quant', 'FOO');
      await page.waitForSelector('#b-quant-error:not([hidden])');
      assert.match(await page.textContent('#b-quant-error'), /FOO/);
      assert.strictEqual(await page.isVisible('#figures'), true, 'a bad B blocked the calculator');
      assert.strictEqual(await page.isVisible('#quant-error'), false, "B's error under A's field");
    });

    // ---- Item 4: the checker tries every tier, prefers speed with offload, shows the split and what
    // it would take for models that do not fit.
    await test('04 checker: RTX 4090 + 64 GB RAM + 5 GB/s SSD picks a fast tier and shows the split', DESKTOP, async (page) => {
      await page.goto(`${base}/`);
      await page.waitForSelector('.gpu-device option[value="rtx-4090"]', { state: 'attached' });
      await page.selectOption('.gpu-device', 'rtx-4090');
      await page.fill('#check-ram', '64');
      await page.fill('#check-ssd', '5');
      await runCheck(page);
      const api = cliJson(['check', '--gpu', 'rtx-4090', '--ram', '64GB', '--ssd-gbps', '5', '--prefer', 'balanced']);
      const k3 = api.rows.find((r) => r.model === 'kimi-k3');
      const row = page.locator('#check-table tbody tr[data-model="kimi-k3"]');
      assert.strictEqual(await row.count(), 1);
      const cells = await row.locator('td').allTextContents();
      assert.notStrictEqual(cells[2], 'native MXFP4', 'the slowest tier picked');
      assert.strictEqual(cells[2], k3.tier);
      // The page shows the CLI's figure, and the tier it picks decodes well above the native MXFP4
      // checkpoint on the same box (experts placed uniformly, no hot-expert cache: about 0.43 tok/s
      // against 0.05 for the native one, whose experts are mostly read from the SSD).
      // The cell is the estimate and, in brackets, the range measured runs show (the CLI's JSON too).
      const [shown, low, high] = cells[6].match(/^([\d.]+) \(([\d.]+)-([\d.]+)\)$/).slice(1).map(Number);
      assert(Math.abs(shown - k3.decode_tok_s) < 0.01, `Kimi K3 at ${cells[6]} tok/s, the CLI ${k3.decode_tok_s}`);
      assert(Math.abs(low - k3.decode_range_tok_s[0]) < 0.01 && Math.abs(high - k3.decode_range_tok_s[1]) < 0.01, `range ${cells[6]}, the CLI ${k3.decode_range_tok_s}`);
      const native = cliJson(['plan', 'kimi-k3', '--gpu', 'rtx-4090', '--ram', '64GB', '--ssd-gbps', '5', '--quant', 'native']);
      assert(shown > 4 * native.decode.expected_tok_s, `Kimi K3 at ${cells[6]} tok/s, native ${native.decode.expected_tok_s}`);
      assert.match(cells[4], /GB \/ .*GB \/ .*GB/, 'no GPU/RAM/SSD split');
      assert.doesNotMatch(await page.textContent('#check-summary'), /^All/);
      // A box too small for the largest models lists them with what it would take.
      await page.fill('#check-ram', '0');
      await page.fill('#check-ssd', '0');
      await runCheck(page);
      const rest = await page.textContent('#check-rest');
      assert.match(rest, /Kimi K3: No tier fits\. Even the smallest, .* needs .* would hold it on GPUs/);
      await page.locator('#gpu-check').screenshot({ path: path.join(outDir, 'checker-rtx4090.png') });
    });

    await test('04b checker ranks 8 x H200 as the CLI does, and the plan matches', DESKTOP, async (page) => {
      await page.goto(`${base}/?gpu=h200x8`);
      await page.waitForSelector('#check-results:not([hidden]) #check-table tbody tr', { timeout: 30000 });
      const cli8 = cliJson(['check', '--gpu', 'H200x8', '--prefer', 'balanced']);
      const fitting = cli8.rows.filter((r) => r.fit !== 'none' && !(models.find((m) => m.id === r.model) || {}).status?.match?.(/announced|withdrawn/));
      const rows = await page.$$eval('#check-table tbody tr', (trs) => trs.map((tr) => tr.dataset.model));
      assert.deepStrictEqual(rows, fitting.map((r) => r.model));
      await page.click('#check-table tbody tr:first-child button');
      await page.waitForSelector('#plan-view:not([hidden]) #plan-devices tbody tr', { timeout: 20000 });
      const plan = cliJson(['plan', fitting[0].model, '--gpu', 'H200x8', ...(fitting[0].quant ? ['--quant', fitting[0].quant] : [])]);
      assert.strictEqual(await page.locator('#plan-devices tbody tr').count(), plan.devices.length);
      assert.strictEqual(await page.textContent('#plan-verdict'), plan.verdict);
      // The plan table fits the desktop page: Fits and Holds are not behind a sideways scroll.
      const over = await page.$eval('#plan-devices', (t) => t.getBoundingClientRect().right - document.querySelector('#gpu-check').getBoundingClientRect().right);
      assert(over <= 0, `the plan table sticks out ${over}px`);
      await page.locator('#gpu-check').screenshot({ path: path.join(outDir, 'checker-8xH200-plan.png') });
    });

    // ---- Item 5: an unreleased model never "fits" and gets no commands. Until the catalogue
    // carries `status`, the test gives K3.1 Pro the status the catalogue will hold.
    await test('05 an unreleased model is not runnable', DESKTOP, async (page) => {
      if (!hasStatus) {
        await page.route((url) => url.pathname === "/api/models", async (route) => {
          const res = await route.fetch();
          const list = await res.json();
          for (const m of list) if (m.id === 'kimi-k3.1-pro') Object.assign(m, { status: 'announced', status_note: 'weights not published' });
          route.fulfill({ response: res, json: list });
        });
      }
      await page.goto(`${base}/?model=kimi-k3.1-pro&gpu=h200x8`);
      await totalShown(page);
      assert.match(await visibleText(page, '#model-status'), /not released|unavailable/);
      assert.match(await page.textContent('#verdict'), /Not runnable/);
      await page.waitForSelector('#check-results:not([hidden]) #check-table tbody tr', { timeout: 30000 });
      assert.strictEqual(await page.locator('#check-table tbody tr[data-model="kimi-k3.1-pro"]').count(), 0, 'an unreleased model ranked as a fit');
      assert.match(await page.textContent('#check-rest'), /Kimi K3\.1 Pro: weights not released/);
    });

    // ---- Item 6: engine commands follow the tier.
    await test('06 engine commands use the chosen build', DESKTOP, async (page) => {
      await page.goto(`${base}/?gpu=h200x8&check-tier=Q4_K_M&plan=llama-3.1-70b`);
      await page.waitForSelector('#plan-view:not([hidden]) #plan-commands pre', { timeout: 30000 });
      const cmds = await page.$$eval('#plan-commands pre', (ps) => ps.map((p) => p.textContent));
      const llama = cmds.find((c) => /llama-server/.test(c));
      assert(llama, 'no llama.cpp command');
      assert.match(llama, /Q4_K_M/i, `llama.cpp command not at the tier: ${llama}`);
      for (const c of cmds.filter((x) => /vllm serve|sglang/.test(x))) assert.doesNotMatch(c, /cpu-offload-gb 64/);
    });

    // ---- Item 7: the phone sees the figure first, after edits too; tables fit; a tap shows the plan.
    await test('07 phone: the figure is in view on load and after an edit; the checker fits the screen', PHONE, async (page) => {
      const t0 = Date.now();
      await page.goto(`${base}/?model=kimi-k3`);
      await page.waitForFunction(() => /GB/.test(document.getElementById('headline').textContent));
      timings.push(['first figure, phone, loopback (ms)', Date.now() - t0]);
      const inView = async () => {
        const box = await page.locator('#headline').boundingBox();
        return box && box.y >= -1 && box.y + box.height <= PHONE.height;
      };
      assert(await inView(), 'no figure in view on first load');
      await page.screenshot({ path: path.join(outDir, 'phone-first-load.png') });
      await page.fill('#seqs', '4');
      await page.waitForFunction(() => /4 sequences/.test(document.getElementById('headline').textContent));
      assert(await inView(), 'the figure scrolled away after an edit');
      await page.click('#check-run');
      await page.waitForSelector('#check-results:not([hidden]) #check-table tbody tr', { timeout: 30000 });
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert(width <= PHONE.width, `page scrolls sideways at phone width (${width}px)`);
      const cut = await page.$$eval('#check-table td', (tds) => tds.filter((td) => td.getBoundingClientRect().right > window.innerWidth + 1).length);
      assert.strictEqual(cut, 0, `${cut} checker cells cut off`);
      await page.locator('#gpu-check').screenshot({ path: path.join(outDir, 'phone-checker.png') });
      await page.click('#check-table tbody tr:first-child button');
      await page.waitForSelector('#plan-view:not([hidden]) #plan-devices tbody tr', { timeout: 20000 });
      await page.waitForFunction(() => {
        const r = document.getElementById('plan-view').getBoundingClientRect();
        return r.top >= -2 && r.top < window.innerHeight;
      }, null, { timeout: 3000 });
      const width2 = await page.evaluate(() => document.documentElement.scrollWidth);
      assert(width2 <= PHONE.width, `the plan scrolls sideways at phone width (${width2}px)`);
      await page.screenshot({ path: path.join(outDir, 'phone-plan.png') });
    });

    // ---- Item 8: checker inputs read as a visitor means them, or refused by the field.
    await test('08 checker inputs: RAM 64 is GB, 7GB/s parses, a negative count is refused by its field', DESKTOP, async (page) => {
      await page.goto(`${base}/`);
      await page.waitForSelector('.gpu-device option[value="rtx-4090"]', { state: 'attached' });
      await page.selectOption('.gpu-device', 'rtx-4090');
      await page.fill('#check-ram', '64');
      await page.fill('#check-ssd', '7GB/s');
      await runCheck(page);
      const box = await page.textContent('#check-box');
      assert.match(box, /RAM 64\.00 GB/);
      assert.match(box, /SSD at 7 GB\/s/);
      await page.fill('.gpu-count', '-2');
      await page.click('#check-run');
      const err = page.locator('.gpu-row .field-error:not([hidden])');
      await err.waitFor();
      assert.match(await err.textContent(), /whole number from 1 to 64/);
      assert.doesNotMatch(await err.textContent(), /--gpu/);
    });

    // ---- Item 9: your own model through the server; the filter never switches the estimate.
    await test('09 a pasted config.json is estimated; typing in the filter keeps the estimate', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await totalShown(page);
      const before = await page.textContent('#total');
      await page.type('#model-filter', 'llama', { delay: 10 });
      await page.waitForTimeout(300);
      assert.strictEqual(await page.inputValue('#model'), 'kimi-k3');
      assert.strictEqual(await page.textContent('#total'), before);
      // Llama 3.1 8B's published config.json (meta-llama/Llama-3.1-8B, the values the catalogue holds).
      const config = JSON.stringify({ architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 4096, intermediate_size: 14336,
        num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, vocab_size: 128256, max_position_embeddings: 131072,
        rms_norm_eps: 1e-5, rope_theta: 500000.0, tie_word_embeddings: false, torch_dtype: 'bfloat16' });
      await page.fill('#source', config);
      await page.click('#source-read');
      await page.waitForFunction(() => /^Your model: a llama config\.json: [\d.,]+ GB/.test(document.getElementById('headline').textContent)
        && !document.getElementById('figures').hidden, null, { timeout: 10000 });
      assert.strictEqual(await page.inputValue('#model'), '__source');
      // The cache line is the same arithmetic as the catalogue's Llama 3.1 8B: 32 x 8 x 128 x 2 x 2 B x 8,192.
      const cache = await page.$$eval('#breakdown tbody tr', (trs) => trs.map((tr) => tr.textContent).find((t) => /KV cache/.test(t)));
      assert.match(cache, /1\.07 GB/);
      // A location the server cannot reach is refused next to the box, not silently.
      await page.fill('#source', 'not a source');
      await page.click('#source-read');
      await page.waitForSelector('#source-error:not([hidden])');
      assert.match(await page.textContent('#source-error'), /hf:ORG\/REPO/);
    });

    // ---- Item 10: the link carries builds and the checker box, and says what in it is wrong.
    await test('10 URL state: the checker box survives a reload; unknown model and tier are named', DESKTOP, async (page) => {
      await page.goto(`${base}/`);
      await page.waitForSelector('.gpu-device option[value="h100-sxm"]', { state: 'attached' });
      await page.selectOption('.gpu-device', 'h100-sxm');
      await page.fill('.gpu-count', '2');
      await page.fill('#check-ram', '256');
      await page.fill('#check-ssd', '7');
      await page.fill('#check-context', '32K');
      await runCheck(page);
      const url = page.url();
      assert.match(url, /gpu=h100-sxmx2/);
      assert.match(url, /ram=256/);
      await page.goto(url);
      await page.waitForSelector('#check-results:not([hidden]) #check-summary', { timeout: 30000 });
      assert.strictEqual(await page.inputValue('.gpu-count'), '2');
      assert.strictEqual(await page.inputValue('#check-ram'), '256');
      assert.strictEqual(await page.inputValue('#check-context'), '32K');
      // Item 2 in the checker: a context past a model's maximum is flagged on its row, not capped silently.
      await page.fill('#check-context', '1M');
      await runCheck(page);
      const llama = await page.textContent('#check-table tbody tr[data-model="llama-3.1-8b"]');
      assert.match(llama, /128K \(the model's maximum; 1M asked\)/);
      await page.goto(`${base}/?model=kimi-k9`);
      await page.waitForSelector('#model-error:not([hidden])');
      assert.match(await page.textContent('#model-error'), /kimi-k9/);
      assert.strictEqual(await page.isVisible('#figures'), false, 'a substitute model was estimated');
      await page.goto(`${base}/?model=kimi-k3&quant=FOO`);
      await page.waitForSelector('#quant-error:not([hidden])');
      assert.match(await page.textContent('#quant-error'), /FOO/);
    });

    // ---- Item 11: the chart has a y scale, a true log x, readable phone labels and a table.
    await test('11 chart: y ticks, log-scale x, phone-size labels, figures as a table', PHONE, async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await page.waitForFunction(() => document.querySelectorAll('#curve circle').length > 0);
      const ticks = await page.$$eval('#curve text.tick', (ts) => ts.map((t) => t.textContent));
      const yTicks = ticks.filter((t) => /^[\d,.]+$/.test(t));
      assert(yTicks.length >= 3, `y ticks: ${ticks}`);
      assert.match(await page.textContent('#curve'), /GB/);
      // Doublings sit at equal steps on a log axis.
      const xs = await page.$$eval('#curve circle', (cs) => cs.map((c) => Number(c.getAttribute('cx'))));
      const steps = xs.slice(1).map((x, i) => x - xs[i]);
      for (const s of steps.slice(0, -1)) assert(Math.abs(s - steps[0]) < 0.5, `uneven log steps ${steps}`);
      const px = await page.$eval('#curve text.tick', (t) => t.getBoundingClientRect().height);
      assert(px >= 11, `tick labels ${px}px tall on a phone`);
      const rows = await page.locator('#curve-table tbody tr').count();
      assert.strictEqual(rows, xs.length);
      await page.locator('#context-chart').screenshot({ path: path.join(outDir, 'phone-chart.png') });
    });

    // ---- Item 12: units and numbers say what they are.
    await test('12 units: GPUs with memory, overhead in percent, token counts alike', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await totalShown(page);
      const options = await page.$$eval('.gpu-device option', (os) => os.map((o) => o.textContent));
      assert(options.some((o) => /RTX 4090, 24 GiB = 25\.77 GB$/.test(o)), `GPU names: ${options.slice(0, 5)}`);
      assert(options.every((o) => /GB/.test(o)), 'a GPU without its memory');
      // A unified box shows the share its OS lets the GPU hold (3/4 of 64 GiB on macOS; DGX Spark's
      // 128 GiB less the firmware's 6.31 GiB), not its whole memory.
      assert(options.some((o) => /Apple M3 Max 64GB, GPU share 48 GiB of 64 GiB$/.test(o)), `unified: ${options.filter((o) => /Apple/.test(o))}`);
      assert(options.some((o) => /DGX Spark \(GB10\) 128GB, GPU share 121\.69 GiB of 128 GiB$/.test(o)), `unified: ${options.filter((o) => /Spark/.test(o))}`);
      assert.match(await page.textContent('label[for="overhead"]'), /percent/);
      await page.fill('#overhead', '0.15');
      await page.waitForFunction(() => /0\.15 %/.test(document.getElementById('overhead-help').textContent));
      await waitTotal(page, cliTotal(['kimi-k3', '--overhead', '0.15%']));
      assert.match(await page.textContent('header'), /1 GB = 10/);
    });

    // ---- Item 13: no internal words; sources are links; model pages link to their calculator.
    await test('13 no internal words reach visitors; model pages link the calculator and fit a phone', PHONE, async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await totalShown(page);
      await page.$$eval('details', (ds) => ds.forEach((d) => { d.open = true; }));
      const text = await page.evaluate(() => document.body.innerText);
      assert.doesNotMatch(text, INTERNAL, `internal words: ${(text.match(INTERNAL) || [])[0]}`);
      assert(await page.locator('#breakdown a[href^="http"]').count() > 0, 'sources are not links');
      for (const m of models) {
        const res = await page.request.get(`${base}/models/${m.id}`);
        const html = await res.text();
        const words = html.replace(/<[^>]+>/g, ' ');
        assert.doesNotMatch(words, INTERNAL, `${m.id}: "${(words.match(new RegExp(`.{0,60}${INTERNAL.source}.{0,60}`, 'i')) || [])[0]}"`);
        assert(html.includes(`href="/?model=${m.id}"`), `${m.id} page does not link to its calculator`);
      }
      await page.goto(`${base}/models/kimi-k3.1-pro`);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert(width <= PHONE.width, `the K3.1 Pro page scrolls sideways (${width}px)`);
      await page.screenshot({ path: path.join(outDir, 'phone-model-page.png') });
      await page.click('text=Open the calculator set to this model');
      await totalShown(page);
      assert.strictEqual(await page.inputValue('#model'), 'kimi-k3.1-pro');
    });

    // ---- Item 14: accessibility basics.
    await test('14 accessibility: contrast, unique ids, formulas by keyboard, one live region', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await totalShown(page);
      await page.focus('#context');
      const style = await page.$eval('#context', (e) => {
        const s = getComputedStyle(e);
        return { outline: s.outlineColor, width: s.outlineWidth, border: s.borderTopColor, bg: getComputedStyle(e.closest('.panel')).backgroundColor };
      });
      assert(contrast(style.outline, style.bg) >= 3, `focus ring ${style.outline} on ${style.bg}`);
      assert(parseFloat(style.width) >= 2, `focus ring ${style.width}`);
      assert(contrast(style.border, 'rgb(255, 255, 255)') >= 3, `input border ${style.border}`);
      await page.click('#gpu-add');
      await page.click('.gpu-row >> nth=0 >> .gpu-remove');
      await page.click('#gpu-add');
      const dupes = await page.evaluate(() => {
        const seen = {};
        for (const e of document.querySelectorAll('[id]')) seen[e.id] = (seen[e.id] || 0) + 1;
        return Object.keys(seen).filter((k) => seen[k] > 1);
      });
      assert.deepStrictEqual(dupes, []);
      // The first line's formula opens from the keyboard.
      await page.focus('#breakdown tbody tr:first-child summary');
      await page.keyboard.press('Enter');
      assert(await page.$eval('#breakdown tbody tr:first-child details', (d) => d.open), 'formula not reachable by keyboard');
      assert.match(await page.textContent('#breakdown tbody tr:first-child details'), /=/);
      const live = await page.$$eval('[aria-live], [role=alert], [role=status], output', (es) => es.map((e) => e.id));
      assert.deepStrictEqual(live, ['headline']);
      const unlabelled = await page.$$eval('input, select', (es) => es.filter((e) => !e.labels.length && !e.getAttribute('aria-label')).map((e) => e.id));
      assert.deepStrictEqual(unlabelled, []);
    });

    // ---- Item 15: the small things.
    await test('15 small: plurals, equal compare, clamped headline, HTML 404, tok/s as estimate', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await totalShown(page);
      assert.match(await page.textContent('#total-scenario'), /1 sequence\)/);
      assert.doesNotMatch(await page.textContent('body'), /sequence\(s\)/);
      await page.waitForFunction(() => document.getElementById('compare-difference').textContent !== '');
      assert.match(await page.textContent('#compare-difference'), /same memory/);
      await page.selectOption('#quant', 'Q8_0');
      await page.waitForSelector('#clamp-notice:not([hidden])');
      // Q8_0 is 8.5 bits per weight (34 B per 32-value block): 2.8T params x 8.5 / 8 = 2,975 GB,
      // more than K3's published 1,560.94 GB MXFP4 files, so the native size stands.
      assert.match(await page.textContent('#clamp-notice'), /Q8_0 would need 2,9\d\d\.\d\d GB/);
      assert.match(await page.textContent('#total-scenario'), /native MXFP4; Q8_0 would be larger/);
      assert.match(await page.textContent('#check-table thead'), /tok\/s \(estimate, likely range\)/);
      const res = await page.goto(`${base}/models/nope`);
      assert.strictEqual(res.status(), 404);
      assert.match(res.headers()['content-type'], /text\/html/);
      assert.match(await page.textContent('h1'), /No model called/);
    });

    // ---- Engine choice: the control sends engine=, and the per-device figures of the answer's
    // `engine` object are drawn (the contract shape; the real API when it carries one).
    await test('16 engine choice sends engine= and draws per-device figures', DESKTOP, async (page) => {
      const seen = [];
      await page.route(`${base}/api/estimate?**`, async (route) => {
        const url = new URL(route.request().url());
        seen.push(url.searchParams.get('engine'));
        const res = await route.fetch();
        const json = await res.json();
        if (res.ok() || !url.searchParams.has('engine')) {
          if (res.ok() && !json.engine && url.searchParams.has('engine')) {
            // The contract's shape (COMMON.md), filled from the answer's own lines.
            json.engine = { name: url.searchParams.get('engine'), version_modelled: 'b6000', settings: { 'ctx-size': json.inputs.context_tokens },
              devices: [{ name: 'CUDA0', capacity_bytes: 141e9, lines: json.lines.map((l) => ({ kind: 'other', label: l.label, bytes: l.bytes, formula: l.formula, assumption: l.assumption, source: l.source })),
                total_bytes: json.totals.total_bytes, fits: false }], total_bytes: json.totals.total_bytes, kv_tokens: json.inputs.context_tokens, max_concurrency: null, notes: ['a note'] };
          }
          return route.fulfill({ response: res, json });
        }
        // Until the API takes engine=, answer as it will (the rule's figure with an engine object).
        const plain = new URL(url);
        plain.searchParams.delete('engine');
        const r2 = await route.fetch({ url: plain.toString() });
        const j2 = await r2.json();
        j2.engine = { name: url.searchParams.get('engine'), version_modelled: 'b6000', settings: {}, devices: [{ name: 'CUDA0', capacity_bytes: null,
          lines: [{ kind: 'weights', label: 'Weights', bytes: j2.totals.weights_bytes, formula: 'f', assumption: 'a', source: 'https://github.com/ggml-org/llama.cpp' }],
          total_bytes: j2.totals.weights_bytes, fits: null }], total_bytes: j2.totals.weights_bytes, kv_tokens: null, max_concurrency: null, notes: [] };
        route.fulfill({ response: r2, json: j2 });
      });
      await page.route(`${base}/api/sweep?**`, async (route) => {
        const url = new URL(route.request().url());
        url.searchParams.delete('engine');
        route.fulfill({ response: await route.fetch({ url: url.toString() }) });
      });
      await page.goto(`${base}/?model=llama-3.1-8b`);
      await totalShown(page);
      await page.selectOption('#engine', 'llamacpp');
      await page.waitForSelector('#engine-view:not([hidden]) table.engine-device');
      await page.waitForFunction(() => /llamacpp/.test(document.getElementById('engine-title').textContent));
      assert(seen.includes('llamacpp'), `engine not sent: ${seen}`);
      assert.match(await page.textContent('#engine-title'), /llamacpp/);
      assert.match(page.url(), /engine=llamacpp/);
    });

    // ---- Issue 17: what loads beside the model (mmproj, images, draft, LoRA) from the page's own
    // controls: the API's figures per line and per device, its refusals next to the field they name.
    await test('18 a draft model from the page: its weights and cache per device, kept in the link', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=qwen3-32b&engine=llamacpp`);
      await totalShown(page);
      await page.fill('#draft', 'qwen3-0.6b');
      await page.press('#draft', 'Enter');
      await page.waitForSelector('#components-view:not([hidden]) tr[data-id="draft.weights"]', { timeout: 8000 });
      // Worked by hand: Qwen3-0.6B has 596,049,920 parameters (its config: 28 layers, hidden 1,024,
      // 16 q / 8 kv heads of 128, FFN 3,072, vocabulary 151,936, tied embeddings) at BF16, 2 B each:
      // 1,192,099,840 B. The cache: 28 layers x 8 kv heads x (128 + 128) values x 2 B (F16) x 8,192
      // tokens = 939,524,096 B.
      const draftWeights = 1192099840;
      assert.strictEqual(await page.getAttribute('#components tr[data-id="draft.weights"]', 'data-bytes'), String(draftWeights));
      assert.strictEqual(await page.getAttribute('#components tr[data-id="draft.kv"]', 'data-bytes'), '939524096');
      assert.match(await page.textContent('#components tr[data-id="draft.weights"]'), /1\.19 GB/);
      // Per device, llama.cpp puts the draft's layers where it puts the target's: its weight lines
      // on every device add up to the same bytes.
      await page.waitForSelector('#engine-view:not([hidden]) table.engine-device');
      const placed = await page.$$eval('#engine-devices tr[data-kind="weights"]', (rows) => rows
        .filter((r) => /Draft model: Weights/.test(r.textContent)).reduce((sum, r) => sum + Number(r.dataset.bytes), 0));
      assert.strictEqual(placed, draftWeights);
      assert.match(await page.textContent('#engine-devices'), /Draft model: KV cache/);
      // The API's answer, the same inputs through the CLI.
      const want = cliJson(['estimate', 'qwen3-32b', '--engine', 'llamacpp', '--draft', 'qwen3-0.6b']);
      assert.strictEqual(await page.textContent('#components-total'), `${gbText(want.components.total_with_bytes)} GB`);
      assert.match(page.url(), /draft=qwen3-0\.6b/);
      await page.reload();
      await page.waitForSelector('#components-view:not([hidden]) tr[data-id="draft.weights"]', { timeout: 8000 });
      assert.strictEqual(await page.inputValue('#draft'), 'qwen3-0.6b');
    });

    await test('19 beside-the-model inputs are refused next to their field, as the API refuses them, phone', PHONE, async (page) => {
      await page.goto(`${base}/?model=qwen3-8b`);
      await totalShown(page);
      // Images need a projector (the API's own words).
      await page.fill('#images', '2');
      await page.waitForSelector('#images-error:not([hidden])', { timeout: 8000 });
      assert.match(await page.textContent('#images-error'), /projector/);
      assert.strictEqual(await page.getAttribute('#images', 'aria-invalid'), 'true');
      assert(await page.$eval('#figures', (f) => f.hidden), 'a stale figure is still shown');
      await page.fill('#images', '0');
      await totalShown(page);
      // The server reads no local paths: an adapter must be an address.
      await page.fill('#lora', '/home/me/adapter.gguf');
      await page.press('#lora', 'Enter');
      await page.waitForSelector('#lora-error:not([hidden])', { timeout: 8000 });
      assert.match(await page.textContent('#lora-error'), /http\(s\):\/\/ URL or hf:ORG\/REPO/);
      await page.fill('#lora', '');
      await page.press('#lora', 'Enter');
      await totalShown(page);
      // A draft that is neither a catalogue id nor an address.
      await page.fill('#draft', 'not-a-model');
      await page.press('#draft', 'Enter');
      await page.waitForSelector('#draft-error:not([hidden])', { timeout: 8000 });
      assert.match(await page.textContent('#draft-error'), /catalogue id/);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert(width <= PHONE.width, `the form scrolls sideways (${width}px)`);
    });

    await test('20 mmproj auto on Gemma 3 27B: the tower from its config and an image per sequence', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=gemma-3-27b&engine=llamacpp&quant=gemma-3-27b-it.Q4_K_M`);
      await totalShown(page);
      await page.fill('#mmproj', 'auto');
      await page.press('#mmproj', 'Enter');
      await page.fill('#images', '1');
      await page.waitForSelector('#components-view:not([hidden]) tr[data-id="vision.tokens"]', { timeout: 8000 });
      // Worked by hand (tests/test_config_tower.cpp): 423,060,336 tower parameters x 2 B (F16).
      assert.strictEqual(await page.getAttribute('#components tr[data-id="vision.weights"]', 'data-bytes'), '846120672');
      assert.match(await page.textContent('#components tr[data-id="vision.tokens"]'), /256 per image x 1 image/);
      assert.match(await page.textContent('#engine-devices'), /Vision/);
    });

    await test('21 audio seconds from the page: their tokens in the context of an audio model, refused on a text model', DESKTOP, async (page) => {
      await page.goto(`${base}/?model=qwen3-8b`);
      await totalShown(page);
      // A text model has no audio encoder: the API's refusal, next to the field.
      await page.fill('#audio-seconds', '10');
      await page.waitForSelector('#audio-seconds-error:not([hidden])', { timeout: 8000 });
      assert.match(await page.textContent('#audio-seconds-error'), /no audio encoder/);
      assert.strictEqual(await page.getAttribute('#audio-seconds', 'aria-invalid'), 'true');
      // Qwen2-Audio-7B's published audio_config with Qwen-7B's text sizes (the config of
      // tests/test_audio_tokens.cpp), pasted as the visitor's own model.
      const config = JSON.stringify({ architectures: ['Qwen2AudioForConditionalGeneration'], model_type: 'qwen2_audio', torch_dtype: 'bfloat16',
        text_config: { model_type: 'qwen2', hidden_size: 4096, intermediate_size: 11008, num_hidden_layers: 32, num_attention_heads: 32,
          num_key_value_heads: 32, vocab_size: 156032, max_position_embeddings: 8192, tie_word_embeddings: false },
        audio_config: { model_type: 'qwen2_audio_encoder', d_model: 1280, encoder_attention_heads: 20, encoder_ffn_dim: 5120,
          encoder_layers: 32, num_mel_bins: 128, max_source_positions: 1500 } });
      await page.fill('#source', config);
      await page.click('#source-read');
      // Its max_position_embeddings is 8,192: the audio's tokens need room beside the text.
      await page.fill('#context', '4K');
      await page.fill('#audio-seconds', '75');
      await page.waitForSelector('#components-view:not([hidden]) tr[data-id="audio.tokens"]', { timeout: 10000 });
      // Worked by hand (processing_qwen2_audio.py): 75 s are two 30 s clips of 750 tokens and one
      // 15 s clip of (1,499 // 2 + 1 - 2) // 2 + 1 = 375: 1,875 tokens, no bytes of their own.
      const line = page.locator('#components tr[data-id="audio.tokens"]');
      assert.match(await line.textContent(), /75 s in 3 clips/);
      assert.strictEqual(await line.getAttribute('data-bytes'), '0');
      assert(await page.$eval('#audio-seconds-error', (e) => e.hidden), 'the refusal is still shown');
      assert.match(page.url(), /audio-seconds=75/);
      // Past the model's context, the audio's tokens are named in the refusal next to the context.
      await page.fill('#context', '8K');
      await page.waitForSelector('#context-error:not([hidden])', { timeout: 8000 });
      assert.match(await page.textContent('#context-error'), /10,067 \(1,875 from the audio\) is beyond it/);
    });

    // ---- Issue 12: the checker offers the engine; each row and the plan show the engine's own
    // per-device lines (kind, label, bytes; formula and source one click away), the same bytes the
    // CLI prints, on a desktop and on a phone.
    for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
      await test(`17 checker with vLLM shows every device line, ${name}`, viewport, async (page) => {
        await page.goto(`${base}/`);
        await page.waitForSelector('.gpu-device option[value="h100-sxm"]', { state: 'attached' });
        await page.selectOption('.gpu-device', 'h100-sxm');
        await page.selectOption('#check-engine', 'vllm');
        await runCheck(page);
        assert.match(await page.textContent('#check-box'), /engine vllm/);
        const want = cliJson(['check', '--gpu', 'h100-sxm', '--engine', 'vllm', '--prefer', 'balanced']);
        const first = want.rows.find((r) => r.fit === 'gpu');
        assert(first && first.engine_answer, 'the CLI row has no engine answer');
        const row = page.locator(`#check-table tbody tr[data-model="${first.model}"]`);
        await row.locator('td.per-device button').click();
        const lines = page.locator(`#check-table tr[data-devices-of="${first.model}"] table.engine-device tbody tr`);
        const wantLines = first.engine_answer.devices.flatMap((d) => d.lines);
        assert.strictEqual(await lines.count(), wantLines.length);
        for (let i = 0; i < wantLines.length; i++) {
          const l = wantLines[i];
          assert.strictEqual(await lines.nth(i).getAttribute('data-kind'), l.kind);
          assert.match(await lines.nth(i).textContent(), new RegExp(`${gbText(l.bytes).replace(/[.,]/g, '\\$&')} GB`));
          assert.match(await lines.nth(i).getAttribute('title'), /Source: /);
        }
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert(width <= viewport.width, `the open row scrolls sideways (${width}px)`);
        // The plan for that row: the engine's device tables, not the rule's split table.
        await row.locator('th button.link').click();
        await page.waitForSelector('#plan-view:not([hidden]) #plan-engine:not([hidden]) table.engine-device', { timeout: 20000 });
        assert(await page.$eval('#plan-devices', (t) => t.hidden), 'the rule device table is still shown beside the engine');
        const plan = cliJson(['plan', first.model, '--gpu', 'h100-sxm', '--engine', 'vllm', ...(first.quant ? ['--quant', first.quant] : [])]);
        const caps = await page.$$eval('#plan-engine table.engine-device caption', (cs) => cs.map((c) => c.textContent));
        assert.strictEqual(caps.length, plan.engine.devices.length);
        assert.match(caps[0], new RegExp(`${gbText(plan.engine.devices[0].total_bytes).replace(/[.,]/g, '\\$&')} GB`));
        assert.match(page.url(), /check-engine=vllm/);
        const width2 = await page.evaluate(() => document.documentElement.scrollWidth);
        assert(width2 <= viewport.width, `the plan scrolls sideways (${width2}px)`);
      });
    }

    // ---- Issue 13: a pasted start-up log beside vramcalc's figures, the rows `validate --log`
    // prints; a text that is no engine's log is refused next to the box, on a phone too.
    for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
      await test(`22 a pasted vLLM log beside vramcalc's figures, ${name}`, viewport, async (page) => {
        const logs = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'data', 'engine-logs.json'), 'utf8'));
        const text = logs.cases.find((c) => c.id === 'vllm-llama31-8b-h100-tp1-mml8192').raw.join('\n') + '\n';
        const file = path.join(os.tmpdir(), `vramcalc-log-${process.pid}.log`);
        fs.writeFileSync(file, text);
        const want = JSON.parse(cli(['validate', '--log', file, '--json']));
        fs.unlinkSync(file);
        await page.goto(`${base}/`);
        await page.waitForSelector('#log-model option[value="llama-3.1-8b"]', { state: 'attached' });
        await page.fill('#log-text', 'hello world');
        await page.click('#log-run');
        await page.waitForSelector('#log-text-error:not([hidden])', { timeout: 8000 });
        assert.strictEqual(await page.getAttribute('#log-text', 'aria-invalid'), 'true');
        await page.fill('#log-text', text);
        await page.click('#log-run');
        await page.waitForSelector('#log-results:not([hidden])', { timeout: 10000 });
        assert(await page.$eval('#log-text-error', (e) => e.hidden), 'the refusal is still shown');
        assert.match(await page.textContent('#log-summary'), /A vLLM log of Llama 3\.1 8B/);
        const rows = page.locator('#log-table tbody tr');
        assert.strictEqual(await rows.count(), want.rows.length);
        for (let i = 0; i < want.rows.length; i++) {
          assert.strictEqual(await rows.nth(i).locator('th').textContent(), want.rows[i].figure);
          const cells = await rows.nth(i).locator('td').allTextContents();
          if (want.rows[i].computed) assert.strictEqual(cells[2], `${want.rows[i].error_percent >= 0 ? '+' : ''}${want.rows[i].error_percent.toFixed(2)} %`);
        }
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        assert(width <= viewport.width, `the log table scrolls sideways (${width}px)`);
      });
    }

    // First figure on loopback, desktop: reported, not asserted (timing lives in bench/).
    await test('first figure time', DESKTOP, async (page) => {
      await page.goto(`${base}/`);
      await totalShown(page);
      const ms = await page.evaluate(() => {
        const m = performance.getEntriesByName('vramcalc-first-figure')[0];
        return m ? Math.round(m.startTime) : null;
      });
      timings.push(['first figure, desktop, loopback (ms)', ms]);
      await page.screenshot({ path: path.join(outDir, 'desktop-first-load.png') });
    });
  } finally {
    await browser.close();
    proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
  }
  for (const [what, v] of timings) console.log(`# ${what}: ${v}`);
  if (failures.length) {
    console.log(`${failures.length} browser test(s) failed; screenshots in ${outDir}`);
    process.exit(1);
  }
  console.log(`all browser tests passed; screenshots in ${outDir}`);
}

run().catch((e) => { console.error(e); process.exit(1); });
