#!/usr/bin/env python3
"""Writes tests/data/speed-measurements.json: published decode and prefill speeds, one record per
llama-bench line (or engine log figure), each with its source URL, the quoted line, the model (a
catalogue id), the weights tier and file, the devices, the engine, the settings and the measured
tok/s. The share set aside before any fitting is fixed here by a hash of the id:

    set_aside = (first 4 bytes of SHA-256(id), big-endian) % 100 < 30

Rerun after adding a record: python3 tools/speed-measurements/build.py
"""
import hashlib
import json
import os

GEERLING = "https://github.com/geerlingguy/ai-benchmarks"
GEERLING_OPTS = {"ngl": 99, "bench": "-n 128 -p 512,4096 -pg 4096,128 -ngl 99 -r 2"}
GEERLING_NOTE = "llama.cpp built with -DGGML_VULKAN=1 (group_data/all.py of the same repository), CUDA on the GB10"

def rec(id, source, quote, model, quant, file, gpu, engine, backend, test, measured, **kw):
    kind = "prefill" if test.startswith("pp") or test.startswith("prefill") else "decode"
    r = {"id": id, "source": source, "quote": quote, "model": model, "quant": quant, "file": file, "gpu": gpu,
         "engine": engine, "backend": backend, "test": test, "kind": kind, "measured_tok_s": measured}
    r.update(kw)
    return r

R = []
# --- Jeff Geerling's llama-bench runs (README "Findings" tables; the issue holds the raw llama-bench output).
L32 = ("llama-3.2-3b", "Q4_K_M", "bartowski/Llama-3.2-3B-Instruct-GGUF Llama-3.2-3B-Instruct-Q4_K_M.gguf")
OSS20 = ("gpt-oss-20b", "Q4_K_M", "unsloth/gpt-oss-20b-GGUF gpt-oss-20b-Q4_K_M.gguf")
L70 = ("llama-3.1-70b", "Q4_K_M", "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf")
for (mid, q, f), dev, backend, issue, quote, tps in [
    (L32, "rtx-4090", "vulkan", 43, "| [Intel 265K Custom PC (Nvidia RTX 4090)](https://github.com/geerlingguy/ai-benchmarks/issues/43) | GPU | 334.67 Tokens/s | 261.9W |", 334.67),
    (L32, "rtx-3080-ti", "vulkan", 39, "| [Intel 265K Custom PC (Nvidia RTX 3080 Ti)](https://github.com/geerlingguy/ai-benchmarks/issues/39) | GPU | 263.24 Tokens/s | 495W |", 263.24),
    (L32, "m3-ultra-512gb", "metal", 42, "| [Mac Studio (M3 Ultra 512GB)](https://github.com/geerlingguy/ai-benchmarks/issues/42) | GPU | 154.60 Tokens/s | 223W |", 154.60),
    (L32, "rtx-3060-12gb", "vulkan", 40, "| [Intel 265K Custom PC (Nvidia RTX 3060)](https://github.com/geerlingguy/ai-benchmarks/issues/40) | GPU | 122.85 Tokens/s | 214W |", 122.85),
    (L32, "dgx-spark", "cuda", 34, "| [Dell Pro Max with GB10 (Nvidia Spark)](https://github.com/geerlingguy/ai-benchmarks/issues/34) | GPU | 97.93 Tokens/s | 128.5W |", 97.93),
    (L32, "strix-halo-128gb", "vulkan", 21, "| [Framework Mainboard (128GB)](https://github.com/geerlingguy/ai-benchmarks/issues/21#issuecomment-3164568218) | GPU | 88.14 Tokens/s | 133W |", 88.14),
    (L32, "rtx-2080-ti", "vulkan", 46, "| [Intel 265K Custom PC (Nvidia RTX 2080 Ti)](https://github.com/geerlingguy/ai-benchmarks/issues/46) | GPU | 180.38 Tokens/s | 257.8W |", 180.38),
    (OSS20, "rtx-4090", "vulkan", 43, "| [Intel 265K Custom PC (Nvidia RTX 4090)](https://github.com/geerlingguy/ai-benchmarks/issues/43) | GPU | 279.65 Tokens/s | 509.1W |", 279.65),
    (OSS20, "m3-ultra-512gb", "metal", 42, "| [Mac Studio (M3 Ultra 512GB)](https://github.com/geerlingguy/ai-benchmarks/issues/42) | GPU | 115.29 Tokens/s | 227W |", 115.29),
    (OSS20, "dgx-spark", "cuda", 34, "| [Dell Pro Max with GB10 (Nvidia Spark)](https://github.com/geerlingguy/ai-benchmarks/issues/34) | GPU | 87.97 Tokens/s | 122.8W |", 87.97),
    (OSS20, "rtx-3060-12gb", "vulkan", 40, "| [Intel 265K Custom PC (Nvidia RTX 3060)](https://github.com/geerlingguy/ai-benchmarks/issues/40) | GPU | 83.96 Tokens/s | 229.3W |", 83.96),
    (L70, "m3-ultra-512gb", "metal", 42, "| [Mac Studio (M3 Ultra 512GB)](https://github.com/geerlingguy/ai-benchmarks/issues/42) | GPU | 14.08 Tokens/s | 243W |", 14.08),
    (L70, "dgx-spark", "cuda", 34, "| [Dell Pro Max with GB10 (Nvidia Spark)](https://github.com/geerlingguy/ai-benchmarks/issues/34) | GPU | 4.71 Tokens/s | 156W |", 4.71),
    (L70, "strix-halo-128gb", "vulkan", 21, "| [Framework Desktop Mainboard (395+)](https://github.com/geerlingguy/ai-benchmarks/issues/21) | GPU/CPU | 4.97 Tokens/s | 133W |", 4.97),
]:
    R.append(rec(f"geerling-{dev}-{mid}-tg128", GEERLING + f"/issues/{issue}", quote, mid, q, f, dev, "llamacpp", backend, "tg128", tps,
                 settings=GEERLING_OPTS, note="README 'Findings' row (" + GEERLING + "); " + GEERLING_NOTE))
R.append(rec("geerling-rtx-4090-llama-3.2-3b-pp512", GEERLING + "/issues/43",
             "| llama 3B Q4_K - Medium         |   1.87 GiB |     3.21 B | Vulkan     |  99 |           pp512 |      20323.29 ± 8.21 |",
             *L32, "rtx-4090", "llamacpp", "vulkan", "pp512", 20323.29, engine_version="build 086a63e3a (7340)", settings=GEERLING_OPTS))
R.append(rec("geerling-rtx-2080-ti-llama-3.2-3b-pp512", GEERLING + "/issues/46",
             "| llama 3B Q4_K - Medium         |   1.87 GiB |     3.21 B | Vulkan     |  99 |           pp512 |     4418.37 ± 513.04 |",
             *L32, "rtx-2080-ti", "llamacpp", "vulkan", "pp512", 4418.37, engine_version="build f9ec8858e (7474)", settings=GEERLING_OPTS))
OSS20F16 = ("gpt-oss-20b", "", "gpt-oss-20b-F16.gguf (MXFP4 experts, 16-bit rest; 12.83 GiB)")
for test, tps, q in [("pp512", 564.23, "| gpt-oss ?B F16                 |  12.83 GiB |    20.91 B | Vulkan,RPC | 125 |      32 |           pp512 |        564.23 ± 0.46 |"),
                     ("tg128", 45.01, "| gpt-oss ?B F16                 |  12.83 GiB |    20.91 B | Vulkan,RPC | 125 |      32 |           tg128 |         45.01 ± 0.05 |")]:
    R.append(rec(f"geerling-strix-halo-gpt-oss-20b-{test}", GEERLING + "/issues/21", q, *OSS20F16, "strix-halo-128gb", "llamacpp", "vulkan", test, tps,
                 engine_version="build fd1234cb (6096)", settings={"ngl": 125, "threads": 32, "fa": 0}))
L33 = ("llama-3.1-70b", "Q4_K_M", "Llama-3.3-70B-Instruct-Q4_K_M.gguf (39.59 GiB; Llama 3.3 has Llama 3.1 70B's geometry)")
for test, tps, q in [("pp512", 162.30, "| llama 70B Q4_K - Medium        |  39.59 GiB |    70.55 B | Metal,BLAS |      24 |  1 |    0 |           pp512 |        162.30 ± 0.00 |"),
                     ("tg128", 14.41, "| llama 70B Q4_K - Medium        |  39.59 GiB |    70.55 B | Metal,BLAS |      24 |  1 |    0 |           tg128 |         14.41 ± 0.02 |")]:
    R.append(rec(f"geerling-cluster-m3-ultra-llama-3.3-70b-{test}", "https://github.com/geerlingguy/beowulf-ai-cluster/issues/17", q, *L33, "m3-ultra-512gb",
                 "llamacpp", "metal", test, tps, engine_version="build 4d3726278 (7315)", settings={"ngl": 99, "fa": 1, "mmap": 0, "threads": 24}))
# Ollama rows of the same README (Ollama runs llama.cpp; llama3.2:3b is Q4_K_M).
for dev, quote, tps in [
    ("rtx-5090", "| [Intel 13900K (Nvidia 5090)](https://github.com/geerlingguy/ai-benchmarks/pull/18) | GPU | 271.40 Tokens/s | N/A |", 271.40),
    ("rtx-4080", "| [Ryzen 9 7950X (Nvidia 4080)](https://github.com/geerlingguy/ai-benchmarks/pull/11) | GPU | 204.45 Tokens/s | N/A |", 204.45),
    ("rtx-4070-ti-super", "| [Ryzen 9 7950X (Nvidia 4070 Ti Super)](https://github.com/geerlingguy/ai-benchmarks/pull/11) | GPU | 198.95 Tokens/s | N/A |", 198.95),
    ("rtx-4070", "| [Ryzen 9 5950X (Nvidia 4070)](https://github.com/geerlingguy/ai-benchmarks/pull/11) | GPU | 160.72 Tokens/s | N/A |", 160.72),
]:
    R.append(rec(f"geerling-ollama-{dev}-llama-3.2-3b", GEERLING, quote, "llama-3.2-3b", "Q4_K_M", "ollama llama3.2:3b (Q4_K_M)", dev, "ollama", "cuda", "eval", tps,
                 note="README 'Llama 3.2:3b' row; Ollama 'eval rate' (its bundled llama.cpp, CUDA)"))
# CPU-only server rows (AmpereOne A192-32X, 8 channels of DDR5-5200 = 332.8 GB/s), Ollama.
AMP = "https://github.com/geerlingguy/ai-benchmarks/issues/10"
for mid, quote, tps in [
    ("llama-3.2-3b", "| [AmpereOne A192-32X (512GB)](https://github.com/geerlingguy/ai-benchmarks/issues/10) | CPU | 23.52 Tokens/s | N/A |", 23.52),
    ("llama-3.1-70b", "| [AmpereOne A192-32X (512GB)](https://github.com/geerlingguy/ai-benchmarks/issues/10) | CPU | 3.86 Tokens/s | N/A |", 3.86),
    ("llama-3.1-405b", "| [AmpereOne A192-32X (512GB)](https://github.com/geerlingguy/ai-benchmarks/issues/10) | CPU | 0.90 Tokens/s | N/A |", 0.90),
    ("deepseek-r1", "| [AmpereOne A192-32X - 512GB](https://github.com/geerlingguy/ai-benchmarks/issues/10) | CPU | 4.18 Tokens/s | 477W |", 4.18),
]:
    R.append(rec(f"geerling-ampereone-{mid}", GEERLING, quote, mid, "Q4_K_M", f"ollama {mid} default tag (Q4_K_M)", "none", "ollama", "cpu", "eval", tps,
                 ram_gbps=332.8, ram_note="AmpereOne A192-32X: 8 channels of DDR5-5200 (8 x 41.6 GB/s)", ram_gb=512))
# --- dmatora/LLM-inference-speed-benchmarks
R.append(rec("dmatora-rtx-3080-llama-3.1-8b-tg", "https://github.com/dmatora/LLM-inference-speed-benchmarks/issues/12", "Token generation: 111.95 ± 2.45.",
             "llama-3.1-8b", "Q4_K_M", "Llama 3.1 8B Q4_K_M", "rtx-3080", "llamacpp", "cuda", "tg128", 111.95, engine_version="build 93bc3839 (3622)"))
R.append(rec("dmatora-rtx-3080-llama-3.1-8b-pp", "https://github.com/dmatora/LLM-inference-speed-benchmarks/issues/12", "Prompt evaluation: 3806.89 ± 15.44.",
             "llama-3.1-8b", "Q4_K_M", "Llama 3.1 8B Q4_K_M", "rtx-3080", "llamacpp", "cuda", "pp512", 3806.89, engine_version="build 93bc3839 (3622)"))
R.append(rec("dmatora-rtx-4090-llama-3-8b-q6-tg", "https://github.com/dmatora/LLM-inference-speed-benchmarks/issues/10", "Generation speed : 93 tokens per second",
             "llama-3-8b", "Q6_K", "llama3 8b Q6_K", "rtx-4090", "llamacpp", "cuda", "eval", 93.0, note="llama-server output, cold start"))
# --- llama.cpp PRs
R.append(rec("ik-rocm-7900xtx-llama-8b-tg64", "https://github.com/ggml-org/llama.cpp/pull/26284",
             "| RX 7900 XTX | llama 8B Q4_K_M       |               512 | tg64         |       105.75 |                105.81 |      1.00 |",
             "llama-3.1-8b", "Q4_K_M", "llama 8B Q4_K_M", "rx-7900-xtx", "llamacpp", "rocm", "tg64", 105.75, settings={"ubatch": 512}))
R.append(rec("ik-rocm-7900xtx-llama-8b-tg64-d4096", "https://github.com/ggml-org/llama.cpp/pull/26284",
             "| RX 7900 XTX | llama 8B Q4_K_M       |               512 | tg64@d4096   |        98.67 |                 98.54 |      1.00 |",
             "llama-3.1-8b", "Q4_K_M", "llama 8B Q4_K_M", "rx-7900-xtx", "llamacpp", "rocm", "tg64@d4096", 98.67, depth=4096, settings={"ubatch": 512}))
R.append(rec("ik-rocm-7900xtx-llama-8b-pp2048", "https://github.com/ggml-org/llama.cpp/pull/26284",
             "| RX 7900 XTX | llama 8B Q4_K_M       |               512 | pp2048       |      3189.36 |               3226.54 |      1.01 |",
             "llama-3.1-8b", "Q4_K_M", "llama 8B Q4_K_M", "rx-7900-xtx", "llamacpp", "rocm", "pp2048", 3189.36, settings={"ubatch": 512}))
Q30Q8 = ("qwen3-30b-a3b", "Q8_0", "qwen3moe 30B.A3B Q8_0 (30.25 GiB)")
for test, tps, q in [("pp512", 2045.19, "| qwen3moe 30B.A3B Q8_0          |  30.25 GiB | Metal      |     2048 |  1 |           pp512 |      2045.19 ± 10.70 |"),
                     ("tg128", 76.31, "| qwen3moe 30B.A3B Q8_0          |  30.25 GiB | Metal      |     2048 |  1 |           tg128 |         76.31 ± 0.06 |")]:
    R.append(rec(f"ggerganov-m2-ultra-qwen3-30b-a3b-{test}", "https://github.com/ggml-org/llama.cpp/pull/15616", q, *Q30Q8, "m2-ultra-192gb", "llamacpp", "metal",
                 test, tps, settings={"ubatch": 2048, "fa": 1}))
# --- Strix Halo vs DGX comparison (ROCm without rocWMMA), gpt-oss-120b MXFP4 59.02 GiB
OSS120 = ("gpt-oss-120b", "MXFP4", "gpt-oss 120B MXFP4 MoE (59.02 GiB)")
for test, tps, depth, q in [
    ("pp2048", 998.24, 0, "| gpt-oss 120B MXFP4 MoE | 59.02 GiB | 116.83 B |          pp2048 | 998.24 ± 2.75 |"),
    ("tg32", 47.41, 0, "| gpt-oss 120B MXFP4 MoE | 59.02 GiB | 116.83 B |            tg32 |  47.41 ± 0.00 |"),
    ("tg32@d4096", 44.14, 4096, "| gpt-oss 120B MXFP4 MoE | 59.02 GiB | 116.83 B |    tg32 @ d4096 |  44.14 ± 0.01 |"),
    ("pp2048@d8192", 703.72, 8192, "| gpt-oss 120B MXFP4 MoE | 59.02 GiB | 116.83 B |  pp2048 @ d8192 | 703.72 ± 1.39 |"),
    ("tg32@d8192", 42.36, 8192, "| gpt-oss 120B MXFP4 MoE | 59.02 GiB | 116.83 B |    tg32 @ d8192 |  42.36 ± 0.06 |"),
]:
    R.append(rec(f"eugr-strix-halo-gpt-oss-120b-{test.replace('@', '-')}", "https://github.com/lhl/strix-halo-testing/issues/33", q, *OSS120, "strix-halo-128gb",
                 "llamacpp", "rocm", test, tps, depth=depth, settings={"ngl": 99}, note="TheRock nightly ROCm build, no rocWMMA"))
# --- RTX 5090, Qwen3-8B Q4_K_M fully on the card (Docker Model Runner llama.cpp-cuda)
R.append(rec("continuum-rtx-5090-qwen3-8b", "https://github.com/CambrianTech/continuum/pull/1627",
             "Measured qwen3-8B Q4_K_M, fully in 5090 VRAM: 221.7 tok/s generation, ~960 tok/s prompt-eval, zero CPU fallback.",
             "qwen3-8b", "Q4_K_M", "qwen3-8B Q4_K_M", "rtx-5090", "llamacpp", "cuda", "eval", 221.7, note="DMR llama.cpp-cuda under WSL2"))
# --- RTX 2080 8 GB + i9-10900X quad-channel DDR4 (llmfit community runs against llama.cpp)
R2080 = dict(ram_gbps=102.0, ram_note="quoted: 'the measured ~102 GB/s quad-channel DDR4' (i9-10900X)", ram_gb=62, cpu="Intel i9-10900X")
R.append(rec("llmfit-rtx-2080-qwen3-30b-a3b-ncmoe36", "https://github.com/AlexsJones/llmfit/pull/755",
             "Pure generation speed measured by the server itself is 36.7 tok/s",
             "qwen3-30b-a3b", "Q4_K_M", "Qwen3-30B-A3B-Instruct-2507 Q4_K_M", "rtx-2080", "llamacpp", "cuda", "eval", 36.7,
             settings={"ngl": 99, "n_cpu_moe": 36}, **R2080))
R.append(rec("llmfit-rtx-2080-gpt-oss-20b-ncmoe12", "https://github.com/AlexsJones/llmfit/pull/775",
             "| gpt-oss-20B (MoE, 3.6B active) | 36.4 | `--n-cpu-moe 12` |",
             "gpt-oss-20b", "MXFP4", "gpt-oss-20b MXFP4 GGUF", "rtx-2080", "llamacpp", "cuda", "eval", 36.4,
             settings={"n_cpu_moe": 12, "context": 4096}, note="llmfit bench average over 3 runs (includes prompt time)", **R2080))
R.append(rec("llmfit-rtx-2080-phi-4-ngl32", "https://github.com/AlexsJones/llmfit/pull/774", "| phi-4 (14B) | 16.7 | `-ngl 32` |",
             "phi-4", "Q4_K_M", "phi-4 Q4_K_M GGUF", "rtx-2080", "llamacpp", "cuda", "eval", 16.7,
             settings={"ngl": 32, "context": 4096}, note="llmfit bench average over 3 runs (includes prompt time)", **R2080))
# --- ktransformers: EPYC 9654 (12 x DDR5-4800 = 460.8 GB/s) + RTX 4090, DeepSeek-R1 671B Q4_K_M, experts on the CPU
KT = dict(ram_gbps=460.8, ram_note="12 x DDR5-4800 (12 x 38.4 GB/s), NPS=1", ram_gb=768, cpu="AMD EPYC 9654")
R.append(rec("kt-epyc9654-4090-deepseek-r1-1k", "https://github.com/kvcache-ai/ktransformers/issues/314", "1k上下文Decode速度：14tps",
             "deepseek-r1", "Q4_K_M", "DeepSeek-R1 671B 4-bit GGUF", "rtx-4090", "ktransformers", "cuda", "decode", 14.0, depth=1024, **KT))
R.append(rec("kt-epyc9654-4090-deepseek-r1-10k", "https://github.com/kvcache-ai/ktransformers/issues/314", "10k上下文Decode速度：10tps",
             "deepseek-r1", "Q4_K_M", "DeepSeek-R1 671B 4-bit GGUF", "rtx-4090", "ktransformers", "cuda", "decode", 10.0, depth=10240, **KT))
# --- ktransformers 0.5.2 (kt-kernel + SGLang), RTX 5090 + EPYC 9355 (12 channels DDR5-6400 = 614.4 GB/s), Qwen3-30B-A3B BF16, 28 GPU experts
KT2 = dict(ram_gbps=614.4, ram_note="EPYC 9355: 12 channels of DDR5-6400", ram_gb=1511, cpu="AMD EPYC 9355")
R.append(rec("kt-5090-epyc9355-qwen3-30b-a3b-decode-1k", "https://github.com/kvcache-ai/ktransformers/issues/1914",
             "| Decode (tok/s) | 44.4 | 52.5 | 51.6 | 50.2 | 45.8 |", "qwen3-30b-a3b", "BF16", "Qwen3-30B-A3B-Instruct-2507 BF16", "rtx-5090",
             "ktransformers", "cuda", "decode", 52.5, depth=969, settings={"gpu_experts": 28, "cpu_infer": 16}, engine_version="0.5.2", **KT2))
R.append(rec("kt-5090-epyc9355-qwen3-30b-a3b-prefill-2k", "https://github.com/kvcache-ai/ktransformers/issues/1914",
             "| Prefill (tok/s) | 14.8 | 1179.6 | 2966.6 | 3079.9 | 2971.2 |", "qwen3-30b-a3b", "BF16", "Qwen3-30B-A3B-Instruct-2507 BF16", "rtx-5090",
             "ktransformers", "cuda", "prefill2048", 2966.6, settings={"gpu_experts": 28, "cpu_infer": 16}, engine_version="0.5.2", **KT2))
# --- ik_llama.cpp: 16 x RTX 3090, DeepSeek-R1 Q8_0, every layer on the GPUs
DS8 = ("deepseek-r1", "Q8_0", "deepseek2 671B Q8_0 (307.20 GiB)")
for test, tps, q in [("tg128", 17.24, "| deepseek2 671B Q8_0            | 307.20 GiB |   672.05 B | CUDA       |  63 |    4096 |      512 |  1 |   2 |   512 |    1 |         tg128 |     17.24 ± 0.01 |"),
                     ("pp512", 239.31, "| deepseek2 671B Q8_0            | 307.20 GiB |   672.05 B | CUDA       |  63 |    4096 |      512 |  1 |   2 |   128 |    1 |         pp512 |    239.31 ± 0.11 |")]:
    R.append(rec(f"ik-16x3090-deepseek-r1-q8-{test}", "https://github.com/ikawrakow/ik_llama.cpp/issues/263", q, *DS8, "16xrtx-3090", "ik_llama.cpp", "cuda",
                 test, tps, settings={"ngl": 63, "batch": 4096, "ubatch": 512, "fa": 1, "mla": 2}))
# --- vLLM
R.append(rec("spark-arena-dgx-spark-gpt-oss-120b-vllm", "https://github.com/spark-arena/recipe-registry/issues/17",
             "59.5 tok/s decode from vLLM's TPOT metric vs your published 58.82", "gpt-oss-120b", "", "openai/gpt-oss-120b (MXFP4 checkpoint)",
             "dgx-spark", "vllm", "cuda", "decode", 59.5, note="vllm-node-mxfp4 container (CUTLASS + FlashInfer)"))
R.append(rec("club3090-2x5090-qwen3.6-35b-a3b-vllm-tp2", "https://github.com/noonghunna/club-3090/issues/851", "| Decode TPS | **252.0** | **252.7** |",
             "qwen3.6-35b-a3b", "INT4_G128", "Qwen3.6-35B-A3B AutoRound INT4 (group 128)", "2xrtx-5090", "vllm", "cuda", "decode", 252.0,
             settings={"tp": 2, "kv_cache_dtype": "fp8", "max_model_len": 262144}, engine_version="v0.25.1", note="PCIe x8, no NVLink"))
R.append(rec("club3090-2x5090-qwen3.6-35b-a3b-vllm-tp2-prefill", "https://github.com/noonghunna/club-3090/issues/851",
             "| ~10K prompt | 9,300–9,700 | **20,879 tok/s** | 457 ms |", "qwen3.6-35b-a3b", "INT4_G128", "Qwen3.6-35B-A3B AutoRound INT4 (group 128)", "2xrtx-5090", "vllm", "cuda",
             "prefill9500", 20879.0, settings={"tp": 2, "kv_cache_dtype": "fp8"}, engine_version="v0.25.1"))
R.append(rec("tt-a100-qwen3-30b-a3b-isl128", "https://github.com/tenstorrent/tt-inference-server/issues/340",
             "|   128 |  128 |           1 |     8 |      35.7 |       9.6 |          103.92 |             103.9 |             3584.8 |    1257.8 |          0.795 |",
             "qwen3-30b-a3b", "BF16", "Qwen/Qwen3-30B-A3B (BF16)", "a100-80gb", "vllm", "cuda", "decode", 103.9, depth=128, note="GPU reference sweep, concurrency 1"))
R.append(rec("tt-a100-qwen3-30b-a3b-isl8192", "https://github.com/tenstorrent/tt-inference-server/issues/340",
             "|  8192 |  128 |           1 |     2 |     227.0 |      10.6 |           93.94 |",
             "qwen3-30b-a3b", "BF16", "Qwen/Qwen3-30B-A3B (BF16)", "a100-80gb", "vllm", "cuda", "decode", 93.94, depth=8192, note="GPU reference sweep, concurrency 1"))
# --- CPU-only desktop: Threadripper 3970X (4 channels; DDR4-3200 assumed = 102.4 GB/s)
TR = dict(ram_gbps=102.4, ram_note="Threadripper 3970X: 4 channels; DDR4-3200 assumed (4 x 25.6 GB/s)", ram_gb=64, cpu="AMD Ryzen Threadripper 3970X")
R.append(rec("normiebench-tr3970x-llama-3.1-8b-tg128", "https://github.com/brand-o/normiebench/issues/52", "\"tg128\": 16.78,",
             "llama-3.1-8b", "Q4_K_M", "llama 3.1 8b q4_k_m", "none", "llamacpp", "cpu", "tg128", 16.78, **TR))
R.append(rec("normiebench-tr3970x-llama-3.1-8b-pp512", "https://github.com/brand-o/normiebench/issues/52", "\"pp512\": 155.5,",
             "llama-3.1-8b", "Q4_K_M", "llama 3.1 8b q4_k_m", "none", "llamacpp", "cpu", "pp512", 155.5, **TR))
# --- More llama-bench lines from llama.cpp threads
R.append(rec("llamacpp-15077-2x5090-gpt-oss-120b-ncmoe3", "https://github.com/ggml-org/llama.cpp/pull/15077",
             "just got 108T/s with gpt-oss:120b on my dual 5090s with:", "gpt-oss-120b", "MXFP4", "ggml-org/gpt-oss-120b-GGUF", "2xrtx-5090",
             "llamacpp", "cuda", "eval", 108.0, settings={"ngl": 99, "n_cpu_moe": 3, "fa": 1}, ram_gbps=89.6,
             ram_note="not given; dual-channel DDR5-5600 assumed (89.6 GB/s)"))
for depth, tps in [(3846, 50.2), (7678, 45.8)]:
    R.append(rec(f"kt-5090-epyc9355-qwen3-30b-a3b-decode-d{depth}", "https://github.com/kvcache-ai/ktransformers/issues/1914",
                 "| Decode (tok/s) | 44.4 | 52.5 | 51.6 | 50.2 | 45.8 |", "qwen3-30b-a3b", "BF16", "Qwen3-30B-A3B-Instruct-2507 BF16", "rtx-5090",
                 "ktransformers", "cuda", "decode", tps, depth=depth, settings={"gpu_experts": 28, "cpu_infer": 16}, engine_version="0.5.2", **KT2))

# --- Added in the second collection (issue 18): llmfit community submissions (merged JSON files of
# AlexsJones/llmfit, `llmfit bench --runs 3` against llama.cpp; avgTps = output tokens / total time,
# so prompt time is included and the pure decode rate is a little higher), with the -ngl/-ot of
# each model from the pull request that added it.
LLMFIT = "https://github.com/AlexsJones/llmfit/blob/3f44fd30a43d2619146f7bc0aa66c90aa54d78e6/llmfit-core/data/community/"
LLMFIT_NOTE = "llmfit bench average over 3 runs; avgTps includes prompt time (pure decode is a little faster)"
for mid, q, gguf, dev, backend, path, pr, tps, st, kw in [
    ("gemma-3-12b", "Q4_K_M", "gemma-3-12b-it-Q4_K_M.gguf", "rtx-2080", "cuda", "nvidia-geforce-rtx-2080/1784560683-66d0d9d1.json", 774, 26.06, {"ngl": 44, "context": 4096}, R2080),
    ("qwen3-14b", "Q4_K_M", "Qwen3-14B-Q4_K_M.gguf", "rtx-2080", "cuda", "nvidia-geforce-rtx-2080/1784560683-66d0d9d1.json", 774, 16.85, {"ngl": 32, "context": 4096}, R2080),
    ("mistral-small-3.1-24b", "Q4_K_M", "Mistral-Small-24B-Instruct-2501-Q4_K_M.gguf (Mistral Small 3's text geometry = 3.1's)", "rtx-2080", "cuda",
     "nvidia-geforce-rtx-2080/1784560684-cacae003.json", 775, 5.22, {"ngl": 16, "context": 4096}, R2080),
    ("qwen2.5-14b", "Q4_K_M", "Qwen2.5-14B-Instruct-Q4_K_M.gguf", "rtx-2080", "cuda", "nvidia-geforce-rtx-2080/1784627096-7bd7947b.json", 778, 20.77, {"ngl": 42, "context": 4096}, R2080),
    ("qwen3-4b", "Q4_K_M", "Qwen3-4B-Q4_K_M.gguf", "rtx-2080", "cuda", "nvidia-geforce-rtx-2080/1784560682-efc5c3a6.json", 773, 110.6, {"ngl": 99, "context": 4096}, R2080),
    ("llama-3.1-8b", "Q4_K_M", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "rtx-2080", "cuda", "nvidia-geforce-rtx-2080/1784560682-efc5c3a6.json", 773, 71.87, {"ngl": 99, "context": 4096}, R2080),
    ("mistral-7b-v0.3", "Q4_K_M", "Mistral-7B-Instruct-v0.3-Q4_K_M.gguf", "rtx-2080", "cuda", "nvidia-geforce-rtx-2080/1784627096-7bd7947b.json", 778, 77.76, {"ngl": 99, "context": 4096}, R2080),
    ("llama-3.2-3b", "Q4_K_M", "Llama-3.2-3B-Instruct-Q4_K_M.gguf", "rtx-2080", "cuda", "nvidia-geforce-rtx-2080/1784627096-7bd7947b.json", 778, 140.33, {"ngl": 99, "context": 4096}, R2080),
    ("qwen3-30b-a3b", "Q4_K_M", "Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf", "m4-pro-64gb", "metal", "apple-m4-pro/1785350891-d9aff26a.json", 812, 70.55, {}, {}),
    ("gpt-oss-20b", "MXFP4", "gpt-oss-20b-MXFP4.gguf", "m4-pro-64gb", "metal", "apple-m4-pro/1785350891-d9aff26a.json", 812, 66.51, {}, {}),
    ("qwen3-14b", "Q4_K_M", "Qwen3-14B-Q4_K_M.gguf", "m4-pro-64gb", "metal", "apple-m4-pro/1785350891-d9aff26a.json", 812, 26.64, {}, {}),
    ("gemma-3-27b", "Q4_K_M", "gemma-3-27b-it-Q4_K_M.gguf", "m4-pro-64gb", "metal", "apple-m4-pro/1785350891-d9aff26a.json", 812, 13.24, {}, {}),
    ("llama-3.1-8b", "Q4_K_M", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "m4-pro-64gb", "metal", "apple-m4-pro/1785350891-d9aff26a.json", 812, 47.25, {}, {}),
    ("kimi-linear-48b-a3b", "Q4_K_M", "moonshotai_Kimi-Linear-48B-A3B-Instruct-Q4_K_M.gguf", "dgx-spark", "cuda", "nvidia-gb10/1786611367-06d57be3-2.json", 872, 70.25, {}, {}),
    ("qwen3.5-122b-a10b", "Q4_K_M", "Qwen3.5-122B-A10B-Q4_K_M.gguf", "dgx-spark", "cuda", "nvidia-gb10/1786611367-06d57be3-2.json", 872, 28.95, {}, {}),
    ("qwen3.6-35b-a3b", "Q4_K_M", "Qwen3.6-35B-A3B-Q4_K_M.gguf", "dgx-spark", "cuda", "nvidia-gb10/1786611367-06d57be3-2.json", 872, 66.27, {}, {}),
    ("qwen3.5-27b", "Q4_K_M", "Qwen_Qwen3.5-27B-Q4_K_M.gguf", "dgx-spark", "cuda", "nvidia-gb10/1786611367-06d57be3-2.json", 872, 11.28, {}, {}),
    ("qwen3-30b-a3b", "Q4_K_M", "Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf", "rx-7900-xt", "vulkan", "amd-radeon-rx-7900-xt/1785258762-ee642f2d.json", 808, 151.77, {}, {}),
    ("gpt-oss-20b", "MXFP4", "gpt-oss-20b-MXFP4.gguf", "rx-7900-xt", "vulkan", "amd-radeon-rx-7900-xt/1785258762-ee642f2d.json", 808, 162.61, {}, {}),
    ("llama-3.1-8b", "Q4_K_M", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "rx-7900-xt", "vulkan", "amd-radeon-rx-7900-xt/1785258762-ee642f2d.json", 808, 114.33, {}, {}),
    ("qwen3-14b", "Q4_K_M", "Qwen3-14B-Q4_K_M.gguf", "rx-7900-xt", "vulkan", "amd-radeon-rx-7900-xt/1785258762-ee642f2d.json", 808, 67.26, {}, {}),
    ("gemma-3-27b", "Q4_K_M", "gemma-3-27b-it-Q4_K_M.gguf", "rx-7900-xt", "vulkan", "amd-radeon-rx-7900-xt/1785258762-ee642f2d.json", 808, 32.65, {}, {}),
]:
    note = f"{LLMFIT_NOTE}; added by https://github.com/AlexsJones/llmfit/pull/{pr}" + ("" if st else "; the PR gives no offload flags and the model fits the device")
    R.append(rec(f"llmfit-{dev}-{mid}", LLMFIT + path, f'"model": "{gguf.split(" ")[0]}", "provider": "llamacpp", "numRuns": 3, "avgTps": {tps}', mid, q, gguf, dev,
                 "llamacpp", backend, "eval", tps, settings=st or {"ngl": 99}, note=note, **kw))
# --- ik_llama.cpp PR 1593: RTX 5060 Ti 16 GB, Qwen3.5-35B-A3B with experts of the first N layers in RAM,
# mainline (stock b8125) and ik_llama.cpp. The host RAM is not given: dual-channel DDR5-5600 assumed.
IK1593 = "https://github.com/ikawrakow/ik_llama.cpp/pull/1593"
R5060 = dict(ram_gbps=89.6, ram_note="not given; dual-channel DDR5-5600 assumed (89.6 GB/s)")
for eng, tag, q, file, ncmoe, dec, _prefill, quote in [
    ("llamacpp", "stock", "Q4_K_M", "Qwen3.5-35B-A3B Q4_K_M (21 GB)", 14, 52.0, 104.0, "| Q4_K_M | stock b8125 | ncmoe 14 | 1 | 16K | 52 | 104 | 679 MB |"),
    ("ik_llama.cpp", "ik", "Q4_K_M", "Qwen3.5-35B-A3B Q4_K_M (21 GB)", 14, 62.3, 314.0, "| **Q4_K_M** (21 GB) | **ik_llama sm120** | ncmoe 14 | 1 | 64K | **62.3** | 314 | 348 MB |"),
    ("llamacpp", "stock", "Q5_K_M", "Qwen3.5-35B-A3B UD-Q5_K_XL (25 GB; tier Q5_K_M)", 20, 42.0, 97.0, "| Q5_K_XL | stock b8125 | ncmoe 20 | 1 | 64K | 42 | 97 | ~1.2 GB |"),
    ("ik_llama.cpp", "ik", "Q5_K_M", "Qwen3.5-35B-A3B UD-Q5_K_XL (25 GB; tier Q5_K_M)", 18, 49.9, 257.0, "| **Q5_K_XL** (25 GB) | **ik_llama sm120** | ncmoe 18 | 1 | 64K | **49.9** | 257 | 454 MB |"),
]:
    # Their prefill figures (the column after tok/s) are left out: the prompt length is not given, and
    # under offload llama.cpp's cost per prompt token depends on it (weights cross PCIe once per batch).
    for kind, tps in [("eval", dec)]:
        R.append(rec(f"ik1593-rtx-5060-ti-qwen3.5-35b-a3b-{q.lower()}-{tag}-ncmoe{ncmoe}-{kind}", IK1593, quote, "qwen3.5-35b-a3b", q, file, "rtx-5060-ti-16gb", eng, "cuda",
                     kind, tps, settings={"ngl": 99, "n_cpu_moe": ncmoe}, note="server figure, one slot", **R5060))
# --- ktransformers on two sockets: 2 x EPYC 9135, 24 x DDR5-6400 (12 channels per socket), RTX 4090.
R.append(rec("kt-2xepyc9135-4090-deepseek-r1", "https://github.com/kvcache-ai/ktransformers/issues/797",
             "|    50%     |  0.0023  |  0.0568  |   64.9231   |      21      |     1122      |       17.3042        |",
             "deepseek-r1", "Q4_K_M", "DeepSeek-R1 GGUF (the report does not name the file; ktransformers' DeepSeek-R1 guide runs Q4_K_M)", "rtx-4090", "ktransformers", "cuda",
             "decode", round(1 / 0.0568, 2), settings={"sockets": 2, "cpu_infer": 31}, ram_gbps=614.4, ram_gb=1179,
             ram_note="per socket: 12 x DDR5-6400 (12 x 51.2 GB/s); 2 sockets, USE_NUMA=1 (weights copied to each node)", cpu="2 x AMD EPYC 9135",
             note="evalscope median TPOT 0.0568 s -> 17.6 tok/s; parallel 1"))
# --- llama-bench lines on an RTX PRO 6000 Blackwell (llama.cpp PR 16991) and more of the 16 x RTX 3090 box.
for test, tps, depth, q in [("tg128", 391.20, 0, "| gpt-oss 20B MXFP4 MoE          |  11.27 GiB |    20.91 B | CUDA       |  99 |     2048 |  1 |           tg128 |        391.20 ± 0.39 |"),
                            ("tg128@d512", 383.66, 512, "| gpt-oss 20B MXFP4 MoE          |  11.27 GiB |    20.91 B | CUDA       |  99 |     2048 |  1 |    tg128 @ d512 |        383.66 ± 1.09 |")]:
    R.append(rec(f"llamacpp-16991-rtx-pro-6000-gpt-oss-20b-{test.replace('@', '-')}", "https://github.com/ggml-org/llama.cpp/pull/16991", q, "gpt-oss-20b", "MXFP4",
                 "gpt-oss 20B MXFP4 MoE (11.27 GiB)", "rtx-pro-6000", "llamacpp", "cuda", test, tps, depth=depth, settings={"ngl": 99, "ubatch": 2048, "fa": 1}))
for test, tps, q in [("pp8192", 183.37, "| deepseek2 671B Q8_0            | 307.20 GiB |   672.05 B | CUDA       |  63 |    2048 |      512 |  1 |   2 |  1024 |    1 |        pp8192 |    183.37 ± 0.73 |"),
                     ("tg128", 17.22, "| deepseek2 671B Q8_0            | 307.20 GiB |   672.05 B | CUDA       |  63 |    2048 |      512 |  1 |   2 |  1024 |    1 |         tg128 |     17.22 ± 0.05 |")]:
    R.append(rec(f"ik-16x3090-deepseek-r1-q8-amb1024-{test}", "https://github.com/ikawrakow/ik_llama.cpp/issues/263", q, *DS8, "16xrtx-3090", "ik_llama.cpp", "cuda",
                 test, tps, settings={"ngl": 63, "batch": 2048, "ubatch": 512, "fa": 1, "mla": 2, "amb": 1024}))

# --- Speculative decoding: GLM-4.5-Air with its own MTP head in llama.cpp (--spec-type draft-mtp,
# --spec-draft-n-max 2) on three power-limited RTX 3090s; the run does not print its acceptance, so
# the estimate uses the MTP default (DeepSeek-V3's 85%). Prompt of 10,995 tokens, 159 decoded.
R.append(rec("llamacpp-26534-3x3090-glm-4.5-air-mtp2", "https://github.com/ggml-org/llama.cpp/pull/26534",
             "eval time =    3511.87 ms /   159 tokens (   22.09 ms per token,    45.28 tokens per second)", "glm-4.5-air", "Q4_K_M",
             "GLM-4.5-Air-UD-Q4_K_XL (tier Q4_K_M)", "3xrtx-3090", "llamacpp", "cuda", "eval", 45.28, depth=10995 + 80,
             settings={"ts": "24,24,24", "ubatch": 256, "fa": 1, "cache": "q8_0", "spec_method": "mtp", "spec_tokens": 2},
             note="llama-server, one slot, 200 W power limit; q8_0 cache (the estimate reads an f16 one)"))

# --- Added in the third collection (issue 18: the added devices, two sockets, Apple). Which share each
# run falls in was fixed by the hash below when they were added, before any estimate was looked at.
# normiebench submissions (llama-bench pp512 / tg128, Llama 3.1 8B Q4_K_M, llama.cpp Metal).
for dev, issue, pp, tg, name in [("m1-max-64gb", 40, 499.58, 46.2, "MacBook Pro M1 Max"), ("m4-16gb", 3, 224.81, 20.87, "Mac Mini M4")]:
    for test, tps in [("pp512", pp), ("tg128", tg)]:
        R.append(rec(f"normiebench-{dev}-llama-3.1-8b-{test}", f"https://github.com/brand-o/normiebench/issues/{issue}", f'"{test}": {tps},',
                     "llama-3.1-8b", "Q4_K_M", "llama 3.1 8b q4_k_m", dev, "llamacpp", "metal", test, tps, note=f"{name}; backend 'llama.cpp / metal'"))
# Jeff Geerling's README rows for the M1 Ultra (64-core GPU, 128 GB; llama-bench, llama.cpp build e9fd8dc, Metal) and
# the M4 Mac mini (32 GB; Ollama).
R.append(rec("geerling-m1-ultra-128gb-llama-3.2-3b-tg128", GEERLING + "/issues/48",
             "| [M1 Ultra (64 GPU Core) 128GB](https://github.com/geerlingguy/ai-benchmarks/issues/48) | GPU | 127.6 Tokens/s | N/A |",
             *L32, "m1-ultra-128gb", "llamacpp", "metal", "tg128", 127.6, settings=GEERLING_OPTS, note="README 'Findings' row (" + GEERLING + ")"))
R.append(rec("geerling-m1-ultra-128gb-gpt-oss-20b-tg128", GEERLING + "/issues/48",
             "| [M1 Ultra (64 GPU Core) 128GB](https://github.com/geerlingguy/ai-benchmarks/issues/48) | GPU | 100.43 Tokens/s | N/A |",
             *OSS20, "m1-ultra-128gb", "llamacpp", "metal", "tg128", 100.43, settings=GEERLING_OPTS, note="README 'Findings' row (" + GEERLING + ")"))
R.append(rec("geerling-ollama-m4-32gb-llama-3.2-3b", GEERLING + "/issues/2",
             "| [M4 Mac mini (10 core - 32GB)](https://github.com/geerlingguy/ai-benchmarks/issues/2) | GPU | 41.31 Tokens/s | 30.1W |",
             "llama-3.2-3b", "Q4_K_M", "ollama llama3.2:3b (Q4_K_M)", "m4-32gb", "ollama", "metal", "eval", 41.31, note="README 'Llama 3.2:3b' row; Ollama 'eval rate'"))
# Radeon PRO W7800 (llama.cpp PR 24546, HIP build, after the change; ubatch 512).
for test, tps in [("pp512", 3185.67), ("tg128", 121.88)]:
    R.append(rec(f"llamacpp-24546-w7800-qwen3-30b-a3b-{test}", "https://github.com/ggml-org/llama.cpp/pull/24546",
                 "Qwen3-30B-A3B Q4_K_M | 128 | 512 | 750.29 → 885.10 (+17.97%) | 2254.61 → 3185.67 (+41.30%) | 2165.73 → 2941.54 (+35.82%) | 121.76 → 121.88 (+0.10%)",
                 "qwen3-30b-a3b", "Q4_K_M", "Qwen3-30B-A3B Q4_K_M", "radeon-pro-w7800", "llamacpp", "rocm", test, tps, settings={"ngl": 99, "ubatch": 512},
                 note="the column after the arrow (with the pull request)"))
# Two sockets, CPU only: 2 x Xeon Gold 6226R (6 channels of DDR4-2933 per socket), ik_llama.cpp, Gemma 3 27B Q8_0,
# llama-sweep-bench with -rtr; the second row (512 tokens in the cache; the first is a cold start).
for test, tps in [("pp512", 61.58), ("tg128", 5.17)]:
    R.append(rec(f"ik390-2x6226r-gemma-3-27b-q8-{test}", "https://github.com/ikawrakow/ik_llama.cpp/pull/390",
                 "|   512 |    128 |    512 |    8.314 |    61.58 |   24.781 |     5.17 |", "gemma-3-27b", "Q8_0", "google_gemma-3-27b-it-Q8_0.gguf", "none",
                 "ik_llama.cpp", "cpu", test, tps, depth=512, settings={"threads": 32, "fa": 1, "rtr": 1, "sockets": 2}, ram_gbps=140.8,
                 ram_note="per socket: 6 channels of DDR4-2933 (6 x 23.47 GB/s; Intel's Xeon Gold 6226R page); two sockets, no numactl",
                 cpu="2 x Intel Xeon Gold 6226R", note="llama-sweep-bench row at N_KV 512"))
# Offload prefill: the same ktransformers thread's other prompt lengths (969 and 3,846 tokens).
for prompt, tps in [(969, 1179.6), (3846, 3079.9)]:
    R.append(rec(f"kt-5090-epyc9355-qwen3-30b-a3b-prefill-{prompt}", "https://github.com/kvcache-ai/ktransformers/issues/1914",
                 "| Prefill (tok/s) | 14.8 | 1179.6 | 2966.6 | 3079.9 | 2971.2 |", "qwen3-30b-a3b", "BF16", "Qwen3-30B-A3B-Instruct-2507 BF16", "rtx-5090",
                 "ktransformers", "cuda", f"prefill{prompt}", tps, settings={"gpu_experts": 28, "cpu_infer": 16}, engine_version="0.5.2", **KT2))

# --- Fifth collection (issue 18, 2026-12-01): CPU-only llama-bench tables that print the thread count (llama-bench's
# "threads" column: llama.cpp's default, the performance cores), for the CPU's cost per layer against threads.
# Llama-3.2-3B-Instruct-Q4_K_M.gguf (1.87 GiB). Shares by the hash below, fixed before any estimate was read.
for key, source, cpu, ram_gbps, ram_note, rows in [
    ("geerling53-i5-4278u", GEERLING + "/issues/53", "Intel Core i5-4278U (MacBook Pro 2014)", 25.6,
     "the issue's title: 8GB DDR3L-1600; two channels (the i5-4278U's two, 2 x 12.8 GB/s)",
     [("pp512", 17.70, "|           pp512 |         17.70 ± 0.08 |"), ("tg128", 7.68, "|           tg128 |          7.68 ± 0.03 |")]),
    ("sbc107-i3-1315u", "https://github.com/geerlingguy/sbc-reviews/issues/107", "Intel Core i3-1315U (Framework Laptop 12)", 41.6,
     "one DDR5-5200 SO-DIMM, the Framework Laptop 12's single slot (64 bits x 5,200 MT/s)",
     [("pp512", 28.67, "|           pp512 |         28.67 ± 0.18 |"), ("tg128", 11.05, "|           tg128 |         11.05 ± 0.08 |")]),
]:
    for test, tps, tail in rows:
        R.append(rec(f"{key}-llama-3.2-3b-{test}", source, "| llama 3B Q4_K - Medium         |   1.87 GiB |     3.21 B | CPU        |       2 " + tail,
                     *L32, "none", "llamacpp", "cpu", test, tps, settings={"threads": 2}, ram_gbps=ram_gbps, ram_note=ram_note, cpu=cpu,
                     note="llama-bench -n 128 -p 512,4096 -pg 4096,128; threads as the table prints them"))

# --- Sixth collection (issue 18, 2026-12-02): offload and CPU-only runs whose RAM (kind, channels, speed) is
# stated in the source. Shares by the hash below, fixed before any estimate was read; nothing was refitted.
# sweep-bench rows: the first row (N_KV 0) of each table, TG of 128 (or 1024) tokens after an empty cache.
IK = "https://github.com/ikawrakow/ik_llama.cpp"
SWEEP_NOTE = "llama-sweep-bench, first row (N_KV 0)"
# llama.cpp issue 5484: CPU only, Xeon E5-2683 v4 with quad-channel DDR4-2133 (4 x 17.07 GB/s), Mixtral 8x7B F16.
R.append(rec("llamacpp-5484-e5-2683v4-mixtral-8x7b-f16-cpu", "https://github.com/ggml-org/llama.cpp/issues/5484",
             "On this system using llama.cpp with CPU only I get 2.32 t/s for Mixtral FP16 (as reported by `llama-bench`).",
             "mixtral-8x7b", "F16", "Mixtral 8x7B FP16 GGUF", "none", "llamacpp", "cpu", "tg128", 2.32, ram_gbps=68.26,
             ram_note="quoted: 'a Xeon E5-2683 v4 CPU as well as quad-channel 2133 MHz RAM' (4 x 2,133 MT/s x 8 B)", cpu="Intel Xeon E5-2683 v4 (16 cores)",
             note="llama-bench with its default test (tg128); threads not given (llama-bench's default)"))
# llama.cpp issue 4716: CPU only, Mixtral 8x7B Q8_0 on a Ryzen 9 5900X (DDR4) and a Ryzen 9 7950X (DDR5), both 128 GB at
# 3,600 MT/s on their two channels (2 x 28.8 GB/s), threads = cores.
for dev_key, cpu, ram_kind, threads, tps in [("5900x", "AMD Ryzen 9 5900X (12 cores)", "DDR4", 12, 3.58), ("7950x", "AMD Ryzen 9 7950X (16 cores)", "DDR5", 16, 3.37)]:
    R.append(rec(f"llamacpp-4716-{dev_key}-mixtral-8x7b-q8-cpu", "https://github.com/ggml-org/llama.cpp/issues/4716",
                 "Did some benchmarking tonight and have a Ryzen 5900X that beats a 7950X for some reason at 3.58 vs 3.37 t/s on Mixtral Q8_0.",
                 "mixtral-8x7b", "Q8_0", "Mixtral 8x7B Q8_0 GGUF", "none", "llamacpp", "cpu", "eval", tps, settings={"threads": threads}, ram_gbps=57.6, ram_gb=128,
                 ram_note=f"quoted: 'Both machines had 128GB at 3600 MT/s, 7950X has DDR5 while the 5900X is DDR 4'; {ram_kind} on the socket's two channels (2 x 28.8 GB/s)",
                 cpu=cpu, note="quoted: 'Both machines spawned threads equal to how many cores they have (16 vs 12)'"))
# llama.cpp issue 19480: Ollama 0.15.6 (llama.cpp build 7973), CPU only, Ryzen AI 9 HX PRO 370 with 96 GB DDR5-5600
# dual-channel (2 x 44.8 GB/s).
HX370 = dict(ram_gbps=89.6, ram_gb=96, ram_note="quoted: '96GB DDR5-5600 dual-channel (2x48GB)' (2 x 44.8 GB/s)", cpu="AMD Ryzen AI 9 HX PRO 370 (12 cores)")
R.append(rec("llamacpp-19480-hx370-qwen2.5-coder-32b-ollama-cpu", "https://github.com/ggml-org/llama.cpp/issues/19480",
             "| qwen2.5-coder:32b | Q4_K_M | 19GB | 32.8B (100%) | 3.54 | Dense |", "qwen2.5-32b", "Q4_K_M",
             "ollama qwen2.5-coder:32b (Q4_K_M; Qwen2.5-32B's geometry)", "none", "ollama", "cpu", "eval", 3.54, note="Ollama 0.15.6 in Docker, CPU only; 'Gen tok/s'", **HX370))
R.append(rec("llamacpp-19480-hx370-qwen3-coder-next-ollama-cpu", "https://github.com/ggml-org/llama.cpp/issues/19480",
             "| **qwen3-coder-next** | **Q4_K_M** | **51GB** | **3B (3.75%)** | **7.74** | **MoE** |", "qwen3-next-80b-a3b", "Q4_K_M",
             "ollama qwen3-coder-next (Q4_K_M, 51 GB; the issue's title: 'Qwen3-Coder-Next (Qwen3-Next-80B)')", "none", "ollama", "cpu", "eval", 7.74,
             note="Ollama 0.15.6 in Docker, CPU only; 'Gen tok/s'; the issue reports this run as anomalously slow", **HX370))
# llmfit: the RTX 2080 box's Qwen2.5-Coder-14B (Qwen2.5-14B's geometry), -ngl 42 (pull request 778's table).
R.append(rec("llmfit-rtx-2080-qwen2.5-coder-14b", LLMFIT + "nvidia-geforce-rtx-2080/1784627096-7bd7947b.json",
             '"model": "Qwen2.5-Coder-14B-Instruct-Q4_K_M.gguf", "provider": "llamacpp", "numRuns": 3, "avgTps": 20.7', "qwen2.5-14b", "Q4_K_M",
             "Qwen2.5-Coder-14B-Instruct-Q4_K_M.gguf (Qwen2.5-14B's geometry)", "rtx-2080", "llamacpp", "cuda", "eval", 20.7, settings={"ngl": 42, "context": 4096},
             note=LLMFIT_NOTE + "; -ngl 42 from https://github.com/AlexsJones/llmfit/pull/778 ('| Qwen2.5-Coder-14B | `-ngl 42` | 20.7 |')", **R2080))
# ik_llama.cpp PR 370: Qwen3-235B-A22B Q8_0 (232.77 GiB) on one RTX A6000, the FFN of layers 14-93 in RAM, 24 threads;
# Threadripper PRO 7965WX with 8 x 32 GB DDR5 at 4,800 MT/s (8 channels x 38.4 GB/s; discussion 258 lists the rig).
TR7965 = dict(ram_gbps=307.2, ram_gb=256, cpu="AMD Ryzen Threadripper PRO 7965WX (24 cores)",
              ram_note="quoted: '8x32GB DDR5 running at slower 4800MHz' and 'around 225-250GB/s RAM i/o ... with Intel Memory Latency Checker'; the 7965WX's 8 channels x 38.4 GB/s")
OT_A6000 = "blk\\.1[4-9]\\.ffn.*=CPU,blk\\.[2-9][0-9]\\.ffn.*=CPU"
for eng, tag, q, extra in [("llamacpp", "mainline", "|   512 |    128 |      0 |   14.007 |    36.55 |   12.532 |    10.21 |", {}),
                           ("ik_llama.cpp", "ik", "|   512 |    128 |      0 |    3.130 |   163.60 |   12.075 |    10.60 |", {"rtr": 1, "fmoe": 1})]:
    tps = float(q.split("|")[-2])
    R.append(rec(f"ik370-a6000-qwen3-235b-a22b-q8-{tag}-tg128", IK + "/pull/370", q, "qwen3-235b-a22b", "Q8_0",
                 "ubergarm/Qwen3-235B-A22B-GGUF Qwen3-235B-A22B-Q8_0.gguf (232.77 GiB)", "rtx-a6000", eng, "cuda", "tg128", tps,
                 settings={"ngl": 99, "ot": OT_A6000, "threads": 24, "fa": 1, "cache": "q8_0", **extra},
                 note=SWEEP_NOTE + ("; mainline llama.cpp 36667c8e with the sweep-bench port" if eng == "llamacpp" else "; ik_llama.cpp main@ab7f694b") +
                 "; q8_0 cache (the estimate reads an f16 one)", **TR7965))
# AesSedai's rig (ik_llama.cpp discussion 357): a VM with 56 threads of an EPYC 9355, 512 GB of 12-channel DDR5-6000
# (12 x 48 GB/s), 2 x RTX 3090; unsloth Qwen3-235B-A22B-128K Q6_K (179.75 GiB), 48 threads, q8_0 cache.
E9355 = dict(ram_gbps=576.0, ram_gb=512, cpu="AMD EPYC 9355 (a VM with 56 of its 64 threads)",
             ram_note="quoted: '512GB of 12 channel DDR5 6000 ECC RAM (768GB total)' (12 x 48 GB/s)")
Q235Q6 = ("qwen3-235b-a22b", "Q6_K", "unsloth/Qwen3-235B-A22B-128K-GGUF Q6_K (179.75 GiB)")
R.append(rec("ik357-epyc9355-qwen3-235b-a22b-q6-llamacpp-cpu-tg128", IK + "/discussions/357",
             "|   512 |    128 |      0 |   42.357 |    12.09 |    9.060 |    14.13 |", *Q235Q6, "none", "llamacpp", "cpu", "tg128", 14.13,
             settings={"threads": 48, "fa": 1, "cache": "q8_0"}, note=SWEEP_NOTE + "; the author's 'llama.cpp CPU only' (a CUDA build, no layers offloaded)", **E9355))
R.append(rec("ik357-epyc9355-3090-qwen3-235b-a22b-q6-llamacpp-tg128", IK + "/discussions/357",
             "|   512 |    128 |      0 |    8.145 |    62.86 |   10.488 |    12.20 |", *Q235Q6, "rtx-3090", "llamacpp", "cuda", "tg128", 12.20,
             settings={"ngl": 99, "ot": "blk\\.(0|1|2|3|4)\\.ffn.*=CUDA0,blk\\.(5|6|7|8|9)\\.ffn.*=CPU,blk\\.1[0-9]\\.ffn.*=CPU,blk\\.[2-9][0-9]\\.ffn.*=CPU",
                       "threads": 48, "fa": 1, "cache": "q8_0"}, note=SWEEP_NOTE + "; 'llama.cpp GPU logs' (one RTX 3090)", **E9355))
OT_2X3090 = "blk\\.(0|1|2|3|4|5|6)\\.ffn.*=CUDA0,blk\\.(7|8|9|10|11|12|13)\\.ffn.*=CUDA1,blk\\.1[4-9]\\.ffn.*=CPU,blk\\.[2-9][0-9]\\.ffn.*=CPU"
for eng, tag, q, extra in [("llamacpp", "llamacpp", "|   512 |    128 |      0 |    7.331 |    69.84 |   10.382 |    12.33 |", {}),
                           ("ik_llama.cpp", "ik", "|   512 |    128 |      0 |    2.945 |   173.84 |    9.407 |    13.61 |", {"rtr": 1, "fmoe": 1})]:
    R.append(rec(f"ik370-epyc9355-2x3090-qwen3-235b-a22b-q6-{tag}-tg128", IK + "/pull/370", q, *Q235Q6, "2xrtx-3090", eng, "cuda", "tg128",
                 float(q.split("|")[-2]), settings={"ngl": 99, "ot": OT_2X3090, "threads": 48, "fa": 1, "cache": "q8_0", **extra},
                 note=SWEEP_NOTE + ("; llama.cpp master 36667c8e" if eng == "llamacpp" else "; ik_llama.cpp main ab7f694b") +
                 "; the rig as described in " + IK + "/discussions/357", **E9355))
# ik_llama.cpp discussion 385: CPU only, 2 x Xeon Gold 6138 with 16 x DDR4-2666 on 12 channels (6 per socket: 6 x 21.33 GB/s),
# Windows, SNC off, 20 threads, unsloth Q8_0.
X6138 = dict(ram_gbps=128.0, ram_gb=512, cpu="2 x Intel Xeon Gold 6138 (20 cores each)",
             ram_note="quoted: 'RDIMM DDR4 2666 2Rx4 32G x16(12 Channels total)'; per socket 6 channels x 21.33 GB/s; two sockets, SNC off, Windows")
for mid, q_file, pp_q in [
    ("qwen3-235b-a22b", "unsloth/Qwen3-235B-A22B-128K-GGUF Qwen3-235B-A22B-128K-Q8_0", "|   512 |    128 |      0 |   67.198 |     7.62 |   53.220 |     2.41 |"),
    ("qwen3-30b-a3b", "unsloth Qwen3-30B-A3B-128K-Q8_0", "|   512 |    128 |      0 |    8.519 |    60.10 |    9.924 |    12.90 |")]:
    cells = [c.strip() for c in pp_q.split("|")]
    for test, tps in [("pp512", float(cells[5])), ("tg128", float(cells[7]))]:
        R.append(rec(f"ik385-2x6138-{mid}-q8-{test}", IK + "/discussions/385", pp_q, mid, "Q8_0", q_file, "none", "ik_llama.cpp", "cpu", test, tps,
                     settings={"threads": 20, "fa": 1, "sockets": 2}, note=SWEEP_NOTE + " (-ngl 0)", **X6138))
# ik_llama.cpp issue 437: CPU only ('GPU hidden'), Xeon 8480 (ES) with 8-channel DDR5-4800, unsloth Qwen3-30B-A3B-UD-Q4_K_XL, 32 threads.
X8480 = dict(ram_gbps=307.2, cpu="Intel Xeon 8480 (engineering sample)", ram_note="quoted: 'Xeon 8480 (ES), 8-channel 4800MT DDR5' (8 x 38.4 GB/s)")
for test, tps, q in [("tg128", 69.77, "|  16.49 GiB |    30.53 B | CUDA       |   0 |      32 |  1 |    1 |         tg128 |     69.77 ± 0.02 |"),
                     ("pp512", 510.65, "|  16.49 GiB |    30.53 B | CUDA       |   0 |      32 |  1 |    1 |         pp512 |    510.65 ± 2.49 |")]:
    R.append(rec(f"ik437-xeon8480-qwen3-30b-a3b-q4-cpu-{test}", IK + "/issues/437", q, "qwen3-30b-a3b", "Q4_K_M",
                 "unsloth/Qwen3-30B-A3B-GGUF Qwen3-30B-A3B-UD-Q4_K_XL (16.49 GiB; tier Q4_K_M)", "none", "ik_llama.cpp", "cpu", test, tps,
                 settings={"ngl": 0, "threads": 32, "fa": 1, "fmoe": 1}, note="ik_llama.cpp llama-bench 'with GPU hidden'", **X8480))
# ik_llama.cpp issue 464: Threadripper PRO 3955WX (16 cores) with 8 channels of DDR4-3200, 2 x RTX 3090, Qwen3-235B-A22B
# UD-Q5_K_XL, up/gate experts of layers 0-28 on the GPUs, the other experts in RAM.
R.append(rec("ik464-tr3955wx-2x3090-qwen3-235b-a22b-q5-tg1024", IK + "/issues/464",
             "|  4096 |   1024 |      0 |   11.730 |   349.19 |  133.500 |     7.67 |", "qwen3-235b-a22b", "Q5_K_M",
             "unsloth Qwen3-235B-A22B-UD-Q5_K_XL (tier Q5_K_M)", "2xrtx-3090", "ik_llama.cpp", "cuda", "tg1024", 7.67,
             settings={"ngl": 99, "ot": "blk\\.[0-9]\\.ffn_up_exps=CUDA0,blk\\.[0-9]\\.ffn_gate_exps=CUDA0,blk\\.2[0-4]\\.ffn_up_exps=CUDA0,blk\\.2[0-4]\\.ffn_gate_exps=CUDA0,"
                             "blk\\.1[0-9]\\.ffn_up_exps=CUDA1,blk\\.1[0-9]\\.ffn_gate_exps=CUDA1,blk\\.2[5-8]\\.ffn_up_exps=CUDA1,blk\\.2[5-8]\\.ffn_gate_exps=CUDA1,exps=CPU",
                       "threads": 16, "fa": 1, "fmoe": 1, "cache": "q8_0", "batch": 4096, "ubatch": 4096},
             ram_gbps=204.8, ram_gb=256, cpu="AMD Ryzen Threadripper PRO 3955WX (16 cores)",
             ram_note="quoted: 'i have 8 channels ddr4 3200 ram but the memory read speed is limited to 85Mb/s instead of the theoretical >200Mb/s because the 16 cores are not enough' (8 x 25.6 GB/s theoretical)",
             note=SWEEP_NOTE + " (PP 4096, TG 1024)"))
# ik_llama.cpp PR 405: 2 x RTX 3090 + EPYC 9654P with 12 channels of DDR5-4800 (12 x 38.4 GB/s), Qwen3-235B-A22B UD-Q4_K_XL,
# FFN of layers 20-93 in RAM, 96 threads; llama-server, 55 tokens after a 7,221-token prompt.
R.append(rec("ik405-epyc9654p-2x3090-qwen3-235b-a22b-q4-eval", IK + "/pull/405",
             "generation eval time =    3061.63 ms /    55 runs   (   55.67 ms per token,    17.96 tokens per second)", "qwen3-235b-a22b", "Q4_K_M",
             "unsloth Qwen3-235B-A22B-128K-UD-Q4_K_XL (tier Q4_K_M)", "2xrtx-3090", "ik_llama.cpp", "cuda", "eval", 17.96, depth=7221 + 27,
             settings={"ngl": 99, "ot": "blk\\.(0|1|2|3|4|5|6|14|15|16)\\.ffn.*=CUDA0,blk\\.(7|8|9|10|11|12|13|17|18|19)\\.ffn.*=CUDA1,blk\\.2[0-9]\\.ffn.*=CPU,blk\\.[3-9][0-9]\\.ffn.*=CPU",
                       "threads": 96, "fa": 1, "rtr": 1, "fmoe": 1, "cache": "q8_0", "ubatch": 1024},
             ram_gbps=460.8, cpu="AMD EPYC 9654P (96 cores)", ram_note="quoted: 'x2 3090 AMD Epyc 9654P + 12 channels of DDR5 4800 MT/s ram' (12 x 38.4 GB/s)",
             note="llama-server print_timings, one request after a 7,221-token prompt; q8_0 cache (the estimate reads an f16 one)"))

# --- Our own llama-bench runs on one NVIDIA H200 (llama.cpp 80fb11ac, CUDA 13; tools/measure-llamacpp/gpu-run.sh,
# rows in tests/data/llamacpp-h200-bench.json): full-size models of published geometries with zero weights, so
# every kernel reads and computes the bytes real weights would. Uniform Q4_K with a Q6_K head matches the
# Q4_K_S tier's size within 1.5%. Scored: full offload only (the machine's RAM bandwidth is not published, so
# its -ngl 40 and -ot exps=CPU rows are not), and no MoE prefill (a zero router sends every token to the same
# experts, which flatters prefill).
H200_BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "llamacpp-h200-bench.json")
H200_GEOMETRY = {"Llama 3.2 1B": "llama-3.2-1b", "Llama 3.1 8B": "llama-3.1-8b", "Llama 3.3 70B": "llama-3.3-70b", "Qwen3-30B-A3B": "qwen3-30b-a3b"}
with open(H200_BENCH) as f:
    h200 = json.load(f)
for b in h200["runs"]:
    decode = b["n_gen"] > 0
    moe = b["geometry_of"] == "Qwen3-30B-A3B"
    if b["n_gpu_layers"] != 99 or b["tensor_buft_overrides"] != "none" or (moe and not decode):
        continue
    test = f"{'tg' if decode else 'pp'}{b['n_gen'] if decode else b['n_prompt']}" + (f"@d{b['n_depth']}" if b["n_depth"] else "")
    R.append(rec(f"vramcalc-h200-{b['model_filename'][:-5]}-fa{b['flash_attn']}-ub{b['n_ubatch']}-{test.replace('@', '-')}",
                 "https://github.com/ggml-org/llama.cpp/tree/80fb11ac73e66d89eae2c6a91d8a77428fa733ed/tools/llama-bench",
                 f"{b['model_type']} | CUDA | ngl 99 | fa {b['flash_attn']} | ub {b['n_ubatch']} | {test} | {b['avg_ts']} ± {b['stddev_ts']}",
                 H200_GEOMETRY[b["geometry_of"]], "Q8_0" if "Q8_0" in b["model_type"] else "Q4_K_S",
                 f"{b['model_filename']} ({b['model_size']} bytes of zero weights)", "h200", "llamacpp", "cuda", test, b["avg_ts"],
                 depth=b["n_depth"], engine_version="80fb11ac", settings={"ngl": 99, "fa": b["flash_attn"], "batch": b["n_batch"], "ubatch": b["n_ubatch"]},
                 note="measured by this project with llama-bench on one H200: tests/data/llamacpp-h200-bench.json, tools/measure-llamacpp/gpu-run.sh"))

# --- llama.cpp with its weights memory-mapped from an SSD on a host whose RAM cannot hold them (issue 18):
# the page cache keeps what RAM holds and the OS reads the rest from the SSD again as tokens need it.
# ssd_gbps is the read rate the source states; page_cache_gb what it shows the page cache (or the
# process) holding. Scored as "decode from SSD", not fitted (docs/performance.md).
R.append(rec("reddit-maverick-ud-iq2m-64gb-3090-ngl3-mmap-ssd-tg128",
             "https://reddit.wdas.io/r/LocalLLaMA/s/DNJXzOHKJV",
             "| llama4 17Bx128E (Maverick) IQ2_M - 2.7 bpw | 143.06 GiB | 400.71 B | CUDA | 3 | tg128 | 3.45 ± 0.26 |",
             "llama-4-maverick", "Llama-4-Maverick-17B-128E-Instruct-UD-Q2_K_XL",
             "Llama-4-Maverick-17B-128E-Instruct-UD-IQ2_M.gguf (143.06 GiB = 153.6 GB; the catalogue's UD-Q2_K_XL build, 153 GB, is the tier of that size)",
             "rtx-3090", "llamacpp", "cuda", "tg128", 3.45,
             settings={"ngl": 3}, ram_gb=64, ram_gbps=51.2,
             ram_note="quoted: 'my 64GB of DDR4 memory + one RTX3090 (24GB)'; two channels of DDR4-3200 assumed (2 x 25.6 GB/s), the speed is not given",
             ssd_gbps=5.91, page_cache_gb=58.95,
             ssd_note="quoted: 'NVMe reads appear to be intense (5-6 GiB/s)' (during prompt processing; 5.5 GiB/s = 5.91 GB/s); `free` after the run: 'Mem: 65523176 8262924 600336 184900 57572992 57260252' (KiB), buff/cache 57,572,992 KiB = 58.95 GB",
             note="r/LocalLLaMA post by u/brown2green, 2025-04-13 ('You can preview quantizations of Llama 4 Maverick 17Bx128E at acceptable speeds even without the necessary memory'), read through a mirror; llama-bench build 06bb53ad (5115), mmap on (the default)"))
R.append(rec("hf-forum-glm-5.1-iq1m-16gb-5600g-mmap-ssd-eval",
             "https://longform.social/post/did:plc:pgryn3ephfd2xgft23qokfzt/3mm7ikjzv4ei2",
             "My generation speed was 0.05 t/s (22.69 seconds per token) and prompt processing was 0.21 t/s.",
             "glm-5.1", "IQ1_M", "GLM-5.1-IQ1_M GGUF, 176GB split files (the IQ1_M tier reads 165.35 GB, 6% under the file)",
             "none", "llamacpp", "cpu", "eval", round(1 / 22.69, 4),
             ram_gb=12, ram_gbps=51.2,
             ram_note="quoted: 'RAM: 16GB DDR4 (4GB allocated to integrated Vega 7 iGPU VRAM, leaving 12GB system RAM)'; two channels of DDR4-3200 assumed (2 x 25.6 GB/s), the speed is not given",
             cpu="AMD Ryzen 5 5600G (6 cores / 12 threads)",
             ssd_gbps=0.65, page_cache_gb=8.34,
             ssd_note="quoted: 'Due to Linux NTFS/FUSE driver overhead on my mounted partition, sequential read was capped at ~650 MB/s' and 'Peak System RAM Usage: Only 8.34 GB!' (the process's resident pages, taken as what the page cache held of the mapping)",
             note="Hugging Face Forums post (2026-05-19) 'I ran GLM-5.1 (754B, 176GB GGUF) on a 16GB RAM APU machine', read through a mirror; llama.cpp built with AVX2, --mmap; 1 / 22.69 s a token"))

for r in R:
    h = hashlib.sha256(r["id"].encode()).digest()
    r["set_aside"] = int.from_bytes(h[:4], "big") % 100 < 30

ids = [r["id"] for r in R]
assert len(ids) == len(set(ids)), "duplicate ids"
out = {
    "what": "Published decode and prefill speeds (llama-bench tg/pp lines and engine logs), each with its source, quote, model, weights, devices, engine and settings; tools/speed-measurements/build.py",
    "set_aside_rule": "set_aside = (first 4 bytes of SHA-256(id), big-endian) % 100 < 30; fixed before any efficiency was fitted",
    "fields": {
        "gpu": "vramcalc --gpu syntax ('none' for CPU only)", "test": "llama-bench test name (tgN, ppN, @dD = D tokens already in the cache) or the engine's figure",
        "depth": "tokens already in the cache when measured", "ram_gbps": "system RAM bandwidth from the channel count and speed (theoretical)",
        "ssd_gbps": "llama.cpp's weights memory-mapped from an SSD on a host whose RAM cannot hold them: the SSD read rate the source states (GB/s); with it, page_cache_gb: what the source shows the page cache (or the process) holding, so the CPU's weights beyond it are read from the SSD again (scored as 'decode from SSD', not fitted)",
        "quant": "vramcalc weights tier: '' = the native checkpoint (gpt-oss: MXFP4 experts, 16-bit rest, as in the F16 GGUF and vLLM); MXFP4 for the 'MXFP4 MoE' GGUFs, whose file size it matches within 2% (they keep attention and head at Q8_0, so per-token reads are above the tier's even spread)",
        "settings": "engine flags: ngl, n_cpu_moe, ot (llama.cpp -ot patterns, comma-separated, read as written), threads, context, batch, ubatch, tp, gpu_experts, sockets (CPU sockets; ram_gbps is one socket's), spec_method / spec_tokens / spec_acceptance / spec_draft (speculative decoding); fa, cache, rtr, fmoe are recorded as the run gave them and not read"},
    "cases": R,
}
path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "speed-measurements.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(len(R), "cases,", sum(r["set_aside"] for r in R), "set aside;", sum(r["kind"] == "prefill" for r in R), "prefill")
