#!/usr/bin/env bash
# The GPU validation of cuda-pipe on a GPU host, from the portable bundle (`npm run bundle`; the host has no Node.js):
#   suite    the GPU test suite (test/gpu/ and each kind's *.gpu.test.ts) on every visible GPU, then on GPU 0 alone
#            where there are several (the two-GPU tests skip there, saying why)
#   configs  the configs whose conclusions users act on, each with --json: balanced, inference, gemm,
#            weight-streaming, host-stage, loader, and ddp on every visible GPU; `report` of each, as a user reads it
#   peers    the same work written natively and in PyTorch, beside the cuda-pipe config that does it, on GPU 0 (and
#            every GPU for the collective): the native programs of scripts/native/ (built into build/native/ with the
#            host's nvcc by scripts/native/build.sh where missing) and scripts/torch/'s programs, each as JSON lines
#            in peers/<program>.jsonl, the configs' Results in peers/*.json:
#              gemm      native gemm.cu and torch gemm.py, 16 bf16 and fp32 4096³ products over 4 streams on cuda-pipe's
#                        data, against configs/gemm.yaml and gemm-fp32.yaml
#              matmul    native matmul.cu (each product alone, 400 reps) against inference-matmul.yaml's stage modes;
#                        torch inference.py (16 batches of 512 rows over 4 streams) against its overlapped mode
#              weights   torch weight_streaming.py against configs/weight-streaming.yaml
#              collective (two GPUs or more) native allreduce.cu on every GPU over 1 MiB to 1 GiB; torch ddp.py under
#                        torch.distributed.run at 8, 16 and 32 buckets against ddp.yaml --devices all at each
#   pairs    the finding pairs (scripts/torch/finding_pairs.py on GPU 0; ddp_overlap.py's variants on two GPUs)
#   gate     the perf gate as CI runs it from the bundle (scripts/perf-regression against the stored baselines for
#            this GPU), with its JUnit, Markdown and CSV verdicts
# Everything lands in OUT/validation.tgz (the device tool brings back a few files only), to be unpacked under
# docs/measurements/<date>-<card>/. Usage: bash scripts/gpu/validate.sh OUT [part…] (default: suite configs pairs;
# peers and gate on request: each part fits in one 10-minute device call).
set -uo pipefail
out=${1:?usage: validate.sh OUT [suite] [configs] [peers] [pairs] [gate]}
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
    peers)
      peers=$work/peers
      mkdir -p "$peers"
      # A peer's output, shown, with its JSON lines (those starting with "{") kept in peers/NAME.jsonl.
      record() {
        local name=$1 limit=$2
        shift 2
        step "$limit" "$@" 2>&1 | tee >(grep '^{' >>"$peers/$name.jsonl")
      }
      native=$root/build/native
      {
        if [ ! -x "$native/gemm" ] || [ ! -x "$native/matmul" ] || [ ! -x "$native/allreduce" ]; then
          if command -v nvcc >/dev/null; then step 300 bash "$root/scripts/native/build.sh"; else echo "no nvcc: native peers skipped"; fi
        fi
        (
        # The one-GPU peers on GPU 0 (or the first GPU the caller shows); the collective below takes every GPU.
        export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
        for dtype in bf16 fp32; do
          args=(--dtype "$dtype" --size 4096 --count 16 --streams 4)
          # The native program on PyTorch's data (pattern) and on the config's (cuda-pipe): a GEMM's clock depends on
          # the bits it multiplies.
          for data in pattern cuda-pipe; do
            [ -x "$native/gemm" ] && record gemm-native 60 "$native/gemm" "${args[@]}" --data "$data"
          done
          record gemm-torch 90 python3 "$root/scripts/torch/gemm.py" "${args[@]}" --data pattern
        done
        step 90 "$cp" run "$root/configs/gemm.yaml" --reps 20 --warmup 3 --no-tracing --json "$peers/gemm.json"
        step 90 "$cp" run "$root/configs/gemm-fp32.yaml" --reps 20 --warmup 3 --no-tracing --json "$peers/gemm-fp32.json"
        [ -x "$native/matmul" ] && record matmul-native 60 "$native/matmul" --reps 400 --warmup 20
        step 150 "$cp" run "$root/configs/inference-matmul.yaml" --reps 400 --warmup 20 --no-tracing --json "$peers/inference-matmul.json"
        record inference-torch 90 python3 "$root/scripts/torch/inference.py" --batches 16 --rows 512 --streams 4 --reps 30 --warmup 3
        record weight-streaming-torch 90 python3 "$root/scripts/torch/weight_streaming.py"
        step 90 "$cp" run "$root/configs/weight-streaming.yaml" --reps 20 --warmup 3 --no-tracing --json "$peers/weight-streaming.json"
        )
        if [ "$gpus" -ge 2 ]; then
          [ -x "$native/allreduce" ] && step 120 "$native/allreduce" -g "$gpus" -w 5 -n 20 -b 1M -e 1G -f 2 | tee "$peers/allreduce-${gpus}gpu.txt"
          record ddp-torch 240 python3 -m torch.distributed.run --standalone --nproc_per_node="$gpus" "$root/scripts/torch/ddp.py" --buckets 8,16,32
          for buckets in 8 16 32; do
            step 120 "$cp" run "$root/configs/ddp.yaml" --devices all --chunks "$buckets" --reps 20 --warmup 3 --json "$peers/ddp-$buckets.json"
          done
        else
          echo "one GPU: the collective peers skipped"
        fi
      } >"$work/peers.log" 2>&1
      ;;
    pairs)
      timeout -k 10 200 env CUDA_VISIBLE_DEVICES=0 PYTHONUNBUFFERED=1 python3 "$root/scripts/torch/finding_pairs.py" "$work/pairs" \
        >"$work/pairs.jsonl" 2>"$work/pairs.err"
      if [ "$gpus" -ge 2 ]; then
        for variant in no-overlap:--no-overlap early:--early overlap:--overlap no-overlap-2:--no-overlap early-2:--early overlap-2:--overlap; do
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
