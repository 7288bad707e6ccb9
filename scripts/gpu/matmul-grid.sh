#!/usr/bin/env bash
# Issue 28's "at least as fast as PyTorch at every layout of PyTorch's grid", measured in rounds rather than once.
# Each round runs PyTorch's whole grid in one process (scripts/torch/inference.py --grid: batches 1..32 × streams 1..8,
# streams ≤ batches, 8,192 rows in all) and `cuda-pipe run configs/inference-matmul.yaml --chunks B --streams S` at
# each of the same 18 layouts, both 100 steps after 10; the two sides take turns, swapping which goes first each
# round. A layout's figure is then the median of ROUNDS medians (scripts/bench/matmul-grid-summary.mjs), where
# one run takes a single median of 30 steps. Usage: bash scripts/gpu/matmul-grid.sh OUT [ROUNDS].
# Logs to OUT/grid.log; Results to OUT/round-R/B-S.json, PyTorch's lines to OUT/torch-R.jsonl (and torch-c1-R.jsonl
# with one hardware queue); OUT/summary.txt.
source "$(dirname "$0")/common.sh" "${1:?usage: matmul-grid.sh OUT [ROUNDS]}"
rounds=${2:-4}
config=$root/configs/inference-matmul.yaml
# PyTorch's JSON lines to their own file; step's own lines stay in the log. Twice a round: with CUDA's default
# hardware queues (8), as a PyTorch user runs it, and with CUDA_DEVICE_MAX_CONNECTIONS=1, what inference-matmul.yaml's
# pipeline.connections sets for cuda-pipe.
theirs() {
  step 120 sh -c 'exec python3 "$@" > "$0"' "$out/torch-$1.jsonl" "$root/scripts/torch/inference.py" --grid --batches 1 --rows 8192 --reps 100 --warmup 10
  step 120 sh -c 'exec env CUDA_DEVICE_MAX_CONNECTIONS=1 python3 "$@" > "$0"' "$out/torch-c1-$1.jsonl" "$root/scripts/torch/inference.py" --grid --batches 1 --rows 8192 --reps 100 --warmup 10
}
ours() {
  mkdir -p "$out/round-$1"
  for batches in 1 2 4 8 16 32; do
    for streams in 1 2 4 8; do
      [ "$streams" -le "$batches" ] || continue
      step 60 "$cp" run "$config" --chunks "$batches" --streams "$streams" --reps 100 --warmup 10 --no-tracing --json "$out/round-$1/$batches-$streams.json" > /dev/null
    done
  done
}
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  for round in $(seq 1 "$rounds"); do
    if ((round % 2)); then theirs "$round"; ours "$round"; else ours "$round"; theirs "$round"; fi
  done
  step 60 /tmp/cuda-pipe/bin/node "$root/scripts/bench/matmul-grid-summary.mjs" "$out" "$rounds"
} > "$out/grid.log" 2>&1
