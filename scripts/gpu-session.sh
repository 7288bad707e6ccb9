#!/usr/bin/env bash
# One batch of GPU-host work from the bundle: probe, bandwidth, the GPU test suite and the benchmarks.
# Usage on the GPU host, from the repository copy: bash scripts/gpu-session.sh OUTDIR
set -uo pipefail
out=${1:?output folder}
mkdir -p "$out"
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
cp="/tmp/cuda-pipe/bin/cuda-pipe"
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
cd /tmp/cuda-pipe
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  step "$cp" probe
  step "$cp" probe --bandwidth --json > "$out/probe-bandwidth.json"; "$cp" probe --bandwidth 2>&1 | tail -12
  step bin/cuda-pipe-gpu-tests
  for chunks in 16 32; do step "$cp" run --chunks "$chunks" --json "$out/balanced-$chunks.json"; done
  step "$cp" run configs/balanced.yaml --chunks 32 --reps 5
  for c in compute-bound copy-bound async-overlap multi-kernel; do step "$cp" run "configs/$c.yaml" --json "$out/$c.json"; done
  step "$cp" overhead
} 2>&1 | tee "$out/log.txt"
