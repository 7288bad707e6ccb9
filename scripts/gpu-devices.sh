#!/usr/bin/env bash
# One batch of work on a host with two GPUs, from the bundle: the GPU test suite (its two-GPU tests included), the
# split of balanced across both GPUs (gated and not, 16 and 32 chunks a device), the pipeline across them, probe's
# peer matrix and copy rates, one rank per GPU under mpirun and their merge, and the native check of what both PCIe
# links move at once (scripts/native/two-gpu-link.cu). Usage on the host, from the repository copy:
#   bash scripts/gpu-devices.sh OUTDIR
set -uo pipefail
out=${1:?output folder}
mkdir -p "$out"
repo=$(pwd)
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
cp="/tmp/cuda-pipe/bin/cuda-pipe"
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
# NVLink multicast stays off on shared hosts (the device notes); cuda-pipe uses none, mpirun's children inherit this.
export NCCL_NVLS_ENABLE=0
cd /tmp/cuda-pipe
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  step nvidia-smi topo -m
  step bin/cuda-pipe-gpu-tests
  step "$cp" probe --device all --bandwidth --json "$out/probe.json"
  step "$cp" run --devices all --gate --json "$out/balanced-x2-gate.json"
  step "$cp" run --devices 0,1 --json "$out/balanced-x2.json"
  step "$cp" run --devices 0,1 --chunks 32 --gate --json "$out/balanced-x2-32-gate.json"
  step "$cp" run configs/cross-device.yaml --gate --json "$out/cross-device-gate.json"
  step "$cp" run configs/cross-device.yaml --json "$out/cross-device.json"
  step mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE "$cp" run --gate --json "$out/rank-%r.json"
  step "$cp" merge "$out"/rank-*.json --json "$out/merged.json"
  step nvcc -O2 -o /tmp/two-gpu-link "$repo/scripts/native/two-gpu-link.cu"
  step /tmp/two-gpu-link own
  step /tmp/two-gpu-link shared
} 2>&1 | tee "$out/log.txt"
