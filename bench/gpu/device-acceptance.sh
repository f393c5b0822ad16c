#!/usr/bin/env bash
# The acceptance suite on a real GPU machine, in one go (docs/benchmarks.md#gpu-acceptance):
#   1. builds tools/accept/gpu_bench.cu with nvcc exactly as CMakeLists.txt does;
#   2. runs gpurent-accept (the GPU stage real; storage and network where fio and iperf3 exist);
#   3. times cuBLAS through PyTorch (torch.matmul on random data, a tensor copy) beside it, as the
#      baseline the GPU stage's figures are compared with;
#   4. starts the real server on SQLite, registers this machine as a node with its real GPU UUIDs,
#      lets `gpurent agent` report two NVML readings, records the acceptance report, and reads back
#      the stored samples and measurements.
# Usage: bench/gpu/device-acceptance.sh OUTDIR [GPURENT_BIN_DIR]   (GPURENT_BIN_DIR: default build/;
# GPURENT_LIBS=DIR adds DIR to LD_LIBRARY_PATH for a server binary built on another distribution;
# GPURENT_AGENT_SOURCE overrides the agent's GPU source, e.g. "--gpu-sim FILE" to rehearse step 4
# without a GPU).
set -u
out=${1:?usage: device-acceptance.sh OUTDIR [GPURENT_BIN_DIR]}
bin=${2:-build}
mkdir -p "$out"
work=$(mktemp -d)
log="$out/device.txt"
node=gpn1
say() { echo "== $*" | tee -a "$log"; }
# gpurent's binaries, with GPURENT_LIBS on their library path (and the tools gpurent-accept starts:
# harmless there), not python's or nvcc's.
libs=${GPURENT_LIBS:-}${GPURENT_LIBS:+${LD_LIBRARY_PATH:+:}}${LD_LIBRARY_PATH:-}
g() { LD_LIBRARY_PATH=$libs "$bin/$@"; }

say "machine"
{ date -u; uname -a; nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
  nvcc --version | tail -2; } >>"$log" 2>&1

say "1. build gpurent-gpu-bench"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
( time "$nvcc" -O2 -std=c++17 -o "$work/gpurent-gpu-bench" tools/accept/gpu_bench.cu -lcublasLt -lcublas ) >>"$log" 2>&1
ls -la "$work/gpurent-gpu-bench" >>"$log" 2>&1

say "2. gpurent-accept --stages gpu,storage,network"
g gpurent-accept --node $node --stages gpu,storage,network --gpu-bench "$work/gpurent-gpu-bench" \
  --storage-dir "$work" --out "$out/report.json" >"$out/accept.txt" 2>&1
echo "exit $?" >>"$out/accept.txt"
grep -v '^GPURENT-ACCEPTANCE-REPORT' "$out/accept.txt" >>"$log"

say "2b. gpurent-gpu-bench alone, twice, and once with 500 iterations (sustained)"
for run in 1 2; do "$work/gpurent-gpu-bench" >>"$log" 2>&1; done
"$work/gpurent-gpu-bench" --iterations 500 >>"$log" 2>&1

say "3. cuBLAS through PyTorch (baseline)"
REPORT="$out/report.json" PYTHONUNBUFFERED=1 timeout 180 python3 - >>"$log" 2>&1 <<'PY'
import json, os
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
def gemm(dtype, n=8192, warm=20, iters=50, rand=True):
    a = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype) if rand else torch.zeros(n, n, device="cuda", dtype=dtype)
    b = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype) if rand else torch.zeros(n, n, device="cuda", dtype=dtype)
    for _ in range(warm): c = a @ b
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters): c = a @ b
    e.record(); torch.cuda.synchronize()
    return 2 * n**3 * iters / (s.elapsed_time(e) / 1e3) / 1e12
def d2d(nbytes=1 << 30, iters=20):
    a = torch.ones(nbytes, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
    for _ in range(2): b.copy_(a)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters): b.copy_(a)
    e.record(); torch.cuda.synchronize()
    return 2 * nbytes * iters / (s.elapsed_time(e) / 1e3) / 1e9
for r in range(2):
    print(f"torch run {r+1}: bf16 {gemm(torch.bfloat16):.1f} TFLOPS, fp16 {gemm(torch.float16):.1f} TFLOPS, "
          f"d2d {d2d():.1f} GB/s (read + written)")
print(f"torch bf16, 500 iterations: {gemm(torch.bfloat16, iters=500):.1f} TFLOPS")
print(f"torch bf16 on zeros: {gemm(torch.bfloat16, rand=False):.1f} TFLOPS")
# The GPU stage's own figures (from the report's raw lines, as the server derives them) beside the baseline.
ours = {}
for stage in json.load(open(os.environ["REPORT"])).get("stages", []):
    for line in (stage.get("output") or "").splitlines() if stage.get("stage") == "gpu" else []:
        if line.startswith("{"):
            t = json.loads(line)
            if t["test"] == "gemm": ours[t["dtype"]] = 2 * t["m"] * t["n"] * t["k"] * t["iterations"] / t["seconds"] / 1e12
            else: ours[t["direction"]] = t["bytes"] * t["iterations"] * (2 if t["direction"] == "d2d" else 1) / t["seconds"] / 1e9
base_bf16, base_d2d = gemm(torch.bfloat16), d2d()
print(f"gpu_acceptance: bf16 {ours.get('bf16', 0):.1f} TFLOPS (baseline: cuBLAS through torch {base_bf16:.1f} TFLOPS, "
      f"{100 * ours.get('bf16', 0) / base_bf16:.1f} %), d2d {ours.get('d2d', 0):.1f} GB/s (baseline: torch copy {base_d2d:.1f} GB/s)")
PY

say "4. server, node, agent (NVML), acceptance run"
port=18180
env LD_LIBRARY_PATH="$libs" "$bin/gpurent" serve --db "$work/g.db" --port $port --catalog data/gpu_catalog.yaml >"$work/serve.log" 2>&1 &
srv=$!
for _ in $(seq 50); do grep -q listening "$work/serve.log" && break; sleep 0.2; done
head -1 "$work/serve.log" >>"$log"
export GPURENT_SERVER=http://127.0.0.1:$port GPURENT_TOKEN=$(cat "$work/g.db.admin-token" 2>/dev/null)
# Every GPU of the machine, with its real UUID (the simulated source's one without a GPU).
gpus=$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader 2>/dev/null |
  awk -F', ' '{printf "%s{\"index\":%s,\"uuid\":\"%s\",\"nvlink_domain\":\"nv0\",\"numa_node\":0,\"pcie_gen\":5}", (NR > 1 ? "," : ""), $1, $2}')
[ -n "$gpus" ] || echo "no GPU listed by nvidia-smi: one simulated card registered" >>"$log"
gpus=${gpus:-'{"index":0,"uuid":"GPU-00000000-0000-4000-8000-00000000a200","nvlink_domain":"nv0","numa_node":0,"pcie_gen":5}'}
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
driver=${driver:-580.0.0}
case $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) in
  *H100*) model=h100-sxm5-80gb ;;
  *H200* | "") model=h200-sxm-141gb ;;
  *) echo "this script registers H100 or H200 machines only" >>"$log"; model=unknown ;;
esac
{
  printf '{"name":"lab","region":"cn-east","country":"CN","sites":[{"name":"site-a","region":"cn-east","city":"Shanghai"}],"contact_email":"noc@lab.example.com"}' >"$work/sup.json"
  printf '{"name":"%s","supplier":"lab","site":"site-a","region":"cn-east","gpu_model":"%s","gpus":[%s],"cpu":{"model":"x86-64","cores":16,"sockets":1},"memory_gib":128,"numa_nodes":1,"software":{"driver":"%s","cuda":"13.0"},"state":"available"}' "$node" "$model" "$gpus" "$driver" >"$work/node.json"
  g gpurent suppliers create -f "$work/sup.json" -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("id"), d.get("detail", ""))'
  g gpurent nodes create -f "$work/node.json" -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("id"), d.get("detail", ""))'
  from=$(date -u -d '-5 seconds' +%Y-%m-%dT%H:%M:%SZ)
  timeout 60 env LD_LIBRARY_PATH="$libs" "$bin/gpurent" agent --node $node ${GPURENT_AGENT_SOURCE:-} --count 2 --interval-s 1
  echo "agent exit $?"
  to=$(date -u -d '+5 seconds' +%Y-%m-%dT%H:%M:%SZ)
  python3 -c 'import os,sys,urllib.request as u; print(u.urlopen(u.Request(os.environ["GPURENT_SERVER"] + sys.argv[1], headers={"Authorization": "Bearer " + os.environ["GPURENT_TOKEN"]})).read().decode())' \
    "/api/v1/usage/gpus?node=$node&gpu=0&from=$from&to=$to"
  python3 -c 'import json,sys; print(json.dumps({"report": json.load(open(sys.argv[1]))}))' "$out/report.json" >"$work/run.json"
  g gpurent acceptance-runs create -f "$work/run.json" -o json >"$out/acceptance-run.json"
  echo "acceptance-runs create exit $?"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(json.dumps({k: r.get(k) for k in ("id","node","gpus","measurements")})); [print(s.get("stage"), s.get("status"), json.dumps(s.get("figures"))) for s in r.get("stages", [])]' "$out/acceptance-run.json"
  g gpurent measurements list -o json | head -c 2000; echo
} >>"$log" 2>&1
kill $srv; wait $srv 2>/dev/null
cp "$work/serve.log" "$out/serve.log"
say "done"
rm -rf "$work"
