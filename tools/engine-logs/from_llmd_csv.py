#!/usr/bin/env python3
"""Cases from llm-d-planner's vLLM 0.19 accuracy runs (results_raw.csv + the logs it names), in the
shape of engine-logs cases: settings, printed figures and the quoted lines, with the log's URL.

Usage: from_llmd_csv.py GIT_DIR COMMIT > extra_cases.json   (a local copy of jgchn/llm-d-planner)
"""
import csv
import io
import json
import re
import subprocess
import sys

KEYS = re.compile(r"non-default args|Model loading took|Requested memory|Memory profiling takes|Available KV cache memory|"
                  r"GPU KV cache size|Maximum concurrency|Estimated CUDA graph memory|Graph capturing finished")


def show(git_dir, commit, path):
    return subprocess.run(["git", "-C", git_dir, "show", f"{commit}:{path}"], capture_output=True, text=True, check=True).stdout


PROFILE = re.compile(r"Total non KV cache memory: ([\d.]+)GiB; torch peak memory increase: ([\d.]+)GiB; "
                     r"non-torch forward increase memory: ([\d.]+)GiB; weights memory: ([\d.]+)GiB")
LOADED = re.compile(r"Model loading took ([\d.]+) GiB")


def rank0_profile(text):
    """With pipeline stages every rank prints its own profiling line, in no fixed order, and the
    study's table took the first. Rank 0's is the one whose weights are what "Model loading took"
    prints (rank 0's INFO line): (non-KV total, torch peak, non-torch), or None."""
    loaded = LOADED.search(text)
    if not loaded:
        return None
    for m in PROFILE.finditer(text):
        if m.group(4) == loaded.group(1):
            return float(m.group(1)), float(m.group(2)), float(m.group(3))
    return None


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def main():
    git_dir, commit = sys.argv[1], sys.argv[2]
    base = "accuracy/results/v0.19.0"
    rows = csv.DictReader(io.StringIO(show(git_dir, commit, f"{base}/results_raw.csv")))
    out = []
    for r in rows:
        if r["status"] != "ok":
            continue
        log = r["log_file"]
        text = show(git_dir, commit, f"{base}/logs/{log}")
        raw = [re.sub(r"^\(\w+ pid=\d+\) ", "", l) for l in text.splitlines() if KEYS.search(l)][:12]
        settings = {"tensor_parallel_size": int(r["tp"]), "pipeline_parallel_size": int(r["pp"]), "data_parallel_size": int(r["dp"]),
                    "max_model_len": int(r["max_model_len"]), "gpu_memory_utilization": float(r["gpu_memory_utilization"]),
                    "dtype": r["dtype"].replace("torch.", ""), "kv_cache_dtype": r["kv_cache_dtype"],
                    "quantization": None if r["quantization"] == "None" else r["quantization"], "max_num_batched_tokens": 8192,
                    "max_num_seqs": 1024}
        printed = {"total_gpu_memory_gib": num(r["init_total_memory_gib"]), "model_loading_gib": num(r["weight_memory_gib"]),
                   "torch_peak_increase_gib": num(r["activation_memory_gib"]), "non_torch_increase_gib": num(r["non_torch_forward_gib"]),
                   "non_kv_total_gib": num(r["total_non_kv_cache_gib"]), "available_kv_cache_gib": num(r["kv_cache_memory_gib"]),
                   "kv_cache_tokens": num(r["kv_cache_tokens"]), "max_concurrency_x": num(r["max_concurrency"]),
                   "cuda_graph_estimate_gib": num(r["cuda_graph_estimated_gib"])}
        if int(r["pp"]) > 1 and (profile := rank0_profile(text)):
            printed["non_kv_total_gib"], printed["torch_peak_increase_gib"], printed["non_torch_increase_gib"] = profile
        out.append({"id": "vllm019-" + log[:-4].replace("--", "-").replace("---", "-").lower(), "engine": "vllm", "engine_version": "0.19.0",
                    "model_source": r["model"], "hardware": {"gpu": "NVIDIA H100 80GB", "gpu_memory_gib": num(r["init_total_memory_gib"]),
                                                            "count": int(r["tp"]) * int(r["pp"]) * int(r["dp"])},
                    "settings": settings, "printed": {k: v for k, v in printed.items() if v is not None}, "raw": raw,
                    "source": f"https://github.com/jgchn/llm-d-planner/blob/{commit}/{base}/logs/{log}",
                    "notes": "llm-d-planner accuracy study (vLLM 0.19.0 on H100 80GB); figures are rank 0's. max_num_seqs 1024 and "
                             "max_num_batched_tokens 8192 are vLLM's serve defaults on cards of 70 GiB and more (engine/arg_utils.py)."})
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
