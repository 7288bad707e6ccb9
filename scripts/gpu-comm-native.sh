#!/usr/bin/env bash
# Issue 19's native NCCL baseline on a GPU host: builds build/native/allreduce (scripts/native/build.sh, when it is not
# there already and nvcc is) and runs it, one process driving the GPUs through ncclCommInitAll, on one GPU and on every
# GPU, over the all-reduce sizes of configs/ddp.yaml's buckets: whole layers (16 MiB of float32 gradients each, as
# issue 19's brief sizes it: 32 layers of 4 Mi parameters), 1 to 32 layers a bucket, which the power-of-two sizes
# from 1 MiB to 1 GiB cover; SIZES="16M,32M,..." runs other sizes instead.
# NCCL_NVLS_ENABLE=0 unless set. The bus bandwidth per size is what cuda-pipe's collective alone should come within
# 5% of. Logs go to OUT/log.txt and each run's table to OUT/allreduce-<gpus>.txt. Usage: bash scripts/gpu-comm-native.sh OUT
set -uo pipefail
out=${1:?usage: gpu-comm-native.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/build/native/allreduce"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
if [ -n "${SIZES:-}" ]; then sizes=(--sizes "$SIZES"); else sizes=(-b 1M -e 1G -f 2); fi
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
# One run of the program, its table kept in OUT/allreduce-<name>.txt.
record() {
  local name=$1; shift
  echo; echo "=== $*"
  "$@" 2>&1 | tee "$out/allreduce-$name.txt"
  echo "(exit ${PIPESTATUS[0]})"
}
{
  step nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv
  step nvidia-smi topo -m
  if [ ! -x "$bin" ] && command -v nvcc >/dev/null; then step bash "$root/scripts/native/build.sh"; fi
  if [ ! -x "$bin" ]; then
    echo "no $bin and no nvcc here: run scripts/native/build.sh on the build machine and carry build/"
    exit 3
  fi
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  record 1gpu "$bin" -g 1 -w 5 -n 20 "${sizes[@]}"
  if [ "$gpus" -gt 1 ]; then record "${gpus}gpu" "$bin" -g "$gpus" -w 5 -n 20 "${sizes[@]}"; fi
  if [ "$gpus" -gt 2 ]; then record 2gpu "$bin" -g 2 -w 5 -n 20 "${sizes[@]}"; fi
} 2>&1 | tee "$out/log.txt"
