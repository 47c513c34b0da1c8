#!/usr/bin/env python3
"""Writes the compact test data of tests/data/ from the collected engine measurements.

Usage: python3 tests/data/extract.py REFERENCE_FOLDER
REFERENCE_FOLDER holds llamacpp/runs.json and llamacpp/gguf/*.gguf (the input of `vramcalc validate`).
Public engine logs live in tests/data/engine-logs.json alone (tools/engine-logs/build_cases.py).
The tests never read REFERENCE_FOLDER: they read what this script writes, and write
the tiny GGUF models themselves from tests/data/llamacpp/tiny_models.json (tests/tiny_gguf.h).
Rerunning it on the same input rewrites the same bytes.
"""
import json
import struct
import sys
from pathlib import Path

LLAMA_CPP_COMMIT = "34af94cd9ab277632e27caeec2d41de2fd091b31"
LLAMA_CPP_SOURCE = "https://github.com/ggml-org/llama.cpp/tree/" + LLAMA_CPP_COMMIT

# GGUF value types (ggml docs/gguf.md) and the names tests/tiny_gguf.h reads.
SCALARS = {4: ("<I", 4, "u32"), 5: ("<i", 4, "i32"), 6: ("<f", 4, "f32"), 7: ("<?", 1, "bool"), 10: ("<Q", 8, "u64")}
STRING, ARRAY = 8, 9


def read_gguf(path):
    """(metadata [(key, type name, value)], tensors [(name, ne, ggml type id)]) of a GGUF v3 file."""
    data = path.read_bytes()
    pos = 0

    def take(fmt, n):
        nonlocal pos
        value = struct.unpack_from(fmt, data, pos)[0]
        pos += n
        return value

    def string():
        nonlocal pos
        n = take("<Q", 8)
        s = data[pos:pos + n].decode("utf-8")
        pos += n
        return s

    def value(t):
        if t in SCALARS:
            fmt, n, _ = SCALARS[t]
            return take(fmt, n)
        if t == STRING:
            return string()
        raise ValueError(f"{path}: value type {t} not handled")

    assert data[:4] == b"GGUF", path
    pos = 4
    assert take("<I", 4) == 3, path
    n_tensors, n_kv = take("<Q", 8), take("<Q", 8)
    metadata = []
    for _ in range(n_kv):
        key, t = string(), take("<I", 4)
        if t == ARRAY:
            et, n = take("<I", 4), take("<Q", 8)
            name = "str" if et == STRING else SCALARS[et][2]
            metadata.append([key, name + "[]", [value(et) for _ in range(n)]])
        else:
            metadata.append([key, "str" if t == STRING else SCALARS[t][2], value(t)])
    tensors = []
    for _ in range(n_tensors):
        name = string()
        ne = [take("<Q", 8) for _ in range(take("<I", 4))]
        tensors.append((name, ne, take("<I", 4)))
        take("<Q", 8)  # offset: the writer recomputes it (32-byte aligned, in order)
    return metadata, tensors


def dump_lines(head, key, records):
    """The object `head` plus `key`: one record per line, so a diff shows which case changed."""
    body = ",\n".join("  " + json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    text = json.dumps(head, ensure_ascii=False, indent=1)[:-2]
    return text + f',\n "{key}": [\n{body}\n ]\n}}\n'


def tiny_models(ref):
    listing = json.loads((ref / "llamacpp/gguf/tensors.json").read_text())
    tokenizer, models = None, {}
    for file, listed in listing.items():
        metadata, tensors = read_gguf(ref / "llamacpp/gguf" / file)
        tok = [m for m in metadata if m[0].startswith("tokenizer.")]
        assert tokenizer in (None, tok), f"{file}: a different tokenizer"
        tokenizer = tok
        first = next(i for i, m in enumerate(metadata) if m[0].startswith("tokenizer."))
        rest = [m for m in metadata if not m[0].startswith("tokenizer.")]
        rest.insert(first, "tokenizer")  # where the shared tokenizer block goes
        assert len(tensors) == listed["n_tensors"]
        rows = []
        for (name, ne, _), t in zip(tensors, listed["tensors"]):
            assert name == t["name"] and ne == t["ne"]
            rows.append([name, ne, t["type"], t["bytes"]])
        models[file] = {"arch": listed["arch"], "file_bytes": listed["file_bytes"], "tensor_bytes": listed["tensor_bytes"],
                        "metadata": rest, "tensors": rows}
    out = {
        "source": "The tiny random-weight GGUF models that llama.cpp was run on (" + LLAMA_CPP_SOURCE + "); "
                  "metadata and tensor table read from each file's header, tensor bytes and file sizes as listed "
                  "with them. Tensor data is not kept: the models' memory depends on the header only.",
        "produced_by": "python3 tests/data/extract.py REFERENCE_FOLDER",
        "format": "metadata: [key, type, value] in file order ('tokenizer' marks where the shared tokenizer block goes); "
                  "tensors: [name, ne (ggml order), ggml type, bytes] in file order, data 32-byte aligned",
    }
    lines = json.dumps(out, ensure_ascii=False, indent=1)[:-2] + ',\n "tokenizer": [\n'
    lines += ",\n".join("  " + json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in tokenizer)
    lines += '\n ],\n "models": {\n'
    lines += ",\n".join(
        f'  "{file}": {{"arch":"{m["arch"]}","file_bytes":{m["file_bytes"]},"tensor_bytes":{m["tensor_bytes"]},\n'
        f'   "metadata":{json.dumps(m["metadata"], separators=(",", ":"))},\n'
        '   "tensors":[\n' + ",\n".join("    " + json.dumps(t, separators=(",", ":")) for t in m["tensors"]) + "]}"
        for file, m in models.items())
    return lines + "\n }\n}\n"


def llamacpp_runs(ref):
    runs = json.loads((ref / "llamacpp/runs.json").read_text())
    keep = []
    for r in runs:
        assert r["llama_cpp_commit"] == LLAMA_CPP_COMMIT
        mb = {k: v for k, v in (r.get("measured_bytes") or {}).items() if k not in ("decode_ok", "n_prompt", "n_generated")}
        rec = {"id": r["id"], "model_file": r["model_file"], "variant": r["variant"], "command": r["command"],
               "settings": r["settings"]}
        if r.get("errors"):
            rec["errors"] = r["errors"]
        if mb:
            rec["measured_bytes"] = mb
        keep.append(rec)
    head = {
        "source": "llama.cpp " + LLAMA_CPP_SOURCE + " (ggml 0.20.1), CPU-only Release build with -DGGML_NATIVE=OFF "
                  "(AVX2, FMA, F16C; no AVX512), OpenMP, GGML_CPU_REPACK=ON; x86-64 Linux, 2 threads",
        "how": "Each record's `command` (llama-completion, run from the folder holding the model) gave the log; the same "
               "arguments through common_init_from_params and llama_get_memory_breakdown() gave `measured_bytes` in exact "
               "bytes per buffer type (`context` = KV cache + recurrent state, `compute` = scheduler buffer). "
               "`errors`: llama.cpp refused to create the context.",
        "produced_by": "python3 tests/data/extract.py REFERENCE_FOLDER (every run; log text and printed MiB figures left out)",
    }
    return dump_lines(head, "runs", keep)



# Published config.json files the family tests read, with where each was copied from.
AICONFIGURATOR = ("https://github.com/ai-dynamo/aiconfigurator/blob/0b077da5e017cb8ceac1ad14e91eb6e26c40207a/"
                  "aic-core/src/aiconfigurator_core/model_configs/")
CONFIGS = {
    "GLM-5.json": "zai-org/GLM-5 config.json (https://huggingface.co/zai-org/GLM-5), values as vendored at "
                  + AICONFIGURATOR + "zai-org--GLM-5_config.json",
    "Falcon-H1-7B-Instruct.PARTIAL.json":
        "tiiuae/Falcon-H1-7B-Instruct config.json (https://huggingface.co/tiiuae/Falcon-H1-7B-Instruct): only the "
        "memory-relevant keys, as quoted in a third-party test file; geometry cross-checked with the size table of "
        "https://huggingface.co/docs/transformers/model_doc/falcon_h1",
}


def configs(ref, out):
    (out / "configs").mkdir(exist_ok=True)
    for file, source in CONFIGS.items():
        config = json.loads((ref / "configs" / file).read_text())
        doc = {"source": source, "produced_by": "python3 tests/data/extract.py REFERENCE_FOLDER", "config": config}
        (out / "configs" / file).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")


def main():
    ref = Path(sys.argv[1])
    out = Path(__file__).resolve().parent
    (out / "llamacpp").mkdir(exist_ok=True)
    (out / "llamacpp/tiny_models.json").write_text(tiny_models(ref))
    (out / "llamacpp/runs.json").write_text(llamacpp_runs(ref))
    configs(ref, out)


if __name__ == "__main__":
    main()
