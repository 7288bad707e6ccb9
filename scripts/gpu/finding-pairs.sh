#!/usr/bin/env bash
# The finding pairs on a GPU host (two GPUs for the data-parallel pairs): scripts/torch/finding_pairs.py on GPU 0,
# then ddp_overlap.py's variants on both GPUs in turns. Everything lands in OUT/pairs.tgz (the device tool brings
# back a few files only): each pattern's problem and fix traces, pairs.jsonl and ddp.jsonl, and the GPUs' state.
# Usage: bash scripts/gpu/finding-pairs.sh OUT
set -uo pipefail
out=${1:?usage: finding-pairs.sh OUT}
work=$out/pairs
mkdir -p "$work"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")/../torch" && pwd)
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$work/smi-before.csv" 2>&1
timeout -k 10 240 env CUDA_VISIBLE_DEVICES=0 python3 "$here/finding_pairs.py" "$work" >"$work/pairs.jsonl" 2>"$work/pairs.err"
echo "finding_pairs.py exit $?" >>"$work/exits.txt"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$gpus" -ge 2 ]; then
  for variant in no-overlap:--no-overlap early:--early overlap:--overlap one-bucket:--overlap,--bucket-mb,2048 \
                 no-overlap-2:--no-overlap early-2:--early overlap-2:--overlap; do
    name=${variant%%:*}
    args=${variant#*:}
    timeout -k 10 60 python3 -m torch.distributed.run --standalone --nproc_per_node=2 "$here/ddp_overlap.py" \
      "$work/ddp-$name" ${args//,/ } --steps 5 --warmup 3 --timed 30 >>"$work/ddp.jsonl" 2>>"$work/ddp.err"
    echo "ddp $name exit $?" >>"$work/exits.txt"
  done
fi
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$work/smi-after.csv" 2>&1
tar czf "$out/pairs.tgz" -C "$out" pairs && rm -rf "$work"
