#!/usr/bin/env bash
# Some of the one-GPU finding pairs again (scripts/torch/finding_pairs.py --only), into OUT/pairs.tgz as
# finding-pairs.sh writes them. Usage: bash scripts/gpu/finding-pairs-one.sh OUT pattern[,pattern…]
set -uo pipefail
out=${1:?usage: finding-pairs-one.sh OUT PATTERNS}
only=${2:?usage: finding-pairs-one.sh OUT PATTERNS}
work=$out/pairs
mkdir -p "$work"
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/../torch" && pwd)
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$work/smi-before.csv" 2>&1
timeout -k 10 200 env CUDA_VISIBLE_DEVICES=0 python3 "$here/finding_pairs.py" "$work" --only "$only" >"$work/pairs.jsonl" 2>"$work/pairs.err"
echo "finding_pairs.py exit $?" >>"$work/exits.txt"
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$work/smi-after.csv" 2>&1
tar czf "$out/pairs.tgz" -C "$out" pairs && rm -rf "$work"
