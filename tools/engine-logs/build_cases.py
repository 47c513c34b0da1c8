#!/usr/bin/env python3
"""Writes tests/data/engine-logs.json: public vLLM / SGLang / llama.cpp start-up logs with the
settings each ran, the figures the engine printed (quoted lines kept), and the model as a
catalogue id or the published config.json values (with their URL).

The set-aside share is fixed before any fitting: a case is set aside when the FNV-1a 32-bit hash
of its id, modulo 10, is below 3 (about 30%; adding cases never moves an existing one).

Usage: build_cases.py MODELS.json CASES.json [MORE_CASES.json ...] > tests/data/engine-logs.json
A CASES.json is a list of cases, or a file in this output's own format (its cases are kept as
they are, so the file can be rebuilt from itself plus new cases).
As first built: build_cases.py tools/engine-logs/models.json REFERENCE_CASES.json \
  <(from_llmd_csv.py LLM_D_PLANNER_GIT_DIR d3121e059da88662db39a926a3ead964be97359b)
(from_llmd_csv.py's cases whose log was already in the reference cases were dropped: same source file.)
Since: build_cases.py tools/engine-logs/models.json tests/data/engine-logs.json NEW_CASES.json (the SGLang logs
added for issue 13 are tools/engine-logs/sglang_cases_2.json, then tools/engine-logs/sglang_cases_3.json, then
tools/engine-logs/sglang_cases_4.json; a case's hardware.link, when given, says how its GPUs are joined: pcie,
nvlink-bridge, nvswitch or xgmi; hardware.vendor "amd" marks AMD GPUs, which run SGLang's ROCm build).
MODELS.json maps each model_source to {"catalogue": id} or {"config": {...}, "config_source": URL}; a "config_note"
says where the values come from when they are not one stored copy of the checkpoint's own config.json.
"""
import json
import sys


def fnv1a(text):
    h = 0x811C9DC5
    for b in text.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def split(case_id):
    return "set-aside" if fnv1a(case_id) % 10 < 3 else "fitted"


def main():
    with open(sys.argv[1]) as f:
        models = json.load(f)
    cases = []
    for path in sys.argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        cases.extend(doc["cases"] if isinstance(doc, dict) else doc)
    out = []
    seen = set()
    for c in cases:
        if c["id"] in seen:
            sys.exit("duplicate case id " + c["id"])
        seen.add(c["id"])
        keep = {k: c[k] for k in ("id", "engine", "engine_version", "model_name", "model_source", "family", "hardware", "settings", "printed", "raw",
                                  "source", "source_thread", "notes") if k in c}
        if isinstance(c.get("model"), str) and "model_name" not in keep:
            keep["model_name"] = c["model"]  # the reference cases' short model name
        if c.get("model_source") in models:
            keep["model"] = models[c["model_source"]]
        elif isinstance(c.get("model"), dict):
            keep["model"] = c["model"]
        keep["set"] = split(c["id"])
        out.append(keep)
    json.dump({"about": " ".join(__doc__.strip().split("\n\n")[0].split()), "split_rule": "FNV-1a 32-bit of the case id, modulo 10, below 3: set aside", "cases": out},
              sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
