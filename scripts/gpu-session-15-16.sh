#!/usr/bin/env bash
# The H200 batch for issues 15 and 16, in phases that each fit one device call (10 minutes):
#   suite     the GPU test suite, default-streams (per-thread vs legacy), CUPTI against events on balanced
#   bound     scripts/gpu-bound.sh: every config and the default sweeps, twice, efficiency ≤ 1.01
#   verdicts  scripts/bench-verdicts.sh with ROUNDS rounds (compare and ab on a 1% and 3% heavier kernel)
#   gate      the CUPTI GPU tests, and the A/B perf gate: unchanged code (exit 0), and a head whose kernel does 3% more
#             work than the base revision's (exit 1)
# Logs go to a scratch folder and come back as one archive per phase in OUTDIR (the device tool returns few files).
# Usage on the GPU host, from the repository copy: bash scripts/gpu-session-15-16.sh OUTDIR PHASE [ROUNDS]
set -uo pipefail
out=${1:?output folder}; phase=${2:?phase: suite, bound, verdicts or gate}; rounds=${3:-10}
mkdir -p "$out"; out=$(cd "$out" && pwd)
repo=$(pwd)
work=/tmp/gpu-$phase
rm -rf "$work"; mkdir -p "$work"
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
cp=/tmp/cuda-pipe/bin/cuda-pipe
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
case "$phase" in
  suite)
    {
      step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
      (cd /tmp/cuda-pipe && step bin/cuda-pipe-gpu-tests)
      step "$cp" run --json "$work/balanced-cupti.json" --svg "$work/balanced-cupti.svg"
      CUDA_PIPE_CUPTI=/nonexistent/libcupti.so step "$cp" run --json "$work/balanced-events.json"
      step "$cp" timeline "$work/balanced-cupti.json" --width 160
    } > "$work/suite.log" 2>&1
    bash "$repo/scripts/gpu-default-streams.sh" "$work/default-streams" > /dev/null 2>&1
    ;;
  bound)
    bash "$repo/scripts/gpu-bound.sh" "$work" > "$work/bound-stdout.log" 2>&1; echo "gpu-bound exit $?" >> "$work/bound-stdout.log"
    # graph-launches stream-issued is the layout whose host term moves most from run to run: three more default runs.
    for i in 1 2 3; do "$cp" run /tmp/cuda-pipe/configs/graph-launches.yaml --json "$work/extra-graph-launches-$i.json" > "$work/extra-graph-launches-$i.log" 2>&1; done
    ;;
  verdicts) bash "$repo/scripts/bench-verdicts.sh" "$work" "$rounds" > "$work/verdicts-stdout.log" 2>&1 ;;
  gate)
    {
      (cd /tmp/cuda-pipe && step bin/node --test --test-reporter=spec dist/test/gpu/cupti.test.js)
      # The head is the bundle itself; two base revisions beside it: the same tree, and one whose kernel does 1/33
      # fewer iterations (so the head's does about 3% more work).
      sed 's/size: 256MiB/size: 32MiB/' /tmp/cuda-pipe/configs/compute-bound.yaml > /tmp/cuda-pipe/configs/gate-check.yaml
      for base in same lighter; do
        rm -rf "/tmp/base-$base"; mkdir -p "/tmp/base-$base"
        cp -r /tmp/cuda-pipe/configs /tmp/cuda-pipe/kernels "/tmp/base-$base/"
      done
      sed -i 's/k < iterations;/k < iterations - iterations \/ 33;/' /tmp/base-lighter/kernels/fma_loop.cu
      step grep -n 'k < iterations' /tmp/base-lighter/kernels/fma_loop.cu /tmp/cuda-pipe/kernels/fma_loop.cu
      cd /tmp/cuda-pipe
      step scripts/perf-regression --ab /tmp/base-same --out "$work/same" --md "$work/same.md" configs/gate-check.yaml configs/balanced.yaml
      step scripts/perf-regression --ab /tmp/base-lighter --out "$work/heavier" --md "$work/heavier.md" configs/gate-check.yaml
      step cat "$work/same.md" "$work/heavier.md"
    } > "$work/gate.log" 2>&1
    ;;
  *) echo "unknown phase $phase" >&2; exit 2 ;;
esac
tar czf "$out/$phase.tar.gz" -C "$work" .
ls -la "$out"
