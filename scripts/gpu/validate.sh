#!/usr/bin/env bash
# The GPU validation of cuda-pipe on a GPU host, from the portable bundle (`npm run bundle`; the host has no Node.js):
#   suite    the GPU test suite (test/gpu/ and each kind's *.gpu.test.ts) on every visible GPU, then on GPU 0 alone
#            where there are several (the two-GPU tests skip there, saying why)
#   configs  the configs whose conclusions users act on, each with --json: balanced, inference, gemm,
#            weight-streaming, host-stage, loader, and ddp on every visible GPU; `report` of each, as a user reads it
#   pairs    the finding pairs (scripts/torch/finding_pairs.py on GPU 0; ddp_overlap.py's variants on two GPUs)
#   gate     the perf gate as CI runs it from the bundle (scripts/perf-regression against the stored baselines for
#            this GPU), with its JUnit, Markdown and CSV verdicts
# Everything lands in OUT/validation.tgz (the device tool brings back a few files only), to be unpacked under
# docs/measurements/<date>-<card>/. Usage: bash scripts/gpu/validate.sh OUT [part…] (default: suite configs pairs).
set -uo pipefail
out=${1:?usage: validate.sh OUT [suite] [configs] [pairs] [gate]}
shift
parts=${*:-suite configs pairs}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$out/validation
mkdir -p "$work"
tar xJf "$root/build/cuda-pipe-linux-x64.tar.xz" -C /tmp
cp=/tmp/cuda-pipe/bin/cuda-pipe
# NVLink multicast stays off, as the hosts' notes require; launchers' children inherit it.
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache NCCL_DEBUG=${NCCL_DEBUG:-WARN} NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
step() {
  local limit=$1
  shift
  echo
  echo "=== $(date +%T) timeout $limit: $*"
  local started=$SECONDS
  timeout -k 5 "$limit" "$@"
  echo "(exit $? after $((SECONDS - started)) s)"
}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$work/gpus.csv" 2>&1
for part in $parts; do
  case $part in
    suite)
      suite() { (cd /tmp/cuda-pipe && shopt -s nullglob && step 280 bin/node --test --test-concurrency=1 --test-timeout=120000 \
        --test-reporter=spec dist/test/gpu/*.test.js dist/src/kinds/*/*.gpu.test.js); }
      suite >"$work/suite-all-gpus.log" 2>&1
      [ "$gpus" -gt 1 ] && CUDA_VISIBLE_DEVICES=0 suite >"$work/suite-one-gpu.log" 2>&1
      ;;
    configs)
      {
        for config in balanced inference gemm weight-streaming host-stage loader; do
          step 90 "$cp" run "$root/configs/$config.yaml" --reps 20 --warmup 3 --json "$work/$config.json"
          step 30 "$cp" report "$work/$config.json" --verbose
        done
        step 150 "$cp" run "$root/configs/ddp.yaml" --devices all --reps 20 --warmup 3 --json "$work/ddp.json"
        step 30 "$cp" report "$work/ddp.json" --verbose
      } >"$work/configs.log" 2>&1
      ;;
    pairs)
      timeout -k 10 200 env CUDA_VISIBLE_DEVICES=0 PYTHONUNBUFFERED=1 python3 "$root/scripts/torch/finding_pairs.py" "$work/pairs" \
        >"$work/pairs.jsonl" 2>"$work/pairs.err"
      if [ "$gpus" -ge 2 ]; then
        for variant in no-overlap:--no-overlap overlap:--overlap no-overlap-2:--no-overlap overlap-2:--overlap; do
          timeout -k 10 60 python3 -m torch.distributed.run --standalone --nproc_per_node=2 "$root/scripts/torch/ddp_overlap.py" \
            "$work/pairs/ddp-${variant%%:*}" ${variant#*:} --steps 10 --warmup 3 --timed 30 >>"$work/ddp.jsonl" 2>>"$work/ddp.err"
        done
      fi
      ;;
    gate)
      (step 300 bash /tmp/cuda-pipe/scripts/perf-regression --out "$work/perf" --junit "$work/perf/junit.xml" --md "$work/perf/gate.md" \
        --csv "$work/perf/gate.csv") >"$work/gate.log" 2>&1
      ;;
  esac
done
tar czf "$out/validation.tgz" -C "$out" validation && rm -rf "$work"
