#!/usr/bin/env python3
"""Held-out pod lists for the fgd_alloc experiment, by deterministic transformation of
openb_pod_list_default.csv (fixed seed, Python's random.Random; no other input).

usage: bench/make_variants.py OUT_DIR [--trace-dir DIR] [--seed N] [--fresh | ... | --fresh5]

Default set (seed 20240601) writes OUT_DIR/openb_pod_list_<variant>.csv (same columns as the
source) for:
  share60     60% of GPU pods are shared-GPU pods (k=1, g<1000): random whole k=1 pods take a
              gpu_milli drawn from the source's shared pods.
  multigpu40  multi-GPU pods carry >= 40% of the GPU demand: random k=1 pods take the
              (num_gpu, gpu_milli, cpu_milli, memory_mib) of a random multi-GPU pod of the source.
  gpuspec50   50% of GPU pods are locked to GPU models: a single model (70%, weighted by the
              cluster's GPU count per model) or two models (30%), from the gpu_node list.
  cpu200      twice the CPU-only pods: every CPU-only pod gets a copy named <name>-c2.
--fresh (seed 20261129 unless --seed is given) writes a second, disjoint held-out set instead,
made after fgdpack's model-aware design was frozen (docs/benchmarks.md):
  share80        80% of GPU pods are shared-GPU pods (as share60).
  gpuspec30x     30% of GPU pods locked to 1-3 models drawn uniformly (not by GPU count) from the
                 models other than the largest one (G2 here), so the small models are the scarce ones.
  mgpu30share55  multi-GPU pods carry >= 30% of the GPU demand, then 55% of GPU pods are shared.
  spec40cpu150   40% of GPU pods locked to 2 or 3 models drawn uniformly from all models, and one
                 CPU-only pod in two (at random) gets a copy named <name>-c2.
--fresh2 (seed 20261130 unless --seed is given) writes a third set, made after fgdpack version 3
was frozen (docs/benchmarks.md); each transformation differs in kind or degree from the above:
  share70spec30  70% of GPU pods are shared, then 30% of GPU pods (shared or not) are locked to one
                 model drawn by GPU count (50%) or to two or three models drawn uniformly (50%).
  multigpu50     multi-GPU pods carry >= 50% of the GPU demand.
  cpu300         three times the CPU-only pods: copies <name>-c2 and <name>-c3 of each.
  spec60two      60% of GPU pods locked to two models only, drawn once uniformly from the models
                 with at least 100 GPUs other than the largest: each locked pod names one of the
                 two (40% each) or both (20%).
--fresh3 (seed 20261201 unless --seed is given) writes a fourth set, made after fgdpack version 4
was frozen (docs/benchmarks.md); each differs in kind or degree from all of the above:
  cpu500         five times the CPU-only pods: copies <name>-c2 .. <name>-c5 of each.
  share60cpu250  60% of GPU pods are shared (as share60), then every CPU-only pod gets a copy
                 <name>-c2 and, one in two at random, a second copy <name>-c3.
  spec20cpu200   20% of GPU pods locked to one model drawn by GPU count (70%) or two models (30%),
                 as gpuspec50, then every CPU-only pod gets a copy <name>-c2.
  mgpu35cpu350   multi-GPU pods carry >= 35% of the GPU demand, then every CPU-only pod gets
                 copies <name>-c2, <name>-c3 and, one in two at random, <name>-c4.
--fresh4 (seed 20261202 unless --seed is given) writes a fifth set, made after fgdauto was frozen
(docs/benchmarks.md); each differs in kind or degree from all of the above:
  gpucpu150      every GPU pod asks for 1.5 times its CPU (rounded down to a whole milli).
  mem200         every pod asks for twice its memory (memory is checked only by the filter).
  share90cpu150  90% of GPU pods are shared (as share60), then one CPU-only pod in two (at random)
                 gets a copy <name>-c2.
  cpu025mgpu25   three CPU-only pods in four (at random) are removed, then multi-GPU pods carry
                 >= 25% of the GPU demand.
  spec25share50cpu200  50% of GPU pods are shared, then 25% of GPU pods are locked as gpuspec50,
                 then every CPU-only pod gets a copy <name>-c2.
--fresh5 (seed 20261203 unless --seed is given) writes a sixth set, made after fgdauto version 2
was frozen (docs/benchmarks.md); each differs in kind or degree from all of the above:
  cpuhalf        every pod asks for half its CPU (rounded down).
  share30        only 30% of GPU pods are shared: random shared pods become whole-GPU pods (g=1000).
  spec70one      70% of GPU pods locked to a single model drawn by GPU count.
  shareghalf     every shared pod asks for half its gpu_milli (rounded down, at least 1).
  mem150cpu200share70  every pod asks for 1.5 times its memory, 70% of GPU pods are shared, then
                 every CPU-only pod gets a copy <name>-c2.
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


def share(rows, rng, frac):
    gpu = [p for p in rows if k(p) > 0]
    shares = [g(p) for p in gpu if is_share(p)]
    need = max(0, round(frac * len(gpu)) - len(shares))
    whole = [p for p in gpu if k(p) == 1 and g(p) == 1000]
    for p in rng.sample(whole, min(need, len(whole))):
        p["gpu_milli"] = str(rng.choice(shares))
    return rows


def multigpu(rows, rng, frac):
    multi = [p for p in rows if k(p) > 1]
    single = [p for p in rows if k(p) == 1]
    rng.shuffle(single)
    total = sum(k(p) * g(p) for p in rows)
    multi_d = sum(k(p) * g(p) for p in multi)
    for p in single:
        if multi_d >= frac * total:
            break
        t = rng.choice(multi)
        total -= k(p) * g(p)
        for f in ("num_gpu", "gpu_milli", "cpu_milli", "memory_mib"):
            p[f] = t[f]
        total += k(p) * g(p)
        multi_d += k(p) * g(p)
    return rows


def gpu_count_by_model(node_rows):
    gpus = Counter()
    for n in node_rows:
        gpus[n["model"]] += int(n["gpu"])
    return gpus


def locked_sample(rows, rng, frac):
    """The GPU pods to lock: round(frac * their number), drawn at random."""
    gpu = [p for p in rows if k(p) > 0]
    return rng.sample(gpu, round(frac * len(gpu)))


def by_gpu_count(gpus):
    """The models, sorted, and their GPU counts as weights."""
    models = sorted(gpus)
    return models, [gpus[m] for m in models]


def gpuspec50(rows, rng, node_rows, frac=0.50):
    gpus = gpu_count_by_model(node_rows)
    models, weights = by_gpu_count(gpus)
    for p in locked_sample(rows, rng, frac):
        if rng.random() < 0.70:
            p["gpu_spec"] = rng.choices(models, weights)[0]
        else:
            a = rng.choices(models, weights)[0]
            b = rng.choice([m for m in models if m != a])
            p["gpu_spec"] = "|".join(sorted([a, b]))
    return rows


def gpuspec_uniform(rows, rng, frac, models, sizes):
    """frac of GPU pods locked to a set of len in `sizes` (uniform) drawn uniformly from `models`."""
    for p in locked_sample(rows, rng, frac):
        p["gpu_spec"] = "|".join(sorted(rng.sample(models, rng.choice(sizes))))
    return rows


def gpuspec_mixed(rows, rng, frac, gpus):
    """frac of GPU pods locked: half to one model drawn by GPU count, half to 2-3 models uniformly."""
    models, weights = by_gpu_count(gpus)
    for p in locked_sample(rows, rng, frac):
        if rng.random() < 0.5:
            p["gpu_spec"] = rng.choices(models, weights)[0]
        else:
            p["gpu_spec"] = "|".join(sorted(rng.sample(models, rng.choice([2, 3]))))
    return rows


def spec_two(rows, rng, frac, gpus):
    """frac of GPU pods locked to one or both of two models drawn from the mid-sized ones."""
    mid = sorted(m for m in gpus if gpus[m] >= 100 and gpus[m] < max(gpus.values()))
    a, b = sorted(rng.sample(mid, 2))
    for p in locked_sample(rows, rng, frac):
        r = rng.random()
        p["gpu_spec"] = a if r < 0.4 else b if r < 0.8 else f"{a}|{b}"
    return rows


def cpu_copies_n(rows, copies):
    """Each CPU-only pod gets `copies` copies named <name>-c2, <name>-c3, ..."""
    extra = []
    for p in rows:
        if k(p) == 0:
            for i in range(copies):
                c = dict(p)
                c["name"] = f"{p['name']}-c{i + 2}"
                extra.append(c)
    return rows + extra


def cpu_copies_plus(rows, rng, copies, frac):
    """Each CPU-only pod gets `copies` copies, then one more with probability frac."""
    extra = []
    for p in rows:
        if k(p) == 0:
            n = copies + (1 if rng.random() < frac else 0)
            for i in range(n):
                c = dict(p)
                c["name"] = f"{p['name']}-c{i + 2}"
                extra.append(c)
    return rows + extra


def cpu_copies(rows, rng, frac):
    """Each CPU-only pod gets a copy named <name>-c2 with probability frac (all when frac >= 1)."""
    extra = []
    for p in rows:
        if k(p) == 0 and (frac >= 1 or rng.random() < frac):
            c = dict(p)
            c["name"] = p["name"] + "-c2"
            extra.append(c)
    return rows + extra


def scale_field(rows, pred, field, num, den):
    """field := field * num // den for the rows where pred holds."""
    for p in rows:
        if pred(p):
            p[field] = str(int(p[field]) * num // den)
    return rows


def unshare(rows, rng, frac):
    """Random shared pods become whole-GPU pods until frac of GPU pods are shared."""
    gpu = [p for p in rows if k(p) > 0]
    shared = [p for p in gpu if is_share(p)]
    for p in rng.sample(shared, max(0, len(shared) - round(frac * len(gpu)))):
        p["gpu_milli"] = "1000"
    return rows


def gpuspec_single(rows, rng, frac, gpus):
    """frac of GPU pods locked to one model drawn by GPU count."""
    models, weights = by_gpu_count(gpus)
    for p in locked_sample(rows, rng, frac):
        p["gpu_spec"] = rng.choices(models, weights)[0]
    return rows


def halve_shares(rows):
    for p in rows:
        if is_share(p):
            p["gpu_milli"] = str(max(1, g(p) // 2))
    return rows


def drop_cpu_only(rows, rng, keep):
    """Each CPU-only pod is kept with probability `keep`."""
    return [p for p in rows if k(p) > 0 or rng.random() < keep]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--trace-dir", default=str(Path(__file__).resolve().parents[2] / "shared/data/traces/alibaba-gpu-v2023"))
    ap.add_argument("--seed", type=int, help="default 20240601; 20261129, 20261130, 20261201, 20261202, 20261203 with --fresh .. --fresh5")
    sets = ap.add_mutually_exclusive_group()
    sets.add_argument("--fresh", action="store_true", help="write the second held-out set (see above)")
    sets.add_argument("--fresh2", action="store_true", help="write the third held-out set (see above)")
    sets.add_argument("--fresh3", action="store_true", help="write the fourth held-out set (see above)")
    sets.add_argument("--fresh4", action="store_true", help="write the fifth held-out set (see above)")
    sets.add_argument("--fresh5", action="store_true", help="write the sixth held-out set (see above)")
    a = ap.parse_args()
    if a.seed is None:
        a.seed = 20261203 if a.fresh5 else 20261202 if a.fresh4 else 20261201 if a.fresh3 else 20261130 if a.fresh2 else 20261129 if a.fresh else 20240601
    src, out = Path(a.trace_dir), Path(a.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fields, _ = read(src / "openb_pod_list_default.csv")
    _, node_rows = read(src / "openb_node_list_gpu_node.csv")
    shutil.copyfile(src / "openb_node_list_gpu_node.csv", out / "openb_node_list_gpu_node.csv")
    gpus = gpu_count_by_model(node_rows)
    all_models = sorted(gpus)
    small_models = sorted(m for m in gpus if gpus[m] < max(gpus.values()))
    if a.fresh5:
        makers = {
            "cpuhalf": lambda rows, rng: scale_field(rows, lambda p: True, "cpu_milli", 1, 2),
            "share30": lambda rows, rng: unshare(rows, rng, 0.30),
            "spec70one": lambda rows, rng: gpuspec_single(rows, rng, 0.70, gpus),
            "shareghalf": lambda rows, rng: halve_shares(rows),
            "mem150cpu200share70": lambda rows, rng: cpu_copies(
                share(scale_field(rows, lambda p: True, "memory_mib", 3, 2), rng, 0.70), rng, 1.0),
        }
    elif a.fresh4:
        makers = {
            "gpucpu150": lambda rows, rng: scale_field(rows, lambda p: k(p) > 0, "cpu_milli", 3, 2),
            "mem200": lambda rows, rng: scale_field(rows, lambda p: True, "memory_mib", 2, 1),
            "share90cpu150": lambda rows, rng: cpu_copies(share(rows, rng, 0.90), rng, 0.5),
            "cpu025mgpu25": lambda rows, rng: multigpu(drop_cpu_only(rows, rng, 0.25), rng, 0.25),
            "spec25share50cpu200": lambda rows, rng: cpu_copies(
                gpuspec50(share(rows, rng, 0.50), rng, node_rows, 0.25), rng, 1.0),
        }
    elif a.fresh3:
        makers = {
            "cpu500": lambda rows, rng: cpu_copies_n(rows, 4),
            "share60cpu250": lambda rows, rng: cpu_copies_plus(share(rows, rng, 0.60), rng, 1, 0.5),
            "spec20cpu200": lambda rows, rng: cpu_copies(gpuspec50(rows, rng, node_rows, 0.20), rng, 1.0),
            "mgpu35cpu350": lambda rows, rng: cpu_copies_plus(multigpu(rows, rng, 0.35), rng, 2, 0.5),
        }
    elif a.fresh2:
        makers = {
            "share70spec30": lambda rows, rng: gpuspec_mixed(share(rows, rng, 0.70), rng, 0.30, gpus),
            "multigpu50": lambda rows, rng: multigpu(rows, rng, 0.50),
            "cpu300": lambda rows, rng: cpu_copies_n(rows, 2),
            "spec60two": lambda rows, rng: spec_two(rows, rng, 0.60, gpus),
        }
    elif a.fresh:
        makers = {
            "share80": lambda rows, rng: share(rows, rng, 0.80),
            "gpuspec30x": lambda rows, rng: gpuspec_uniform(rows, rng, 0.30, small_models, [1, 2, 3]),
            "mgpu30share55": lambda rows, rng: share(multigpu(rows, rng, 0.30), rng, 0.55),
            "spec40cpu150": lambda rows, rng: cpu_copies(gpuspec_uniform(rows, rng, 0.40, all_models, [2, 3]), rng, 0.5),
        }
    else:
        makers = {
            "share60": lambda rows, rng: share(rows, rng, 0.60),
            "multigpu40": lambda rows, rng: multigpu(rows, rng, 0.40),
            "gpuspec50": lambda rows, rng: gpuspec50(rows, rng, node_rows),
            "cpu200": lambda rows, rng: cpu_copies(rows, rng, 1.0),
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
