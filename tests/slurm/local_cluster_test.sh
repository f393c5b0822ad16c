#!/usr/bin/env bash
# slurm_local_cluster: scripts/slurm-local brings up a real Slurm (slurmctld, two slurmd, munge)
# with fake GPUs on this machine; a job asking for 4 GPUs on a named node runs there with
# CUDA_VISIBLE_DEVICES set and is recorded by jobcomp; a node drained and resumed comes back; the
# cluster stops cleanly. With SLURM_LOCAL_IMAGE (slurm24_local_cluster) the same in a container of
# that Slurm version. Skips (exit 77) without root, without Slurm installed or without the image.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to run slurmd and munged"; exit 77; }
if [ -n "${SLURM_LOCAL_IMAGE:-}" ]; then  # another Slurm version in a container (scripts/slurm-image)
  podman image exists "$SLURM_LOCAL_IMAGE" 2>/dev/null ||
    { echo "SKIP: no image $SLURM_LOCAL_IMAGE (scripts/slurm-image could not build it: see the slurm24_image test)"; exit 77; }
else
  command -v slurmctld >/dev/null || { echo "SKIP: slurm-wlm is not installed (scripts/install-deps.sh)"; exit 77; }
fi
dir=$(mktemp -d /tmp/gpurent-slurm-test-XXXXXX)
trap '"$here/scripts/slurm-local" stop "$dir"; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; tail -n 20 "$dir/slurmctld.log" 2>/dev/null; exit 1; }

"$here/scripts/slurm-local" start "$dir" 2 8 || fail "the cluster did not start"
eval "$("$here/scripts/slurm-local" env "$dir")"  # SLURM_CONF, and PATH to a container's tools
[ "$(sinfo -h -N -o '%N %G' | sort)" = "$(printf 'gpn1 gpu:h100:8(S:0-1)\ngpn2 gpu:h100:8(S:0-1)')" ] || fail "nodes/gres: $(sinfo -N)"

job=$(sbatch --parsable --gres=gpu:h100:4 --nodelist=gpn2 --time=1 -o "$dir/out-%j.txt" \
  --wrap 'echo "gpus=$CUDA_VISIBLE_DEVICES node=$SLURMD_NODENAME"') || fail "sbatch"
for _ in $(seq 1 100); do grep -q "JobId=$job .*JobState=COMPLETED" "$dir/jobcomp.log" 2>/dev/null && break; sleep 0.1; done
grep -q "JobId=$job .*JobState=COMPLETED.*NodeList=gpn2" "$dir/jobcomp.log" || fail "job $job not completed on gpn2: $(cat "$dir/jobcomp.log" 2>/dev/null)"
[ "$(cat "$dir/out-$job.txt")" = "gpus=0,1,2,3 node=gpn2" ] || fail "job output: $(cat "$dir/out-$job.txt")"

scontrol update nodename=gpn1 state=drain reason="slurm-local test" || fail "drain"
sinfo -h -N -n gpn1 -o '%T' | grep -q drain || fail "gpn1 not drained: $(sinfo -N)"
scontrol update nodename=gpn1 state=resume || fail "resume"
sinfo -h -N -n gpn1 -o '%T' | grep -q idle || fail "gpn1 not back: $(sinfo -N)"

"$here/scripts/slurm-local" stop "$dir"
for f in "$dir"/*.pid "$dir"/munge/*.pid; do [ -e "$f" ] && fail "pid file left: $f"; done
pgrep -f "$dir/slurm.conf" >/dev/null && fail "a daemon is still running"
echo "PASS: slurm_local_cluster"
