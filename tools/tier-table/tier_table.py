#!/usr/bin/env python3
"""Synthesized llama.cpp tiers against the catalogue's published GGUF files (docs/accuracy.md,
"Synthesized llama.cpp tiers against published files").

For every ladder file whose name gives a standard tier (custom mixes such as UD-, _XL, APEX left
out), prints: the file's bytes, the every-parameter-at-the-tier's-bits figure (min(native, params x
bits / 8), the rule before quantize exceptions) and vramcalc's weights figure, each as error against
the file. Run from the repository root after building: python3 tools/tier-table/tier_table.py [build/vramcalc]
"""
import glob
import json
import re
import subprocess
import sys
from fractions import Fraction

vramcalc = sys.argv[1] if len(sys.argv) > 1 else "build/vramcalc"
formats = json.load(open("data/quant_formats.json"))
bits = {t["name"]: Fraction(t["block_bytes"] * 8, t["block_elems"]) for t in formats["types"]}
bits.update({m["name"]: Fraction(m["bits_per_weight"]) for m in formats["mixes"]})
tier_in_name = re.compile(r"(IQ\d_(?:XXS|XS|S|M|NL)|Q\d_K_[SML]|Q\d_K|Q\d_0)(?![A-Z0-9])")

print("| model | published file | bytes (GB) | every parameter at the tier | vramcalc |")
print("|---|---|---|---|---|")
for facts in sorted(glob.glob("data/models/*/facts.json")):
    model = facts.split("/")[2]
    for build in json.load(open(facts)).get("builds", []):
        name = build["name"]
        if re.search(r"UD-|_XL|APEX|qat|QAT", name) and "qat-Q4_0" not in name:
            continue
        m = tier_in_name.search(name.upper())
        if not m or m.group(1) not in bits:
            continue
        tier = m.group(1)
        out = subprocess.run([vramcalc, "estimate", model, "--quant", tier, "--json"], capture_output=True, text=True, check=True)
        j = json.loads(out.stdout)
        params = j["model"]["params"]["total"]
        plain = min(j["model"]["native_checkpoint"]["bytes"], round(params * bits[tier] / 8))
        ours = j["weights"]["bytes"]
        pub = build["bytes"]
        print(f"| {model} | {name} | {pub / 1e9:.3f} | {(plain / pub - 1) * 100:+.1f}% | {(ours / pub - 1) * 100:+.1f}% |")
