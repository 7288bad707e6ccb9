#!/usr/bin/env bash
# Follow-up to scripts/gpu-matmul.sh: the one layout of PyTorch's grid where inference-matmul.yaml's overlapped mode
# was slower than PyTorch (1 batch over 1 stream), run three times alternately with PyTorch, 100 reps each, beside
# inference.yaml (cublasGemmEx and a bias-ReLU kernel) at the same layout, then once traced (--verbose, --trace) to see
# where the time goes; then the GPU test suite on this one GPU. Usage: bash scripts/gpu-matmul-1x1.sh OUT.
source "$(dirname "$0")/gpu-common.sh" "${1:?usage: gpu-matmul-1x1.sh OUT}"
{
  for round in 1 2 3; do
    step 60 python3 "$root/scripts/torch/inference.py" --batches 1 --rows 8192 --streams 1 --reps 100 --warmup 10
    step 90 "$cp" run "$root/configs/inference-matmul.yaml" --chunks 1 --streams 1 --reps 100 --warmup 10 --no-tracing --json "$out/matmul-1x1-r$round.json"
    step 90 "$cp" run "$root/configs/inference.yaml" --chunks 1 --streams 1 --reps 100 --warmup 10 --no-tracing --json "$out/gemm-1x1-r$round.json"
  done
  step 90 "$cp" run "$root/configs/inference-matmul.yaml" --chunks 1 --streams 1 --reps 100 --warmup 10 --verbose --trace "$out/matmul-1x1.trace.json" --json "$out/matmul-1x1-traced.json"
} > "$out/matmul-1x1.log" 2>&1
(cd /tmp/cuda-pipe && shopt -s nullglob && step 330 bin/node --test --test-concurrency=1 --test-timeout=240000 --test-reporter=spec \
  dist/test/gpu/*.test.js dist/src/kinds/*/*.gpu.test.js) > "$out/suite.log" 2>&1
