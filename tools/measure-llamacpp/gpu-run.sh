#!/usr/bin/env bash
# Measures a CUDA build of llama.cpp on a GPU machine in one short run (nothing is downloaded there):
#  1. builds llama.cpp (the commit node-llama-cpp 3.21.1 ships) with CUDA for this GPU, plus
#     native_probe.cpp and llama-bench;
#  2. runs every case of `node measure.mjs --emit` through native_probe: what llama.cpp allocates on
#     each buffer type (CUDA0, CUDA_Host, CPU, ...) to the byte, with all layers, half, none on the GPU
#     and routed experts in host memory;
#  3. runs llama-bench (decode tg, prefill pp, at several depths) on full-size zero-weight models
#     (speed-models.mjs).
# Input: a folder (default .gpu) prepared on any machine by prepare-gpu-run.sh. Output: $OUT (default
# /tmp/vc-gpu-out): probe.jsonl, bench.jsonl, about.txt, log.txt. Each stage has a deadline so the
# whole run ends within VC_BUDGET_S seconds (default 585) with whatever it measured.
set -u
here=$(cd "$(dirname "$0")" && pwd)
carry=$(cd "${1:-.gpu}" && pwd)
OUT=${OUT:-/tmp/vc-gpu-out}
mkdir -p "$OUT"
start=$(date +%s)
budget=${VC_BUDGET_S:-585}
left() { echo $((start + $1 - $(date +%s))); }  # seconds until the stage deadline at offset $1
W=${VC_WORK:-/tmp/vc-gpu}
mkdir -p "$W/src" "$W/tiny" "$W/speed"
exec > >(tee -a "$OUT/log.txt") 2>&1

echo "== unpack"
tar xzf "$carry/llama-src.tgz" -C "$W/src"
tar xzf "$carry/tiny.tgz" -C "$W/tiny"
tar xzf "$carry/speed.tgz" -C "$W/speed"
{
  echo "commit: $(cat "$carry/commit.txt" 2>/dev/null)"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem,pcie.link.gen.max,pcie.link.width.max --format=csv 2>&1
  nvcc --version 2>&1 | tail -2
  lscpu 2>&1 | grep -E 'Model name|^CPU\(s\)|Socket|NUMA node\(s\)|L3'
  grep MemTotal /proc/meminfo
} > "$OUT/about.txt"
cat "$OUT/about.txt"

echo "== build ($(left 330)s left for it)"
if [ -z "${VC_PREBUILT:-}" ]; then
  cat >> "$W/src/tools/CMakeLists.txt" <<EOF
add_executable(native_probe $here/native_probe.cpp)
target_link_libraries(native_probe PRIVATE llama)
target_include_directories(native_probe PRIVATE \${PROJECT_SOURCE_DIR}/src)
EOF
  cuda=${VC_CUDA:-ON}
  gen=(); command -v ninja > /dev/null && gen=(-G Ninja)
  cmake -S "$W/src" -B "$W/b" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA="$cuda" -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=ON > "$W/configure.log" 2>&1 || tail -30 "$W/configure.log"
  timeout "$(left 330)" cmake --build "$W/b" -j "$(nproc)" --target native_probe llama-bench > "$W/build.log" 2>&1
  echo "build rc=$? after $(( $(date +%s) - start ))s"; tail -5 "$W/build.log"
  bin=$W/b/bin
else
  bin=$VC_PREBUILT
fi
[ -x "$bin/native_probe" ] || { grep -m5 -B2 -A8 'error' "$W/build.log" | head -60; exit 1; }

echo "== allocations ($(left 440)s)"
cd "$W/tiny"
total=$(wc -l < cases.tsv)
touch "$OUT/probe.jsonl"
while [ "$(left 440)" -gt 5 ]; do
  before=$(wc -l < "$OUT/probe.jsonl")
  [ "$before" -ge "$total" ] && break
  timeout "$(left 440)" "$bin/native_probe" cases.tsv "$OUT/probe.jsonl" "$before" 2> "$W/probe.err"
  rc=$?
  after=$(wc -l < "$OUT/probe.jsonl")
  if [ "$after" -eq "$before" ] && [ "$rc" -ne 124 ]; then  # the case at $before killed the process
    id=$(sed -n "$((before + 1))p" cases.tsv | cut -f2)
    echo "{\"id\":\"$id\",\"created\":false,\"crashed\":\"exit $rc\",\"errors\":[\"$(tail -2 "$W/probe.err" | tr -d '"\\' | tr '\n' ' ' | cut -c1-300)\"]}" >> "$OUT/probe.jsonl"
  fi
done
echo "probe: $(wc -l < "$OUT/probe.jsonl") of $total cases after $(( $(date +%s) - start ))s"

echo "== speed ($(left "$budget")s)"
cd "$W/speed"
python3 - <<'EOF'
import json, os
for m in json.load(open('speed-models.json')):
    os.truncate(m['name'] + '.gguf', m['file_bytes'])
EOF
bench() {  # bench SECONDS MODEL ARGS...: one llama-bench run, skipped when the budget is spent
  local s=$1 m=$2; shift 2
  [ "$(left "$budget")" -gt "$s" ] || { echo "skip $m $*"; return; }
  echo "bench $m $*"
  timeout "$s" "$bin/llama-bench" -m "$m.gguf" -o jsonl "$@" >> "$OUT/bench.jsonl" 2> "$W/bench.err" || tail -3 "$W/bench.err"
}
bench 40 llama-8b-q4k -ngl 99 -fa 0,1 -p 512,2048 -n 128 -r 3
bench 70 llama-70b-q4k -ngl 99 -fa 1 -p 512 -n 128 -r 2
bench 40 qwen3-30b-a3b-q4k -ngl 99 -fa 1 -p 512,2048 -n 128 -r 3
bench 20 llama-1b-q4k -ngl 99 -fa 1 -p 512,2048 -n 128 -r 3
bench 30 llama-8b-q8 -ngl 99 -fa 1 -p 512,2048 -n 128 -r 3
bench 45 llama-8b-q4k -ngl 99 -fa 1 -p 512 -n 128 -d 4096,16384 -r 2
bench 60 qwen3-30b-a3b-q4k -ngl 99 -ot exps=CPU -fa 1 -p 512 -n 64 -r 1
bench 90 llama-70b-q4k -ngl 40 -fa 1 -p 512 -n 32 -r 1
echo "done after $(( $(date +%s) - start ))s"
