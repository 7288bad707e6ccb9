#!/usr/bin/env bash
# Issue 28's runs on a GPU host after the stage kinds moved into src/kinds/: the GPU test suite from the bundle
# (every test; the two-GPU ones run where two GPUs are visible), then the configs whose kinds have runtimes of their
# own, each checked against serial: gemm.yaml (cuBLAS), inference.yaml (cuBLAS and a kernel), ddp.yaml (NCCL, on every
# visible GPU from one process), inference-matmul.yaml (cuBLASLt), host-stage.yaml (the host stage on worker threads).
# Usage: bash scripts/gpu-kinds.sh OUT [SUITE_SECONDS]. Logs into OUT as it goes.
source "$(dirname "$0")/gpu-common.sh" "$1"
suite_s=${2:-330}
nvidia-smi --query-gpu=index,name,driver_version --format=csv > "$out/gpus.csv" 2>&1
(cd /tmp/cuda-pipe && shopt -s nullglob && step "$suite_s" bin/node --test --test-concurrency=1 --test-timeout=240000 --test-reporter=spec \
  dist/test/gpu/*.test.js dist/src/kinds/*/*.gpu.test.js) > "$out/suite.log" 2>&1
{
  step 90 "$cp" run "$root/configs/gemm.yaml" --reps 20 --warmup 3 --json "$out/gemm.json"
  step 90 "$cp" run "$root/configs/inference.yaml" --reps 20 --warmup 3 --json "$out/inference.json"
  step 120 "$cp" run "$root/configs/ddp.yaml" --devices all --reps 20 --warmup 3 --json "$out/ddp.json"
  step 90 "$cp" run "$root/configs/inference-matmul.yaml" --reps 20 --warmup 3 --json "$out/inference-matmul.json"
  step 90 "$cp" run "$root/configs/host-stage.yaml" --reps 20 --warmup 3 --json "$out/host-stage.json"
} > "$out/configs.log" 2>&1
