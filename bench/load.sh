#!/usr/bin/env bash
# Load check for `vramcalc serve` (not part of `make test`): starts the server on a free loopback
# port, drives it with bench/load.js (node, keep-alive connections) over the API routes the page
# uses, and prints requests/s and latency percentiles. Result on record: docs/performance.md.
#   bench/load.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
seconds=${2:-10}
connections=${3:-16}
log=$(mktemp)
"$build/vramcalc" serve --host 127.0.0.1 --port 0 --quiet 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q 'listening on' "$log" && break; sleep 0.05; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$log")
[ -n "$port" ] || { echo "server did not start: $(cat "$log")"; exit 1; }
echo "vramcalc serve on port $port: $connections connections for $seconds s"
node bench/load.js "http://127.0.0.1:$port" "$seconds" "$connections" \
  "/api/estimate?model=kimi-k3.1-pro&context=32K&units=gb" \
  "/api/estimate?model=kimi-k3&quant=Q8_0&units=gb" \
  "/api/sweep?model=kimi-k3.1-pro&contexts=4K,8K,16K,32K,64K,128K,256K,512K,1M&units=gb" \
  "/api/compare?a=kimi-k3&b=kimi-k3.1-pro&units=gb" \
  "/api/models" \
  "/models/kimi-k3"
