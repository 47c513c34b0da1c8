#!/usr/bin/env bash
# Peak memory (maximum resident set, GNU time -v) of `vramcalc inspect` on each reader fixture
# (bench/fixtures.h), against the header it reads and the (sparse) file it names. The target: a
# small multiple of the header, never the file size. Baseline: `vramcalc models` (the binary
# and its embedded data, no checkpoint). Median of RUNS runs each.
#
#   bench/peak-memory.sh [BUILD_DIR] [RUNS]      (defaults: build 5)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
runs=${2:-5}
[[ $build = /* ]] || build=$root/$build
vramcalc=$build/vramcalc
bench=$build/vramcalc_bench
[ -x /usr/bin/time ] || { echo "peak-memory: needs GNU time at /usr/bin/time (Debian package time; scripts/setup installs it)" >&2; exit 1; }
for tool in "$vramcalc" "$bench"; do
  [ -x "$tool" ] || { echo "peak-memory: $tool is missing; build first (make build)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vramcalc-peak.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$bench" --write-fixtures "$work" >"$work/fixtures.txt"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Median maximum RSS in KB of a command, over $runs runs.
peak_kb() {
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }'
  done | median
}

base=$(peak_kb "$vramcalc" models)
printf '%-36s %10s %10s %10s %14s\n' input "header MB" "file GB" "peak MB" "peak-base MB"
printf '%-36s %10s %10s %10.1f %14s\n' "vramcalc models (baseline)" - - "$(awk -v k="$base" 'BEGIN { print k / 1000 }')" -
while IFS=$'\t' read -r path what header file; do
  if [[ $path == *.gguf ]]; then
    hdr=$(echo "$header" | awk '{ printf "%.1f", $2 / 1e6 }')
    size=$(echo "$file" | awk '{ printf "%.0f", $2 / 1e9 }')
  else
    # The headers are the JSON after each shard's 8-byte length: read those lengths.
    hdr=$(for s in "$path"/*.safetensors; do od -An -t u8 -N 8 "$s"; done | awk '{ t += $1 + 8 } END { printf "%.1f", t / 1e6 }')
    size=$(du -b --apparent-size -c "$path"/*.safetensors | tail -1 | awk '{ printf "%.0f", $1 / 1e9 }')
  fi
  kb=$(peak_kb "$vramcalc" inspect "$path")
  printf '%-36s %10s %10s %10.1f %14.1f\n' "$(basename "$path") ($what)" "$hdr" "$size" "$(awk -v k="$kb" 'BEGIN { print k / 1000 }')" \
    "$(awk -v k="$kb" -v b="$base" 'BEGIN { print (k - b) / 1000 }')"
done <"$work/fixtures.txt"
echo
echo "peak = maximum resident set size (GNU time -v), median of $runs runs; MB = 10^6 bytes"
