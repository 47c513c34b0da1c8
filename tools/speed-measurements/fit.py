#!/usr/bin/env python3
"""Fits data/speed_efficiency.json to the FITTED share of tests/data/speed-measurements.json.

    build/vramcalc validate --speed tests/data/speed-measurements.json --json > /tmp/speed.json
    python3 tools/speed-measurements/fit.py /tmp/speed.json   # rewrites data/speed_efficiency.json
    (--dry-run: print the fitted share's accuracy only; --fixed-layer-cost: one cost per layer on
    every GPU, the model before issue 18's scaling; --refit-cpu-layer: llama.cpp's CPU cost per
    layer alone; --refit-cpu-threads: llama.cpp's CPU decode from each run's threads, over the
    fitted runs whose thread count the measurements record; --ranges: only the printed ranges, the
    10th-90th percentile of measured / estimate over the fitted runs of the model as it stands,
    nothing refitted, with how many set-aside runs each range holds, and the rule engine's ranges:
    the 10th-90th percentile of measured / its bound over the same fitted runs)

The set-aside share (fixed by the hash rule in build.py) is never read here. The model is the one
src/speed/speed_estimate.cpp computes:

  decode  s = sum_m read_m / (bandwidth_m * share[engine, backend, memory])
              + (layers_m * layer_us[engine, backend] + moe_layers_m * moe_layer_us[engine]) * speed_m
              speed_m = (1 - c) + c * reference_tflops / tflops_m on a GPU (1 on the CPU): the part c
              of the fixed cost per layer is small kernels that run faster on a faster GPU, the rest
              launch and synchronisation, which do not (reference: the RTX 4090's dense BF16)
              + handoffs * handoff_us + (TP > 1) * layers * tp_allreduce_us
              (llama.cpp's CPU with the run's threads known: max(read / (bandwidth * share),
              weights_read / (threads * cpu_thread_gbps)) + (layers + moe_layers) * cpu_threaded_layer_us)
  prefill s = sum_gpu flops / (tflops * compute_share[engine, backend])
              + RAM-held bytes / (PCIe * pcie_share) / ubatch  +  CPU flops / (RAM bytes/s * cpu_flops_per_ram_byte)
              (or CPU flops / (threads * cpu_prefill_gflops_per_thread) where both are known;
              --refit-cpu-prefill-per-thread fits that rate on the fitted CPU-only runs with threads)

Parameters are found by minimising the squared log error (Nelder-Mead, pure Python) with a weak
pull toward round defaults so a parameter few runs inform stays plausible. The printed range is
the 10th-90th percentile of measured / estimate over the fitted runs of each group.
"""
import json
import math
import os
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def nelder_mead(f, x0, step=0.3, iters=4000):
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step if j == i else 0) for j in range(n)] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        cen = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        refl = [cen[j] + (cen[j] - pts[-1][j]) for j in range(n)]
        fr = f(refl)
        if fr < vals[0]:
            exp = [cen[j] + 2 * (cen[j] - pts[-1][j]) for j in range(n)]
            fe = f(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = [cen[j] + 0.5 * (pts[-1][j] - cen[j]) for j in range(n)]
            fc = f(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = f(pts[i])
        if max(vals) - min(vals) < 1e-10:
            break
    i = min(range(n + 1), key=lambda k: vals[k])
    return pts[i]


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return 1.0
    k = (len(xs) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def current_params(names, doc, default):
    """The parameters data/speed_efficiency.json holds now, in fit order (log scale)."""
    rows = doc["decode"]
    def row(e, b, m=None):
        for r in rows:
            if r["engine"] == e and r["backend"] == b and (m is None or r["memory"] == m):
                return r
        return None
    x = []
    for n in names:
        v = None
        if n[0] == "share" and row(n[1], n[2], n[3]):
            v = row(n[1], n[2], n[3])["bandwidth_share"]
        elif n[0] == "layer" and row(n[1], n[2]):
            v = row(n[1], n[2])["layer_us"]
        elif n[0] == "moe":
            v = next((r["moe_layer_us"] for r in rows if r["engine"] == n[1]), None)
        elif n[0] == "handoff":
            v = doc["handoff_us"]
        elif n[0] == "tp":
            v = doc["tp_allreduce_us"]
        x.append(math.log(v if v else default[n[0]]))
    return x


def refit_cpu_layer(names, decode, decode_seconds, params, doc, default):
    """--refit-cpu-layer: only llama.cpp's fixed cost per layer on the CPU, on the fitted share, every
    other constant as data/speed_efficiency.json holds it; rewrites that one value."""
    key = ("layer", "llamacpp", "cpu")
    i = names.index(key)
    x = current_params(names, doc, default)
    runs = [r for r in decode if any(m["backend"] == "cpu" and (m["layers"] or m["moe_layers"]) for m in r["reads"]["memories"]) and r["reads"]["engine"] == "llamacpp"]

    def loss(v):
        y = list(x)
        y[i] = v
        p = params(y)
        return sum((math.log(1.0 / decode_seconds(r, p)) - math.log(r["measured_tok_s"])) ** 2 for r in runs)

    def show(label, v):
        y = list(x)
        y[i] = v
        p = params(y)
        for r in runs:
            print(f"  {label} {r['id']}: measured / estimate {r['measured_tok_s'] * decode_seconds(r, p):.2f}", file=sys.stderr)

    before = x[i]
    # Golden-section search on log(layer_us) over 0.1 us to 10 ms: one parameter, no pull to a default.
    lo, hi = math.log(0.1), math.log(10000.0)
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    for _ in range(200):
        if loss(a) < loss(b):
            hi = b
        else:
            lo = a
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    after = (lo + hi) / 2
    print(f"llamacpp cpu layer_us: {math.exp(before):.1f} -> {math.exp(after):.1f} over {len(runs)} fitted runs "
          f"(squared log error {loss(before):.4f} -> {loss(after):.4f})", file=sys.stderr)
    show("before", before)
    show("after ", after)
    if "--dry-run" in sys.argv:
        return
    path = os.path.join(ROOT, "data", "speed_efficiency.json")
    for r in doc["decode"]:
        if r["engine"] == "llamacpp" and r["backend"] == "cpu":
            r["layer_us"] = round(math.exp(after), 1)
            r["source"] += f"; layer_us refitted alone (tools/speed-measurements/fit.py --refit-cpu-layer) on its {len(runs)} fitted-share runs"
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def refit_cpu_threads(decode, decode_seconds, params, x, doc, threaded):
    """--refit-cpu-threads: llama.cpp's CPU decode where the run's threads are known, as the longer of
    the RAM read and the weights at a rate per thread, plus a cost per layer and MoE layer (ggml's
    barriers after every node), fitted alone (Nelder-Mead on the two logs, no pull to a default) on
    the fitted share's runs that record their threads; every other constant as
    data/speed_efficiency.json holds it. Rewrites the two values unless --dry-run."""
    runs = [r for r in decode if r["reads"].get("threads") and r["reads"]["engine"] == "llamacpp"
            and any(m["backend"] == "cpu" and (m["layers"] or m["moe_layers"]) for m in r["reads"]["memories"])]
    print(f"fitted-share decode runs with CPU layers and a recorded thread count: {len(runs)}", file=sys.stderr)
    if not runs:
        return
    p = params(x)

    def err(v):
        threaded[0], threaded[1] = (math.exp(v[0]), math.exp(v[1])) if v else (0.0, 0.0)
        e = sum((math.log(1.0 / decode_seconds(r, p)) - math.log(r["measured_tok_s"])) ** 2 for r in runs)
        return e

    before = err(None)
    ratios_before = [r["measured_tok_s"] * decode_seconds(r, p) for r in runs]
    best = nelder_mead(err, [math.log(10.0), math.log(100.0)], step=0.5)
    after = err(best)
    print(f"cpu_thread_gbps {math.exp(best[0]):.2f}, cpu_threaded_layer_us {math.exp(best[1]):.1f} "
          f"(squared log error {before:.4f} with the row's constants -> {after:.4f})", file=sys.stderr)
    for r, old in zip(runs, ratios_before):
        print(f"  {r['id']} ({r['reads']['threads']} threads): measured / estimate {old:.2f} -> {r['measured_tok_s'] * decode_seconds(r, p):.2f}", file=sys.stderr)
    if "--dry-run" in sys.argv:
        return
    doc["cpu_thread_gbps"] = round(math.exp(best[0]), 2)
    doc["cpu_threaded_layer_us"] = round(math.exp(best[1]), 1)
    doc["cpu_threads_source"] = (f"llama.cpp's CPU decode where a run's threads are known: max(RAM read, weights / (threads x cpu_thread_gbps)) "
                                 f"+ (layers + MoE layers) x cpu_threaded_layer_us; tools/speed-measurements/fit.py --refit-cpu-threads on the "
                                 f"fitted share's {len(runs)} decode runs with CPU layers and recorded threads (docs/performance.md)")
    with open(os.path.join(ROOT, "data", "speed_efficiency.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def refit_cpu_prefill_per_thread(prefill, doc):
    """--refit-cpu-prefill-per-thread: CPU-only prefill as each thread's GFLOP/s times the threads, on
    the fitted share's CPU-only prefill runs that record their threads. With the CPU the only device,
    s/token = flops / (threads * rate), so the least-squares log fit is the geometric mean of
    flops * measured / threads over the runs. Rewrites the value unless --dry-run."""
    runs = [r for r in prefill if r["reads"].get("threads") and all(m["backend"] == "cpu" for m in r["reads"]["memories"])]
    print(f"fitted-share CPU-only prefill runs with a recorded thread count: {len(runs)}", file=sys.stderr)
    if not runs:
        return
    rates = [sum(m["prefill_flops"] for m in r["reads"]["memories"]) * r["measured_tok_s"] / r["reads"]["threads"] / 1e9 for r in runs]
    g = math.exp(sum(math.log(v) for v in rates) / len(rates))
    for r, v in zip(runs, rates):
        print(f"  {r['id']} ({r['reads']['threads']} threads): {v:.1f} GFLOP/s a thread", file=sys.stderr)
    print(f"cpu_prefill_gflops_per_thread: {g:.1f}", file=sys.stderr)
    if "--dry-run" in sys.argv:
        return
    doc["cpu_prefill_gflops_per_thread"] = round(g, 1)
    with open(os.path.join(ROOT, "data", "speed_efficiency.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def ranges_only(rows):
    """The printed ranges from the estimates as they stand: p10-p90 of measured / estimate over the
    fitted runs of each group (nothing refitted); the set-aside runs are only counted, to report how
    many fall inside."""
    path = os.path.join(ROOT, "data", "speed_efficiency.json")
    doc = json.load(open(path))
    for group, key in (("decode on device", "decode_on_device"), ("decode offload", "decode_offload"), ("prefill", "prefill")):
        fitted = [r["ratio"] for r in rows if r["group"] == group and r["part"] == "fitted" and r.get("ratio")]
        aside = [r["ratio"] for r in rows if r["group"] == group and r["part"] == "set-aside" and r.get("ratio")]
        low, high = round(min(pct(fitted, 0.1), 1.0), 2), round(max(pct(fitted, 0.9), 1.0), 2)
        old = doc["ranges"][key]
        inside = lambda xs, lo, hi: sum(lo <= x <= hi for x in xs)
        print(f"{group}: {old['low']}-{old['high']} -> {low}-{high}; fitted inside {inside(fitted, old['low'], old['high'])} -> "
              f"{inside(fitted, low, high)} of {len(fitted)}, set aside inside {inside(aside, old['low'], old['high'])} -> {inside(aside, low, high)} of {len(aside)}",
              file=sys.stderr)
        doc["ranges"][key] = {"low": low, "high": high,
                              "source": f"10th-90th percentile of measured / estimate over {len(fitted)} fitted runs, the model as it stands (docs/performance.md)"}
    # The rule engine's range: the share of its bound (bandwidth, or compute on the GPUs) measured
    # runs reach, whatever --efficiency says (src/speed/speed_bound.h).
    doc.setdefault("rule_ranges", {})
    for group, key in (("decode on device", "decode_on_device"), ("decode offload", "decode_offload"), ("prefill", "prefill")):
        fitted = [r["bound_share"] for r in rows if r["group"] == group and r["part"] == "fitted" and r.get("bound_share")]
        aside = [r["bound_share"] for r in rows if r["group"] == group and r["part"] == "set-aside" and r.get("bound_share")]
        low, high = round(pct(fitted, 0.1), 2), round(pct(fitted, 0.9), 2)
        inside = sum(low <= x <= high for x in aside)
        print(f"rule, {group}: share of the bound {low}-{high} (median {pct(fitted, 0.5):.2f}) over {len(fitted)} fitted runs; set aside inside {inside} of {len(aside)}",
              file=sys.stderr)
        doc["rule_ranges"][key] = {"low": low, "high": high,
                                   "source": f"10th-90th percentile of measured / bound over {len(fitted)} fitted runs (docs/performance.md, 'The rule engine's range')"}
    if "--dry-run" in sys.argv:
        return
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    rows = json.load(open(sys.argv[1]))["rows"]
    if "--ranges" in sys.argv:
        ranges_only(rows)
        return
    fitted = [r for r in rows if r["part"] == "fitted" and r["reads"]]
    # Runs paged in from an SSD ("decode from SSD") are scored, not fitted: the SSD's rate is the
    # source's, and the page cache's locality is not modelled (docs/performance.md).
    decode = [r for r in fitted if r["group"] in ("decode on device", "decode offload")]
    prefill = [r for r in fitted if r["group"] == "prefill"]

    # Decode parameters.
    share_keys = sorted({(r["reads"]["engine"], m["backend"], m["memory"]) for r in decode for m in r["reads"]["memories"] if m["weights_read"] + m["cache_read"] > 0})
    layer_keys = sorted({(r["reads"]["engine"], m["backend"]) for r in decode for m in r["reads"]["memories"] if m["layers"] or m["moe_layers"]})
    moe_keys = sorted({r["reads"]["engine"] for r in decode})
    names = [("share",) + k for k in share_keys] + [("layer",) + k for k in layer_keys] + [("moe", k) for k in moe_keys] + [("handoff",), ("tp",)]
    default = {"share": 0.7, "layer": 10.0, "moe": 20.0, "handoff": 50.0, "tp": 20.0}
    doc0 = json.load(open(os.path.join(ROOT, "data", "speed_efficiency.json")))
    ref_tflops = doc0["layer_reference_tflops"]
    layer_c = [0.0]  # the compute share of the per-layer costs, scanned below
    # llama.cpp's CPU from the run's threads: GB/s a thread and us a layer (0: off, the row's constants).
    threaded = [doc0.get("cpu_thread_gbps", 0.0), doc0.get("cpu_threaded_layer_us", 0.0)]
    x0 = [math.log(default[n[0]]) for n in names]

    def params(x):
        return {n: math.exp(v) for n, v in zip(names, x)}

    def decode_seconds(r, p):
        t = r["reads"]
        s = 0.0
        for m in t["memories"]:
            read = m["weights_read"] + m["cache_read"]
            move = read / (m["bandwidth"] * min(p[("share", t["engine"], m["backend"], m["memory"])], 1.0)) if read else 0.0
            if m["backend"] == "cpu" and t["engine"] == "llamacpp" and t.get("threads") and threaded[0] > 0:
                s += max(move, m["weights_read"] / (t["threads"] * threaded[0] * 1e9)) + (m["layers"] + m["moe_layers"]) * threaded[1] * 1e-6
                continue
            s += move
            if m["layers"] or m["moe_layers"]:
                c = layer_c[0]
                speed = (1 - c) + c * ref_tflops / m["tflops"] if m["backend"] != "cpu" and m["tflops"] > 0 else 1.0
                s += (m["layers"] * p[("layer", t["engine"], m["backend"])] + m["moe_layers"] * p[("moe", t["engine"])]) * speed * 1e-6
        s += t["handoffs"] * p[("handoff",)] * 1e-6
        if t["tensor_parallel"] > 1:
            s += t["layers"] * p[("tp",)] * 1e-6
        return s

    def loss_decode(x):
        p = params(x)
        err = sum((math.log(1.0 / decode_seconds(r, p)) - math.log(r["measured_tok_s"])) ** 2 for r in decode)
        prior = sum(0.02 * (v - math.log(default[n[0]])) ** 2 for n, v in zip(names, x))
        return err + prior

    if "--refit-cpu-prefill-per-thread" in sys.argv:
        refit_cpu_prefill_per_thread(prefill, doc0)
        return
    if "--refit-cpu-threads" in sys.argv:
        refit_cpu_threads(decode, decode_seconds, params, current_params(names, doc0, default), doc0, threaded)
        return
    if "--refit-cpu-layer" in sys.argv:
        refit_cpu_layer(names, decode, decode_seconds, params, doc0, default)
        return

    # Nelder-Mead restarted from its own best point until the loss stops falling (25-odd parameters).
    def minimise(x):
        best = float("inf")
        for _ in range(8):
            x = nelder_mead(loss_decode, x)
            if loss_decode(x) > best - 1e-6:
                break
            best = loss_decode(x)
        return x, best

    # The compute share c of the per-layer costs is scanned (the rest refitted from the c = 0 optimum
    # for each), so the fit cannot stall on it; --fixed-layer-cost keeps c = 0.
    x, best = minimise(x0)
    c_best = 0.0
    print(f"decode loss {best:.4f} at c = 0 over {len(decode)} fitted runs", file=sys.stderr)
    if "--fixed-layer-cost" not in sys.argv:
        x_fixed = x
        for c in (0.25, 0.5, 0.75, 1.0):
            layer_c[0] = c
            xc, lc = minimise(x_fixed)
            print(f"decode loss {lc:.4f} at c = {c}", file=sys.stderr)
            if lc < best:
                x, best, c_best = xc, lc, c
    layer_c[0] = c_best
    pd = params(x)

    # Prefill parameters.
    comp_keys = sorted({(r["reads"]["engine"], m["backend"], m["memory"]) for r in prefill for m in r["reads"]["memories"] if m["prefill_flops"] > 0 and m["backend"] != "cpu"})
    pnames = [("compute",) + k for k in comp_keys] + [("pcie",), ("cpu",)]
    pdef = {"compute": 0.4, "pcie": 0.8, "cpu": 20.0}
    px0 = [math.log(pdef[n[0]]) for n in pnames]

    def pparams(x):
        return {n: math.exp(v) for n, v in zip(pnames, x)}

    def prefill_seconds(r, p):
        t = r["reads"]
        s, ram_held, link = 0.0, 0, 0
        for m in t["memories"]:
            if m["backend"] == "cpu":
                ram_held += m["weights_held"]
            elif not link:
                link = m["host_link"]
            if m["prefill_flops"] <= 0:
                continue
            if m["backend"] == "cpu" and t.get("threads") and doc0.get("cpu_prefill_gflops_per_thread"):
                s += m["prefill_flops"] / (t["threads"] * doc0["cpu_prefill_gflops_per_thread"] * 1e9)
            elif m["backend"] == "cpu":
                s += m["prefill_flops"] / (m["bandwidth"] * p[("cpu",)])
            else:
                s += m["prefill_flops"] / (m["tflops"] * 1e12 * min(p[("compute", t["engine"], m["backend"], m["memory"])], 4.0))
        if t["engine"] == "llamacpp" and t["offload"] and ram_held and link:
            s += ram_held / (link * min(p[("pcie",)], 1.0)) / t["ubatch"]
        return s

    def loss_prefill(x):
        p = pparams(x)
        err = sum((math.log(1.0 / prefill_seconds(r, p)) - math.log(r["measured_tok_s"])) ** 2 for r in prefill)
        return err + sum(0.05 * (v - math.log(pdef[n[0]])) ** 2 for n, v in zip(pnames, x))

    pp = pparams(nelder_mead(loss_prefill, px0))

    def ratios(rs, sec):
        return [r["measured_tok_s"] * sec(r) for r in rs]

    def rng(rs, sec):
        xs = ratios(rs, sec)
        return {"low": round(min(pct(xs, 0.1), 1.0), 2), "high": round(max(pct(xs, 0.9), 1.0), 2),
                "source": f"10th-90th percentile of measured / estimate over {len(xs)} fitted runs"}

    on = [r for r in decode if r["group"] == "decode on device"]
    off = [r for r in decode if r["group"] == "decode offload"]
    cnt = lambda pred: sum(1 for r in decode if pred(r))
    src = "fitted to {} runs of tests/data/speed-measurements.json (docs/performance.md)"

    dec_rows = []
    for k in share_keys:
        e, b, m = k
        n = cnt(lambda r: r["reads"]["engine"] == e and any(x["backend"] == b and x["memory"] == m for x in r["reads"]["memories"]))
        dec_rows.append({"engine": e, "backend": b, "memory": m, "bandwidth_share": round(min(pd[("share",) + k], 1.0), 3),
                         "layer_us": round(pd.get(("layer", e, b), default["layer"]), 1), "moe_layer_us": round(pd.get(("moe", e), default["moe"]), 1), "source": src.format(n)})
    # Fallbacks: per engine, then everything, at the median of the fitted rows.
    med = lambda xs: round(pct(xs, 0.5), 3)
    for e in moe_keys:
        rs = [d for d in dec_rows if d["engine"] == e]
        dec_rows.append({"engine": e, "backend": "*", "memory": "*", "bandwidth_share": med([d["bandwidth_share"] for d in rs]), "layer_us": med([d["layer_us"] for d in rs]),
                         "moe_layer_us": med([d["moe_layer_us"] for d in rs]), "source": "median of this engine's fitted rows"})
    dec_rows.append({"engine": "*", "backend": "*", "memory": "*", "bandwidth_share": med([d["bandwidth_share"] for d in dec_rows]),
                     "layer_us": med([d["layer_us"] for d in dec_rows]), "moe_layer_us": med([d["moe_layer_us"] for d in dec_rows]), "source": "median of the fitted rows"})
    pre_rows = []
    for k in comp_keys:
        n = sum(1 for r in prefill if r["reads"]["engine"] == k[0] and any(x["backend"] == k[1] and x["memory"] == k[2] for x in r["reads"]["memories"]))
        pre_rows.append({"engine": k[0], "backend": k[1], "memory": k[2], "compute_share": round(min(pp[("compute",) + k], 4.0), 3), "source": src.format(n)})
    pre_rows.append({"engine": "*", "backend": "*", "memory": "*", "compute_share": med([d["compute_share"] for d in pre_rows]) if pre_rows else 0.4, "source": "median of the fitted rows"})

    # The table validate prints, for the fitted share only (the set-aside share is scored by validate).
    for g in ("decode on device", "decode offload"):
        xs = [r["measured_tok_s"] * decode_seconds(r, pd) for r in decode if r["group"] == g]
        band = (0.8, 1.25) if g == "decode on device" else (0.7, 1.4)
        print(f"{g}, fitted: {sum(band[0] <= x <= band[1] for x in xs)} of {len(xs)} within, median {pct(xs, 0.5):.2f}", file=sys.stderr)
    if "--dry-run" in sys.argv:
        return
    path = os.path.join(ROOT, "data", "speed_efficiency.json")
    doc = json.load(open(path))
    doc["layer_compute_share"] = c_best
    doc["layer_compute_share_source"] = (doc.get("layer_compute_share_source", "").split("; tools/")[0] +
                                         f"; tools/speed-measurements/fit.py scanned 0, 0.25, 0.5, 0.75 and 1 on the fitted share of {len(rows)} runs: {c_best} fits best (docs/performance.md)")
    doc["decode"] = dec_rows
    doc["prefill"] = pre_rows
    doc["handoff_us"] = round(pd[("handoff",)], 1)
    doc["tp_allreduce_us"] = round(pd[("tp",)], 1)
    doc["pcie_share"] = round(min(pp[("pcie",)], 1.0), 3)
    doc["cpu_flops_per_ram_byte"] = round(pp[("cpu",)], 2)
    doc["ranges"] = {"decode_on_device": rng(on, lambda r: decode_seconds(r, pd)), "decode_offload": rng(off, lambda r: decode_seconds(r, pd)),
                     "prefill": rng(prefill, lambda r: prefill_seconds(r, pp))}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
