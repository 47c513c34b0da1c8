#!/usr/bin/env bash
# Prepares the folder gpu-run.sh reads on a GPU machine that cannot download anything: the llama.cpp
# source node-llama-cpp ships (trimmed to what a CUDA build of the library and llama-bench needs),
# the tiny models and their cases (measure.mjs --emit), the full-size zero-weight model headers
# (speed-models.mjs). Run here after `npm ci`; the folder is DEST (default ../../.gpu, ignored by git).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$here/../../.gpu}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$here/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$work/llama.cpp"
git -C "$work/llama.cpp" rev-parse HEAD > "$dest/commit.txt"
(cd "$work/llama.cpp" && tar czf "$dest/llama-src.tgz" --exclude='*.png' --exclude='*.jpg' --exclude='tools/ui' \
  --exclude='tools/server/public*' --exclude='ggml/src/ggml-vulkan' --exclude='ggml/src/ggml-sycl' --exclude='ggml/src/ggml-opencl' \
  --exclude='ggml/src/ggml-cann' --exclude='ggml/src/ggml-webgpu' --exclude='ggml/src/ggml-metal' --exclude='ggml/src/ggml-hexagon' \
  CMakeLists.txt cmake common ggml include src tools vendor licenses LICENSE)
(cd "$here" && node measure.mjs --emit "$work/tiny" && node speed-models.mjs "$work/speed")
cp "$work/tiny/cases.json" "$work/tiny/models.json" "$dest/"
(cd "$work/tiny" && tar czf "$dest/tiny.tgz" ./*.gguf cases.tsv)
(cd "$work/speed" && tar czf "$dest/speed.tgz" ./*.gguf speed-models.json)
ls -la "$dest"
