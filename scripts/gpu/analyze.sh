#!/usr/bin/env bash
# Issue 27's validation of `cuda-pipe analyze` on a two-GPU host (NVLink, nvidia-h100-x2 or h200-x2), in one batch:
#   a. scripts/torch/ddp_overlap.py under torchrun on both GPUs, --no-overlap then --overlap: one Kineto trace a rank
#      (then d. and e. of these traces at once: the comparison that matters most runs first)
#   b. scripts/torch/balanced_pipeline.py (configs/balanced.yaml in PyTorch) on GPU 0: its trace and CUDA-event times
#   c. `cuda-pipe run configs/balanced.yaml --trace --json` from the bundle: run's trace and its Result
#   d. `cuda-pipe analyze` of each (both ranks' traces in one call), with --json; `analyze A B --ab` of no-overlap (A)
#      against overlap (B), rank by rank (--ab takes two traces); the run and PyTorch traces again with the Result's
#      link rates (--rates)
#   e. scripts/hta/hta_overlap.py: HTA's own comm/comp overlap and idle breakdown on the DDP traces and the PyTorch one
#   f. scripts/hta/compare_analyze.py: analyze's commWithCompute against HTA's per rank (within 0.1 pp?), the --ab
#      verdicts, analyze of run's trace against run's Result, the PyTorch pipeline against run
#
# Before: on the CPU machine, `npm run bundle` (build/cuda-pipe-linux-x64.tar.xz) and `bash scripts/hta/stage-hta.sh`
# (build/hta-src/, HTA's source, 672 KiB: the host has no package registry); carry both with the working tree
# (run's carry: ["build/cuda-pipe-linux-x64.tar.xz", "build/hta-src"]).
# Usage on the GPU host, from the repository root: bash scripts/gpu/analyze.sh "$OUT" [BUNDLE]
#   Everything goes to $WORK (default /tmp/gpu-analyze); after every step it is packed into ONE file,
#   $OUT/gpu-analyze.tar.xz (so a timeout keeps what was done), and log.txt is copied beside it: two files come back.
#   Each step runs under `timeout -k 10 LIMIT`, its limit cut to what is left of TOTAL_S (default 330 s) for the
#   whole batch; a step with under 5 s left is skipped and says so. NCCL_NVLS_ENABLE=0 (scripts/gpu/common.sh).
#   DDP_ARGS: extra flags for ddp_overlap.py (e.g. "--batch 1024"; "--cpu --hidden 256" is the dry run used to test
#   this script on a machine without GPUs, with a stand-in nvidia-smi).
#   Unpack with: tar xJf gpu-analyze.tar.xz   (a folder gpu-analyze/; compare.txt holds the comparison)
[[ -f scripts/gpu/common.sh ]] || { echo "gpu-analyze: run from the repository root" >&2; exit 2; }
[[ -f ${2:-build/cuda-pipe-linux-x64.tar.xz} ]] || echo "gpu-analyze: no bundle at ${2:-build/cuda-pipe-linux-x64.tar.xz}: run and analyze steps will fail" >&2
source scripts/gpu/common.sh
# The budget counts from the script's start, the bundle's unpacking in scripts/gpu/common.sh included.
started=0
total=${TOTAL_S:-330}
work=${WORK:-/tmp/gpu-analyze}
archive=$out/gpu-analyze.tar.xz
rm -rf "$work"
mkdir -p "$work"/{ddp,torch,run,analyze,hta}
# jiterator's kernel cache: the default under $HOME may not be writable on the hosts.
export PYTORCH_KERNEL_CACHE_PATH=/tmp/torch-kernels OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}

pack() {
  # Into a part file, then renamed: a pack cut short never replaces the last whole one.
  (cd "$(dirname "$work")" && XZ_OPT=-3 timeout -k 5 30 tar cJf "$archive.part" "$(basename "$work")") &&
    mv "$archive.part" "$archive"
  cp "$work/log.txt" "$out/log.txt" 2>/dev/null
}

# gstep LIMIT LABEL [--to FILE] CMD…: the command under timeout -k 10, its limit cut to the batch's time left; says
# how it ended and after how long, then packs the folder. Its output goes to the log as it comes; with --to, stdout
# (a document) goes to FILE instead, stderr to FILE with .log for .json/.txt, and the log gets stderr's last lines.
gstep() {
  local limit=$1 label=$2; shift 2
  local file=
  if [[ $1 == --to ]]; then file=$2; shift 2; fi
  local left=$((total - (SECONDS - started)))
  ((left < limit)) && limit=$left
  echo; echo "=== $(date +%T) [$label] timeout $limit: $*${file:+ > $file}"
  if ((limit < 5)); then
    echo "(skipped: ${left} s of the ${total} s batch left)"
    return 0
  fi
  local t0=$SECONDS rc
  if [[ -n $file ]]; then
    local errors=${file%.*}.log
    timeout -k 10 "$limit" "$@" > "$file" 2> "$errors"
    rc=$?
    tail -n 15 "$errors"
  else
    timeout -k 10 "$limit" "$@"
    rc=$?
  fi
  echo "(exit $rc after $((SECONDS - t0)) s$( ((rc == 124 || rc == 137)) && echo ': TIMED OUT'))"
  pack
  return 0
}

gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
torchrun=(python3 -m torch.distributed.run --standalone --nproc_per_node=2)
{
  echo "gpu-analyze: $(date -u +%FT%TZ), repo $(git rev-parse --short HEAD 2>/dev/null || echo '?'), bundle $bundle, $gpus GPUs, batch limit ${total} s"
  gstep 20 gpus nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
  gstep 20 topology nvidia-smi topo -m
  gstep 30 torch python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version(), 'gpus', torch.cuda.device_count())"

  # a. DDP, two ranks (skipped with fewer than two GPUs: two ranks on one GPU is not what is measured); then at once
  # d. analyze of them and e. HTA on them, the comparison issue 27 asks for, before the steps that matter less.
  if ((gpus >= 2)); then
    for variant in no-overlap overlap; do
      gstep 90 "a: ddp $variant" --to "$work/ddp/$variant.json" \
        "${torchrun[@]}" scripts/torch/ddp_overlap.py "$work/ddp/$variant" "--$variant" ${DDP_ARGS:-}
      cat "$work/ddp/$variant.json"
    done
  else
    echo "(a skipped: $gpus GPU(s); the DDP traces need two)"
  fi
  for variant in no-overlap overlap; do
    traces=("$work/ddp/$variant"/rank*.pt.trace.json.gz)
    gstep 30 "d: analyze ddp $variant" "$cp" analyze "${traces[@]}" --json "$work/analyze/ddp-$variant.json"
  done
  for rank in 0 1; do
    gstep 30 "d: analyze --ab rank $rank" "$cp" analyze "$work/ddp/no-overlap/rank$rank.pt.trace.json.gz" \
      "$work/ddp/overlap/rank$rank.pt.trace.json.gz" --ab --json "$work/analyze/ddp-ab-rank$rank.json"
  done
  hta=build/hta-src/hta/trace_analysis.py
  [[ -f $hta ]] || echo "(e skipped: no build/hta-src; run scripts/hta/stage-hta.sh on the CPU machine and carry build/)"
  if [[ -f $hta ]]; then
    for variant in no-overlap overlap; do
      gstep 60 "e: hta ddp $variant" --to "$work/hta/ddp-$variant.json" \
        python3 scripts/hta/hta_overlap.py "$work/ddp/$variant"
    done
  fi

  # b. balanced.yaml in PyTorch on GPU 0; c. run of the same config from the bundle; d. and e. on their traces.
  gstep 75 "b: torch balanced" --to "$work/torch/balanced-torch.json" \
    env CUDA_VISIBLE_DEVICES=0 python3 scripts/torch/balanced_pipeline.py "$work/torch"
  cat "$work/torch/balanced-torch.json"
  gstep 90 "c: cuda-pipe run" "$cp" run configs/balanced.yaml --device 0 \
    --json "$work/run/balanced.json" --trace "$work/run/balanced-trace.json"
  gstep 30 "d: analyze run trace" "$cp" analyze "$work/run/balanced-trace.json" --json "$work/analyze/balanced-run.json"
  gstep 30 "d: analyze torch trace" "$cp" analyze "$work/torch/balanced-torch.pt.trace.json.gz" \
    --json "$work/analyze/balanced-torch.json"
  gstep 30 "d: analyze run trace, Result's rates" "$cp" analyze "$work/run/balanced-trace.json" \
    --rates "$work/run/balanced.json" --json "$work/analyze/balanced-run-rates.json"
  gstep 30 "d: analyze torch trace, Result's rates" "$cp" analyze "$work/torch/balanced-torch.pt.trace.json.gz" \
    --rates "$work/run/balanced.json" --json "$work/analyze/balanced-torch-rates.json"
  if [[ -f $hta ]]; then
    gstep 45 "e: hta torch trace" --to "$work/hta/balanced-torch.json" \
      python3 scripts/hta/hta_overlap.py "$work/torch/balanced-torch.pt.trace.json.gz"
  fi

  # f. The comparison.
  gstep 30 "f: compare" --to "$work/compare.txt" python3 scripts/hta/compare_analyze.py "$work" --json "$work/compare.json"
  cat "$work/compare.txt"
  echo
  echo "gpu-analyze: done after $((SECONDS - started)) s; files:"
  (cd "$work" && find . -type f -printf '%8s %p\n' | sort -k2)
} 2>&1 | tee "$work/log.txt"
pack
ls -l "$out"
