#!/usr/bin/env bash
# Why inference-matmul.yaml at 16 batches × 4 streams is slower than at 16 × 2 (1.451 against 1.379 ms in
# docs/measurements/2026-11-26-h100-matmul-2/) while PyTorch is not: traced runs at 16 × 2, 4 and 8, the 16 × 4 layout
# issued breadth-first, behind the gate, and as stage-per-stream, and PyTorch's 16 × 2 and 16 × 4 steps profiled into
# Kineto traces. Usage: bash scripts/gpu-matmul-why.sh OUT. Logs to OUT/why.log.
source "$(dirname "$0")/gpu-common.sh" "${1:?usage: gpu-matmul-why.sh OUT}"
config=$root/configs/inference-matmul.yaml
sed 's/^  streams: 4$/  streams: 4\n  topology: stage-per-stream/' "$config" > "$out/inference-matmul-sps.yaml"
run() { local name=$1; shift; step 90 "$cp" run "$@" --reps 100 --warmup 10 --json "$out/$name.json"; }
{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv
  for s in 2 4 8; do
    step 60 python3 "$root/scripts/torch/inference.py" --batches 16 --rows 512 --streams "$s" --reps 100 --warmup 10 --trace "$out/torch-16x$s.pt.trace.json"
    run "traced-16x$s" "$config" --chunks 16 --streams "$s"
  done
  run breadth-16x4 "$config" --chunks 16 --streams 4 --order breadth-first --no-tracing
  run gated-16x4 "$config" --chunks 16 --streams 4 --gate --no-tracing
  run sps-16 "$out/inference-matmul-sps.yaml" --chunks 16 --no-tracing
} > "$out/why.log" 2>&1
