#!/usr/bin/env bash
# Issue 24 on a host with two GPUs or more, from the bundle, every command under its own timeout and logged as it
# goes: ddp.yaml with the defaults (tracing on, adaptive reps) from one process over every GPU and as one rank per
# GPU under mpirun, the ranks merged; the sweep over bucket sizes from one process (each size's collective alone is
# a mode of it) beside the native program at the same sizes; the PyTorch peer under torchrun (TORCH=1); then the whole
# GPU suite, each test with a deadline. Usage on the GPU host: bash scripts/gpu-x2-issue24.sh OUT [BUNDLE]
set -uo pipefail
out=${1:?output folder}
bundle=${2:-build/cuda-pipe-linux-x64.tar.xz}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(pwd)
tar xJf "$bundle" -C /tmp
cp=/tmp/cuda-pipe/bin/cuda-pipe
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache NCCL_DEBUG=${NCCL_DEBUG:-WARN}
step() {
  local limit=$1; shift
  echo; echo "=== $(date +%T) timeout $limit: $*"
  local started=$SECONDS
  timeout -k 5 "$limit" "$@"
  echo "(exit $? after $((SECONDS - started)) s)"
}
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  step 90 "$cp" run "$root/configs/ddp.yaml" --devices all --chunks 4 --json "$out/ddp-devices.json"
  step 120 mpirun --allow-run-as-root -np "$gpus" -x PATH -x LD_LIBRARY_PATH -x NCCL_DEBUG -x CUDA_PIPE_CACHE_DIR "$cp" run "$root/configs/ddp.yaml" --chunks 4 --nccl-dir /tmp --json "$out/ddp-rank%r.json"
  step 30 "$cp" merge "$out"/ddp-rank0.json "$out"/ddp-rank1.json
  step 150 "$cp" sweep "$root/configs/ddp.yaml" --devices all --json "$out/ddp-sweep.json"
  step 60 "$root/build/native/allreduce" -g "$gpus" -w 5 -n 20 --sizes 16M,32M,64M,128M,256M,512M
  if [ "${TORCH:-0}" = 1 ] && command -v torchrun >/dev/null; then
    step 180 torchrun --standalone --nproc-per-node "$gpus" "$root/scripts/torch/ddp.py" --buckets 1,2,4,8,16,32
  fi
} 2>&1 | tee "$out/log.txt"
cd /tmp/cuda-pipe && timeout -k 10 "${SUITE_S:-400}" bin/node --test --test-concurrency=1 --test-timeout=200000 --test-reporter=spec dist/test/gpu/*.test.js 2>&1 | tee "$out/suite.log"
