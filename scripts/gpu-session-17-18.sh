#!/usr/bin/env bash
# The H200 batch for issues 17 and 18, in phases that each fit one device call (10 minutes):
#   suite      the GPU test suite, buffers of any shape (scripts/gpu-items.sh) and the gemm stage against the native
#              cuBLAS program (scripts/gpu-gemm-stage.sh; build/native/gemm from scripts/native/build.sh)
#   pipelines  configs/inference.yaml and configs/weight-streaming.yaml (Result, SVG, trace, report), inference's
#              sweep of layouts, and the same pipelines in PyTorch (scripts/torch/)
#   workers    scripts/gpu-workers.sh: host stages on workers, the loader, scaling from 1 to 8 workers
# Logs go to a scratch folder and come back as one archive per phase in OUTDIR (the device tool returns few files).
# Usage on the GPU host, from the repository copy: bash scripts/gpu-session-17-18.sh OUTDIR PHASE
set -uo pipefail
out=${1:?output folder}; phase=${2:?phase: suite, pipelines or workers}
mkdir -p "$out"; out=$(cd "$out" && pwd)
repo=$(pwd)
work=/tmp/gpu-$phase
rm -rf "$work"; mkdir -p "$work"
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
cp=/tmp/cuda-pipe/bin/cuda-pipe
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
export PYTHONUNBUFFERED=1
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
case "$phase" in
  suite)
    {
      step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
      (cd /tmp/cuda-pipe && step bin/cuda-pipe-gpu-tests)
    } > "$work/suite.log" 2>&1
    bash "$repo/scripts/gpu-items.sh" "$work/items" > /dev/null 2>&1
    bash "$repo/scripts/gpu-gemm-stage.sh" "$work/gemm-stage" > /dev/null 2>&1
    ;;
  pipelines)
    {
      for name in inference weight-streaming; do
        step "$cp" run "$repo/configs/$name.yaml" --json "$work/$name.json" --svg "$work/$name.svg" --trace "$work/$name.trace.json"
        step "$cp" report "$work/$name.json"
      done
      step "$cp" sweep "$repo/configs/inference.yaml" --json "$work/inference-sweep.json"
      for streams in 1 4; do step python3 "$repo/scripts/torch/inference.py" --batches 16 --rows 512 --streams "$streams" --check; done
      step python3 "$repo/scripts/torch/inference.py" --batches 32 --rows 256 --streams 4 --check
      step python3 "$repo/scripts/torch/weight_streaming.py" --layers 16 --dim 8192 --rows 16384
    } > "$work/pipelines.log" 2>&1
    ;;
  workers)
    (cd "$repo" && bash scripts/gpu-workers.sh "$work/workers") > /dev/null 2>&1
    ;;
  *) echo "unknown phase $phase"; exit 2 ;;
esac
tar -C "$work" -czf "$out/$phase.tar.gz" .
grep -E '^(ℹ|# )(tests|pass|fail|skipped)' "$work"/*.log "$work"/*/*.log 2>/dev/null
grep -h -E 'verification|speedup|efficiency|overlapped|median|GB/s|workers:|TFLOP|\(exit [1-9]' "$work"/*.log "$work"/*/*.log 2>/dev/null | head -80
