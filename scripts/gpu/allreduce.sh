#!/usr/bin/env bash
# The all-reduce like for like on a two-GPU host: scripts/native/allreduce out of place and in place
# (cuda-pipe reduces each bucket in place), twice each, interleaved, at 16 MiB to 512 MiB; then cuda-pipe's collective
# alone at the same message sizes from configs/ddp.yaml (512 MiB of gradients in 32 to 1 buckets), one process
# driving both GPUs (--devices all) and one rank a GPU (mpirun -np 2). From the bundle and build/native/ (carried).
# Usage (from the repository root): bash scripts/gpu/allreduce.sh OUT (BUNDLE=path under build/ for another bundle;
# GPUS=4 for four GPUs: the native program over them and mpirun -np 4)
set -uo pipefail
out=${1:?usage: allreduce.sh OUT}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
tar xJf "$root/build/${BUNDLE:-cuda-pipe-linux-x64.tar.xz}" -C /tmp
cp=/tmp/cuda-pipe/bin/cuda-pipe
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN
step() { local limit=$1; shift; echo; echo "=== $(date +%T) $*"; timeout -k 5 "$limit" "$@"; echo "(exit $?)"; }
{
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv
  for round in 1 2; do
    step 60 "$root/build/native/allreduce" -g "${GPUS:-2}" -w 5 -n 20 --sizes 16M,32M,64M,128M,256M,512M
    step 60 "$root/build/native/allreduce" -g "${GPUS:-2}" -w 5 -n 20 --sizes 16M,32M,64M,128M,256M,512M --in-place
  done
  for chunks in 32 16 8 4 2 1; do
    step 60 "$cp" run "$root/configs/ddp.yaml" --devices all --chunks "$chunks" --no-tracing --json "$out/one-process-$chunks.json"
  done
  for chunks in 32 8 1; do
    step 90 mpirun --allow-run-as-root -np "${GPUS:-2}" --bind-to none -x PATH -x LD_LIBRARY_PATH -x CUDA_PIPE_CACHE_DIR -x NCCL_NVLS_ENABLE \
      "$cp" run "$root/configs/ddp.yaml" --chunks "$chunks" --no-tracing --nccl-dir /tmp --json "$out/rank%r-$chunks.json"
  done
} >"$out/log.txt" 2>&1
