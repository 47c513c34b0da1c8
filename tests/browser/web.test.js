// Browser tests for `vramcalc serve`: playwright-core drives Debian's chromium (headless) against
// a server this script starts on a free loopback port and stops. Usage:
//   node web.test.js PATH/TO/vramcalc OUTPUT_DIR      (CTest passes both; screenshots go to OUTPUT_DIR)
'use strict';
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const assert = require('assert');
const { chromium } = require('playwright-core');

const binary = process.argv[2];
const outDir = process.argv[3] || path.join(os.tmpdir(), 'vramcalc-browser');
fs.mkdirSync(outDir, { recursive: true });

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

// The CLI's own text for the same inputs: the "Total" line of `vramcalc estimate`.
function cliTotal(args) {
  const out = execFileSync(binary, ['estimate', ...args], { encoding: 'utf8' });
  const m = /^\s*Total\s+(\S.*\S)\s*$/m.exec(out);
  assert(m, `no Total line in:\n${out}`);
  return m[1];
}

function cliJson(args) {
  return JSON.parse(execFileSync(binary, [...args, '--json'], { encoding: 'utf8' }));
}

async function run() {
  const { proc, base } = await startServer();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'vramcalc-chromium-'));
  // A fresh --user-data-dir: playwright takes it as the persistent context's directory.
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1000, height: 1400 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const failures = [];
  async function test(name, body) {
    const page = await browser.newPage();
    try {
      await body(page);
      console.log(`ok - ${name}`);
    } catch (e) {
      failures.push(name);
      console.log(`not ok - ${name}\n${e.stack}`);
    } finally {
      await page.screenshot({ path: path.join(outDir, `${name.replace(/[^a-z0-9]+/gi, '-')}.png`), fullPage: true }).catch(() => {});
      await page.close();
    }
  }
  try {
    await test('calculator total matches the CLI', async (page) => {
      await page.goto(`${base}/`);
      await page.waitForSelector('#model option[value="kimi-k3.1-pro"]', { state: 'attached' });
      await page.selectOption('#model', 'kimi-k3.1-pro');
      await page.fill('#context', '32K');
      const expected = cliTotal(['kimi-k3.1-pro', '--context', '32K']);
      await page.waitForFunction((want) => document.getElementById('total').textContent === want
        && document.getElementById('total-scenario').textContent.includes('32K'), expected, { timeout: 5000 });
      assert.strictEqual(await page.textContent('#total'), expected);
      // The state is in the URL, so the result can be shared.
      assert.match(page.url(), /model=kimi-k3\.1-pro/);
      assert.match(page.url(), /context=32K/);
      // The context chart drew one point per context step (4K ... 1M: nine doublings).
      assert.strictEqual(await page.locator('#curve circle').count(), 9);
    });

    await test('a tier above the native size shows the clamp notice', async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await page.waitForFunction(() => document.getElementById('total').textContent.includes('GB'));
      assert.strictEqual(await page.isVisible('#clamp-notice'), false);
      await page.selectOption('#quant', 'Q8_0');
      await page.waitForSelector('#clamp-notice:not([hidden])', { timeout: 5000 });
      const notice = await page.textContent('#clamp-notice');
      // Q8_0 is 8.5 bits per weight (34 B per 32-value block): 2.8T params x 8.5 / 8 = 2,975 GB,
      // more than K3's measured 1,560.94 GB MXFP4 files (seed 002: "Q8_0's 8.5 clamp down").
      assert.match(notice, /Q8_0 would need 2,975\.00 GB/);
      assert.strictEqual(await page.textContent('#total'), cliTotal(['kimi-k3', '--quant', 'Q8_0']));
    });

    await test('a model page opens from the calculator', async (page) => {
      await page.goto(`${base}/?model=kimi-k3`);
      await page.waitForFunction(() => document.getElementById('model-page').getAttribute('href') === '/models/kimi-k3');
      await page.click('#model-page');
      await page.waitForSelector('h1');
      assert.strictEqual(await page.textContent('h1'), 'How much memory does Kimi K3 need?');
      // The glance table's full-context total is the CLI's 1M total (seed 002: ~1,829 GB).
      const glance = await page.textContent('section table');
      assert.match(glance, /1,829\.0 GB/);
    });

    await test('GPU checker ranks the models for 8 x H200 as the CLI does', async (page) => {
      await page.goto(`${base}/`);
      await page.waitForSelector('.gpu-device option[value="h200"]', { state: 'attached' });
      await page.selectOption('#gpu-device-1', 'h200');
      await page.fill('#gpu-count-1', '8');
      await page.click('#check-run');
      await page.waitForSelector('#check-table tbody tr', { timeout: 20000 });
      // The CLI's own answer for the same box: `vramcalc check --gpu H200x8 --json`.
      const cli = cliJson(['check', '--gpu', 'H200x8']);
      const fitting = cli.rows.filter((r) => r.fit !== 'none');
      assert(fitting.length > 0, 'the CLI says nothing fits 8 x H200');
      const rows = await page.$$eval('#check-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
      assert.strictEqual(rows.length, fitting.length);
      fitting.forEach((r, i) => {
        assert.strictEqual(rows[i][1], r.model, `rank ${i + 1}`);
        assert.strictEqual(rows[i][3], r.tier, `${r.model} tier`);
        // tok/s as the CLI's text table prints it (two decimals of the same double).
        assert.strictEqual(Number(rows[i][6]), Number(r.decode_tok_s.toFixed(2)), `${r.model} tok/s`);
      });
      // And the CLI's text for the top row, figure for figure: total, largest context, tok/s.
      const text = execFileSync(binary, ['check', '--gpu', 'H200x8'], { encoding: 'utf8' });
      const line = text.split('\n').find((l) => l.startsWith(`${fitting[0].model} `));
      assert(line.includes(rows[0][4]), `total ${rows[0][4]} not in: ${line}`);
      assert(line.includes(rows[0][5]), `context ${rows[0][5]} not in: ${line}`);
      assert(line.trim().endsWith(rows[0][6]), `tok/s ${rows[0][6]} not at the end of: ${line}`);
      await page.locator('#gpu-check').screenshot({ path: path.join(outDir, 'gpu-checker-8xH200.png') });

      // The per-card plan of the top model, against `vramcalc plan MODEL --gpu H200x8 --json`.
      await page.click(`#check-table tbody tr:first-child button`);
      await page.waitForSelector('#plan-view:not([hidden]) #plan-devices tbody tr', { timeout: 20000 });
      const args = ['plan', fitting[0].model, '--gpu', 'H200x8'];
      const plan = cliJson(args);
      assert.strictEqual(await page.locator('#plan-devices tbody tr').count(), plan.devices.length);
      assert.strictEqual(await page.textContent('#plan-verdict'), plan.verdict);
      const busiest = await page.textContent('#plan-devices tbody tr.busiest th');
      assert.strictEqual(busiest, `${plan.devices[plan.busiest].device} (busiest)`);
      const commands = await page.$$eval('#plan-commands pre', (ps) => ps.map((p) => p.textContent.split('\n')[0]));
      assert.deepStrictEqual(commands, plan.commands.map((c) => c.command));
      await page.locator('#gpu-check').screenshot({ path: path.join(outDir, 'gpu-checker-plan.png') });
    });

    await test('GPU checker shows the API error for an absurd count', async (page) => {
      await page.goto(`${base}/`);
      await page.waitForSelector('.gpu-device option[value="h200"]', { state: 'attached' });
      await page.fill('#gpu-count-1', '100000');
      await page.click('#check-run');
      await page.waitForSelector('#check-error:not([hidden])', { timeout: 5000 });
      assert.match(await page.textContent('#check-error'), /^gpu: /);
    });

    await test('phone width keeps the calculator usable', async (page) => {
      await page.setViewportSize({ width: 375, height: 800 });
      await page.goto(`${base}/?model=kimi-k3&context=1M`);
      await page.waitForFunction(() => document.getElementById('total').textContent.includes('GB'));
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert(width <= 375, `page scrolls sideways at phone width (${width}px)`);
    });
  } finally {
    await browser.close();
    proc.kill('SIGTERM');
    fs.rmSync(profile, { recursive: true, force: true });
  }
  if (failures.length) {
    console.log(`${failures.length} browser test(s) failed; screenshots in ${outDir}`);
    process.exit(1);
  }
  console.log(`all browser tests passed; screenshots in ${outDir}`);
}

run().catch((e) => { console.error(e); process.exit(1); });
