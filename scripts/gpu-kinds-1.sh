#!/usr/bin/env bash
# The library kinds on one GPU after a refactor of their descriptions: the gemm, cuBLAS and matmul GPU tests, then
# inference.yaml and inference-matmul.yaml checked against serial. Usage: bash scripts/gpu-kinds-1.sh OUT.
source "$(dirname "$0")/gpu-common.sh" "$1"
{
  (cd /tmp/cuda-pipe && step 200 bin/node --test --test-concurrency=1 --test-timeout=150000 --test-reporter=spec \
    dist/src/kinds/gemm/stage.gpu.test.js dist/src/kinds/gemm/cublas.gpu.test.js dist/src/kinds/matmul/matmul.gpu.test.js)
  step 90 "$cp" run "$root/configs/inference.yaml" --reps 20 --warmup 3 --json "$out/inference.json"
  step 90 "$cp" run "$root/configs/inference-matmul.yaml" --reps 20 --warmup 3 --json "$out/inference-matmul.json"
} > "$out/log.txt" 2>&1
