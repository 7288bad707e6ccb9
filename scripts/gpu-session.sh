#!/usr/bin/env bash
# One batch of GPU-host work from the bundle: probe, bandwidth, the GPU test suite, the benchmarks of the run
# command, and the perf-regression acceptance runs (back-to-back runs compare as same; a 10% heavier kernel as
# slower). Usage on the GPU host, from the repository copy: bash scripts/gpu-session.sh OUTDIR
set -uo pipefail
out=${1:?output folder}
mkdir -p "$out"
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
cp="/tmp/cuda-pipe/bin/cuda-pipe"
work=/tmp/cuda-pipe-work
mkdir -p "$work"
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
cd /tmp/cuda-pipe
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  step "$cp" probe
  step "$cp" probe --bandwidth
  step bin/cuda-pipe-gpu-tests
  for chunks in 16 32; do step "$cp" run --chunks "$chunks" --json "$work/balanced-$chunks.json"; done
  step "$cp" run --chunks 32 --gate
  for c in compute-bound copy-bound async-overlap multi-kernel; do step "$cp" run "configs/$c.yaml"; done
  step "$cp" overhead
  # Issue 4 acceptance: two back-to-back default runs, then the kernel's intensity raised 10%.
  step "$cp" run --json "$out/balanced-1.json"
  step "$cp" run --json "$out/balanced-2.json"
  step "$cp" compare "$out/balanced-1.json" "$out/balanced-2.json"
  sed 's/int32: 1060/int32: 1166/' configs/balanced.yaml > "$work/balanced-heavier.yaml"
  step "$cp" run "$work/balanced-heavier.yaml" --json "$out/balanced-heavier.json"
  step "$cp" compare "$out/balanced-1.json" "$out/balanced-heavier.json" --md "$out/compare-heavier.md"
  step scripts/perf-regression --update-baseline --out "$work/perf" --baselines "$out/baselines"
  step scripts/perf-regression --out "$work/perf-check" --baselines "$out/baselines"
} 2>&1 | tee "$out/log.txt"
