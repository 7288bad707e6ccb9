#!/usr/bin/env bash
# sweep racing pipeline.connections (1 and 8) on one GPU host, each value in a cuda-pipe process of its own: the
# inference matmul (where one queue won on an H100, docs/measurements/2026-11-26-h100-matmul-3/connections/), balanced,
# and ddp. Usage, from the repository root with the bundle built: bash THIS OUT
set -u
o=$1/connections; mkdir -p "$o"
export NCCL_NVLS_ENABLE=0 CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 9
cp=/tmp/cuda-pipe/bin/cuda-pipe
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$o/gpus.csv"
sweep() {
  local name=$1; shift
  timeout -k 10 150 $cp sweep "$@" --set 'pipeline.connections=1,8' --max-time 15 --json "$o/$name.json" > "$o/$name.log" 2>&1
  echo "$name exit $?" >> "$o/exits.txt"
}
sweep matmul configs/inference-matmul.yaml --chunks 8,16 --streams 2,4
sweep balanced configs/balanced.yaml --chunks 16,32 --streams 4,8
sweep ddp configs/ddp.yaml --chunks 8,16
cat "$o/exits.txt"
