#!/usr/bin/env bash
# Two more rounds of the sweeps that raced pipeline.connections 1 and 8 on one GPU host (connections-one-gpu.sh): is
# one queue faster for balanced and inference-matmul again, and at which SM clocks? Each round runs balanced, then
# matmul; the second round in the opposite order of values (8 first), so that a drift over the call favours neither.
# Usage, from the repository root with the bundle built: bash THIS OUT
set -u
o=$1/rounds; mkdir -p "$o"
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 9
cp=/tmp/cuda-pipe/bin/cuda-pipe
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$o/gpus-before.csv"
sweep() {
  local name=$1 values=$2; shift 2
  timeout -k 10 150 $cp sweep "$@" --set "pipeline.connections=$values" --max-time 15 --json "$o/$name.json" > "$o/$name.log" 2>&1
  echo "$name exit $?" >> "$o/exits.txt"
}
sweep balanced-2 1,8 configs/balanced.yaml --chunks 16,32 --streams 4,8
sweep matmul-2 1,8 configs/inference-matmul.yaml --chunks 8,16 --streams 2,4
sweep balanced-3 8,1 configs/balanced.yaml --chunks 16,32 --streams 4,8
sweep matmul-3 8,1 configs/inference-matmul.yaml --chunks 8,16 --streams 2,4
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$o/gpus-after.csv"
cat "$o/exits.txt"
tar czf "$1/rounds.tgz" -C "$1" rounds
