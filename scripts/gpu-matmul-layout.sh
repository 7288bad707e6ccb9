#!/usr/bin/env bash
# Follow-up to scripts/gpu-matmul.sh at one layout of PyTorch's grid: PyTorch (scripts/torch/inference.py) and
# inference-matmul.yaml's overlapped mode taking turns ROUNDS times, 100 reps after 10 each, as gpu-matmul-1x1.sh did
# for 1 × 1. Usage: bash scripts/gpu-matmul-layout.sh OUT BATCHES STREAMS [ROUNDS]. Logs to OUT/matmul-BxS.log.
source "$(dirname "$0")/gpu-common.sh" "${1:?usage: gpu-matmul-layout.sh OUT BATCHES STREAMS [ROUNDS]}"
batches=${2:?batches}
streams=${3:?streams}
rounds=${4:-3}
{
  for round in $(seq 1 "$rounds"); do
    step 60 python3 "$root/scripts/torch/inference.py" --batches "$batches" --rows $((8192 / batches)) --streams "$streams" --reps 100 --warmup 10
    step 90 "$cp" run "$root/configs/inference-matmul.yaml" --chunks "$batches" --streams "$streams" --reps 100 --warmup 10 --no-tracing --json "$out/matmul-${batches}x${streams}-r$round.json"
  done
} > "$out/matmul-${batches}x${streams}.log" 2>&1
