#!/usr/bin/env python3
"""Writes fuzz/corpus/<target>/ seed inputs from the repository's own examples and docs: the
examples/*.yaml documents, the JSON blocks of docs/resources/*.md and docs/advisor/*.md, the
scenario files, the DCGM text of the meter's test, and small synthetic CSVs in the traces'
column layouts (no data set is copied). Run from anywhere; rewrites the seeds and keeps the
regression-* inputs (ones that once crashed a target)."""
import json
import pathlib
import re

import yaml

root = pathlib.Path(__file__).resolve().parent.parent
corpus = root / "fuzz" / "corpus"


def write(target, name, data):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def json_blocks(md):
    for block in re.findall(r"```json\n(.*?)```", md.read_text(), re.S):
        try:
            doc = json.loads(block)
        except ValueError:
            continue
        if isinstance(doc, dict):
            yield doc


# Regenerate the seeds; inputs that once crashed a target (regression-*) stay.
for f in corpus.glob("*/*"):
    if not f.name.startswith("regression-"):
        f.unlink()

# Request bodies, as "FAMILY\n" + JSON.
families = {"supplier": "supplier", "node": "node", "offer": "offer", "project": "project",
            "job": "job", "job-inference": "job"}
for f in sorted((root / "examples").glob("*.yaml")):
    doc = yaml.safe_load(f.read_text())
    write("json_bodies", f.stem, families[f.stem] + "\n" + json.dumps(doc))
by_doc = {"suppliers": "supplier", "nodes": "node", "offers": "offer", "tenants": "tenant",
          "projects": "project", "users": "user", "tokens": "token", "jobs": "job",
          "contracts": "contract", "measurements": "measurement", "reservations": "reservation"}
for md, family in by_doc.items():
    for i, doc in enumerate(json_blocks(root / "docs" / "resources" / (md + ".md"))):
        write("json_bodies", f"{md}-{i}", family + "\n" + json.dumps(doc))
advisor = {"fingerprint": "fingerprint", "mix": "mix", "poc": "poc", "quotes": "quotes",
           "suppliers": "suppliers", "tco": "tco"}
for md, family in advisor.items():
    for i, doc in enumerate(json_blocks(root / "docs" / "advisor" / (md + ".md"))):
        write("json_bodies", f"advise-{md}-{i}", family + "\n" + json.dumps(doc))
write("json_bodies", "quota", "quota\n" + json.dumps({"gpu_quota": 64, "monthly_budget": "120000.00",
                                                      "budget_action": "hold"}))
write("json_bodies", "deep", "mix\n" + '{"labels": ' + "[" * 70 + "]" * 70 + "}")

# Usage batches.
for i, doc in enumerate(json_blocks(root / "docs" / "resources" / "usage.md")):
    write("usage_batch", f"doc-{i}", json.dumps(doc))
write("usage_batch", "synthetic", json.dumps({
    "idempotency_key": "agent-node7-000123",
    "gpu_samples": [{"at": "2025-11-30T23:59:00Z", "node": "node-7", "gpu": g, "utilization_pct": 40 + g,
                     "memory_used_mib": 1000, "power_mw": 300000} for g in range(4)],
    "job_samples": [{"at": "2025-11-30T23:59:00Z", "job": "job-1", "egress_bytes": 1000,
                     "storage_io_bytes": 5, "output_tokens": 7, "requests": 1}]}))

# YAML documents and scenario files.
for f in sorted((root / "examples").glob("*.yaml")):
    write("yaml_specs", f.stem, f.read_text())
write("yaml_specs", "aliases", "a: &a [1, 2]\nb: [*a, *a]\nc: {x: *a}\n")
for kind, byte in (("sched", b"\x00"), ("billing", b"\x01")):
    files = sorted((root / "tests" / "scenarios" / kind).glob("*.yaml"), key=lambda p: p.stat().st_size)
    for f in files[:6]:
        write("scenarios", f"{kind}-{f.stem}", byte + f.read_bytes())
        write("yaml_specs", f"{kind}-{f.stem}", f.read_bytes())

# CSVs in the readers' layouts (synthetic rows).
write("trace_csv", "nodes", b"\x00" + b"sn,cpu_milli,memory_mib,gpu,model\n"
      b"openb-node-0001,64000,262144,2,G2\nopenb-node-0002,96000,786432,8,V100M32\nopenb-node-0003,32000,131072,0,\n")
write("trace_csv", "pods", b"\x01" + b"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n"
      b"openb-pod-0001,12000,16384,1,1000,,0,3600\nopenb-pod-0002,6000,8192,1,460,V100M16|V100M32,10,20\n"
      b"openb-pod-0003,88000,65536,0,0,,5,\n")
write("trace_csv", "philly", b"\x02" + b"timestamp,duration,num_gpus,cluster\n"
      b"2017-10-03 14:26:21,3600.5,8,vc1\n2017-10-03 14:27:00,12,1,vc2\n")
write("trace_csv", "demand", b"\x03" + b"hour,gpus\n0,16\n1,24\n2,8\n")
write("trace_csv", "demand-bare", b"\x03" + b"16\n24\n8\n")

# Prometheus text: the meter test's dcgm-exporter scrape.
text = re.search(r'kScrape = R"\((.*?)\)";', (root / "src" / "meter" / "dcgm_test.cc").read_text(), re.S)
write("prometheus_text", "dcgm", text.group(1))
write("prometheus_text", "escapes", 'm{a="x\\"y\\\\z",b="\\n"} 1.5e3 1700000000000\n# TYPE m counter\n')

# Query strings.
for i, q in enumerate(["limit=10&after=job_1", "from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00.123%2B08:00",
                       "state=pending&tenant=acme&gpu_model=h100-sxm5-80gb", "a=%zz&b=%ff%00&&=&c"]):
    write("query_params", f"q{i}", q)

# Slurm's output: the real squeue/sinfo JSON of 22.05 and 24.11 kept in src/exec/testdata, a
# jobcomp line, a sacct row, a hostlist.
for f in sorted((root / "src" / "exec" / "testdata").glob("*.json")):
    write("slurm_output", f.name, (b"\x00" if f.name.startswith("squeue") else b"\x01") + f.read_bytes())
write("slurm_output", "jobcomp", b"\x02JobId=3 UserId=root(0) Name=fail JobState=FAILED StartTime=2026-12-02T04:08:41 "
      b"EndTime=2026-12-02T04:08:41 NodeList=gpn[1-2] Tres=cpu=1,gres/gpu=2 ExitCode=3:0\n")
write("slurm_output", "sacct", b"\x031|FAILED|1796184688|1796184688|0|billing=1,cpu=1,gres/gpu:h100=2,node=1|gpn1|2:0\n")
write("slurm_output", "hostlist", b"\x04gpn[01-03,7],x[a-b]")

for d in sorted(corpus.iterdir()):
    print(d.name, len(list(d.iterdir())))
