#!/usr/bin/env bash
# Side by side: `vramcalc inspect FILE` against the JavaScript GGUF parser @huggingface/gguf
# (npm), on the same GGUF headers (bench/fixtures.h: ~1K, ~10K and ~100K tensors, a 262,144-token
# tokenizer; sparse files), in one run, alternating the two for each file, RUNS times each.
# Prints per file: the median wall time of each process, the ratio, and the JS parser's own
# in-process time (node start-up excluded). Needs node and npm (Debian: nodejs, npm; scripts/setup)
# and the npm registry; everything goes in a temporary folder removed at exit.
#
#   bench/compare-gguf-js.sh [BUILD_DIR] [RUNS]      (defaults: build 7)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
runs=${2:-7}
[[ $build = /* ]] || build=$root/$build
vramcalc=$build/vramcalc
bench=$build/vramcalc_bench
gguf_js_version=0.4.6  # pinned: the figures in docs/performance.md were measured with it

for tool in "$vramcalc" "$bench"; do
  [ -x "$tool" ] || { echo "compare-gguf-js: $tool is missing; build first (make build)" >&2; exit 1; }
done
for cmd in node npm; do
  command -v "$cmd" >/dev/null || { echo "compare-gguf-js: needs $cmd (Debian packages nodejs and npm; scripts/setup installs them)" >&2; exit 1; }
done
[ "$runs" -ge 1 ] 2>/dev/null || { echo "compare-gguf-js: RUNS must be a positive integer, got '$runs'" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/vramcalc-gguf-js.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "installing @huggingface/gguf@$gguf_js_version into $work (npm)"
(cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "@huggingface/gguf@$gguf_js_version" >/dev/null)

# The JS side: the package's local-file API, parameters counted (vramcalc sums tensor bytes too).
# Prints the tensor count (checked against vramcalc's) and the parse time inside node.
cat >"$work/read.mjs" <<'EOF'
import { gguf } from "@huggingface/gguf";
const t0 = performance.now();
const r = await gguf(process.argv[2], { allowLocalFile: true, computeParametersCount: true });
const ms = performance.now() - t0;
console.log(`${r.tensorInfos.length} ${ms.toFixed(3)}`);
EOF

"$bench" --write-fixtures "$work/fixtures" >"$work/fixtures.txt"
mapfile -t files < <(grep '\.gguf' "$work/fixtures.txt" | cut -f1)

now_ns() { date +%s%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), node $(node --version)"
echo "runs per side per file: $runs (alternating; one warm-up each, not counted)"
printf '\n%-10s %12s %14s %14s %8s %16s\n' tensors "header MB" "vramcalc ms" "gguf.js ms" ratio "gguf.js parse ms"
for f in "${files[@]}"; do
  # Warm-up (page cache) and agreement on what the file holds.
  js_tensors=$(node "$work/read.mjs" "$f" | cut -d' ' -f1)
  vc_tensors=$("$vramcalc" inspect "$f" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).tensors))')
  if [ "$js_tensors" != "$vc_tensors" ]; then
    echo "compare-gguf-js: $f: gguf.js reads $js_tensors tensors, vramcalc $vc_tensors" >&2
    exit 1
  fi
  : >"$work/vc" >"$work/js" >"$work/js_parse"
  for ((i = 0; i < runs; i++)); do
    t0=$(now_ns); "$vramcalc" inspect "$f" >/dev/null; t1=$(now_ns)
    echo $(( (t1 - t0) )) >>"$work/vc"
    t0=$(now_ns); out=$(node "$work/read.mjs" "$f"); t1=$(now_ns)
    echo $(( (t1 - t0) )) >>"$work/js"
    echo "${out#* }" >>"$work/js_parse"
  done
  vc_ms=$(median <"$work/vc" | awk '{ printf "%.1f", $1 / 1e6 }')
  js_ms=$(median <"$work/js" | awk '{ printf "%.1f", $1 / 1e6 }')
  js_parse=$(median <"$work/js_parse" | awk '{ printf "%.1f", $1 }')
  header=$(grep -F "$f" "$work/fixtures.txt" | cut -f3 | awk '{ printf "%.1f", $2 / 1e6 }')
  ratio=$(awk -v a="$js_ms" -v b="$vc_ms" 'BEGIN { printf "%.1fx", a / b }')
  printf '%-10s %12s %14s %14s %8s %16s\n' "$vc_tensors" "$header" "$vc_ms" "$js_ms" "$ratio" "$js_parse"
done
echo
echo "ratio = gguf.js wall time / vramcalc wall time (medians; each a whole process: start-up, read, exit)"
