#!/usr/bin/env python3
"""Held-out pod lists for the fgd_alloc experiment, by deterministic transformation of
openb_pod_list_default.csv (fixed seed, Python's random.Random; no other input).

usage: bench/make_variants.py OUT_DIR [--trace-dir DIR] [--seed N]

Writes OUT_DIR/openb_pod_list_<variant>.csv (same columns as the source) for:
  share60     60% of GPU pods are shared-GPU pods (k=1, g<1000): random whole k=1 pods take a
              gpu_milli drawn from the source's shared pods.
  multigpu40  multi-GPU pods carry >= 40% of the GPU demand: random k=1 pods take the
              (num_gpu, gpu_milli, cpu_milli, memory_mib) of a random multi-GPU pod of the source.
  gpuspec50   50% of GPU pods are locked to GPU models: a single model (70%, weighted by the
              cluster's GPU count per model) or two models (30%), from the gpu_node list.
  cpu200      twice the CPU-only pods: every CPU-only pod gets a copy named <name>-c2.
Run it, then e.g. build-policy/bench_fgd_alloc OUT_DIR 10 share60,multigpu40,gpuspec50,cpu200
(the node list is read from --trace-dir and copied to OUT_DIR).
"""
import argparse
import csv
import random
import shutil
from collections import Counter
from pathlib import Path


def read(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        return r.fieldnames, [dict(row) for row in r]


def write(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def k(p):
    return int(p["num_gpu"])


def g(p):
    return int(p["gpu_milli"])


def is_share(p):
    return k(p) == 1 and g(p) < 1000


def share60(rows, rng):
    gpu = [p for p in rows if k(p) > 0]
    shares = [g(p) for p in gpu if is_share(p)]
    need = round(0.60 * len(gpu)) - len(shares)
    whole = [p for p in gpu if k(p) == 1 and g(p) == 1000]
    for p in rng.sample(whole, need):
        p["gpu_milli"] = str(rng.choice(shares))
    return rows


def multigpu40(rows, rng):
    multi = [p for p in rows if k(p) > 1]
    single = [p for p in rows if k(p) == 1]
    rng.shuffle(single)
    total = sum(k(p) * g(p) for p in rows)
    multi_d = sum(k(p) * g(p) for p in multi)
    for p in single:
        if multi_d >= 0.40 * total:
            break
        t = rng.choice(multi)
        total -= k(p) * g(p)
        for f in ("num_gpu", "gpu_milli", "cpu_milli", "memory_mib"):
            p[f] = t[f]
        total += k(p) * g(p)
        multi_d += k(p) * g(p)
    return rows


def gpuspec50(rows, rng, node_rows):
    gpus = Counter()
    for n in node_rows:
        gpus[n["model"]] += int(n["gpu"])
    models = sorted(gpus)
    weights = [gpus[m] for m in models]
    gpu = [p for p in rows if k(p) > 0]
    for p in rng.sample(gpu, round(0.50 * len(gpu))):
        if rng.random() < 0.70:
            p["gpu_spec"] = rng.choices(models, weights)[0]
        else:
            a = rng.choices(models, weights)[0]
            b = rng.choice([m for m in models if m != a])
            p["gpu_spec"] = "|".join(sorted([a, b]))
    return rows


def cpu200(rows, rng):
    extra = []
    for p in rows:
        if k(p) == 0:
            c = dict(p)
            c["name"] = p["name"] + "-c2"
            extra.append(c)
    return rows + extra


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--trace-dir", default=str(Path(__file__).resolve().parents[2] / "shared/data/traces/alibaba-gpu-v2023"))
    ap.add_argument("--seed", type=int, default=20240601)
    a = ap.parse_args()
    src, out = Path(a.trace_dir), Path(a.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fields, _ = read(src / "openb_pod_list_default.csv")
    _, node_rows = read(src / "openb_node_list_gpu_node.csv")
    shutil.copyfile(src / "openb_node_list_gpu_node.csv", out / "openb_node_list_gpu_node.csv")
    makers = {
        "share60": share60,
        "multigpu40": multigpu40,
        "gpuspec50": lambda rows, rng: gpuspec50(rows, rng, node_rows),
        "cpu200": cpu200,
    }
    for i, (name, make) in enumerate(makers.items()):
        _, rows = read(src / "openb_pod_list_default.csv")
        rows = make(rows, random.Random(a.seed * 100 + i))
        write(out / f"openb_pod_list_{name}.csv", fields, rows)
        gpu = [p for p in rows if k(p) > 0]
        demand = sum(k(p) * g(p) for p in rows)
        print(f"{name}: {len(rows)} pods, {sum(map(is_share, gpu))}/{len(gpu)} shared, "
              f"multi-GPU demand {sum(k(p) * g(p) for p in gpu if k(p) > 1) / demand:.0%}, "
              f"{sum(1 for p in gpu if p['gpu_spec'])} model-locked, demand {demand / 6212000:.0%} of the cluster")


if __name__ == "__main__":
    main()
