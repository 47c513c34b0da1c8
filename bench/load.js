// A small load client for `vramcalc serve`: C keep-alive connections issue GETs round-robin over
// the given paths for D seconds; prints requests/s, latency percentiles and any non-200 answers.
// node load.js BASE_URL SECONDS CONNECTIONS PATH...
'use strict';
const http = require('http');

const [base, seconds, connections, ...paths] = process.argv.slice(2);
const url = new URL(base);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(connections) });
const end = Date.now() + Number(seconds) * 1000;
const latencies = [];
let errors = 0;
let next = 0;

function one() {
  return new Promise((resolve) => {
    const path = paths[next++ % paths.length];
    const t0 = process.hrtime.bigint();
    const req = http.get({ host: url.hostname, port: url.port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => {
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (res.statusCode !== 200) errors++;
        resolve();
      });
    });
    req.on('error', () => { errors++; resolve(); });
  });
}

async function worker() {
  while (Date.now() < end) await one();
}

(async () => {
  const t0 = Date.now();
  await Promise.all(Array.from({ length: Number(connections) }, worker));
  const secs = (Date.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2);
  console.log(`requests ${latencies.length} in ${secs.toFixed(1)} s: ${(latencies.length / secs).toFixed(0)} req/s, ` +
    `latency p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${pct(100)} ms, errors ${errors}`);
  process.exit(errors ? 1 : 0);
})();
