#!/usr/bin/env bash
# Issue 24 on a host with two GPUs or more, from the bundle, every command under its own timeout and logged as it
# goes. For every GPU of the host, then (on a larger host) for GPUs 0 and 1 alone: ddp.yaml with the defaults
# (tracing on, adaptive reps) from one process over every GPU and as one rank per GPU under mpirun, the ranks merged;
# the sweep over bucket sizes from one process (each size's collective alone is a mode of it) beside the native
# program at the same sizes; the PyTorch peer under torchrun. On two GPUs also the split of balanced.yaml, the
# cross-device configs and the native two-link check. Then the whole GPU suite on two GPUs (on a 4-GPU host it runs
# on GPUs 2 and 3 while the two-GPU data-parallel figures are taken on GPUs 0 and 1: NVLink, not the host's links,
# carries those). Usage on the GPU host: bash scripts/gpu-issue24.sh OUT [BUNDLE]
source "$(dirname "$0")/gpu-common.sh"
# The data-parallel figures over the first $1 GPUs, into $out/x$1.
ddp() {
  local n=$1 dir=$out/x$1
  mkdir -p "$dir"
  export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1)))
  step 90 "$cp" run "$root/configs/ddp.yaml" --devices all --chunks 4 --json "$dir/ddp-devices.json"
  step 120 mpirun --allow-run-as-root -np "$n" -x PATH -x LD_LIBRARY_PATH -x NCCL_DEBUG -x NCCL_NVLS_ENABLE -x CUDA_VISIBLE_DEVICES -x CUDA_PIPE_CACHE_DIR "$cp" run "$root/configs/ddp.yaml" --chunks 4 --nccl-dir /tmp --json "$dir/ddp-rank%r.json"
  step 30 "$cp" merge "$dir"/ddp-rank*.json --json "$dir/ddp-merged.json"
  # Which transport NCCL chose between the ranks' processes (P2P over NVLink, or SHM through the host).
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P,SHM step 120 mpirun --allow-run-as-root -np "$n" -x PATH -x LD_LIBRARY_PATH -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS -x NCCL_NVLS_ENABLE -x CUDA_VISIBLE_DEVICES -x CUDA_PIPE_CACHE_DIR "$cp" run "$root/configs/ddp.yaml" --chunks 4 --nccl-dir /tmp --reps 20 --no-tracing > "$dir/mpirun-nccl-info.txt" 2>&1
  grep -E 'via (P2P|SHM|NET)|all-reduce alone' "$dir/mpirun-nccl-info.txt" | sort | uniq -c | head -20
  step 150 "$cp" sweep "$root/configs/ddp.yaml" --devices all --json "$dir/ddp-sweep.json"
  step 60 "$root/build/native/allreduce" -g "$n" -w 5 -n 20 --sizes 16M,32M,64M,128M,256M,512M
  step 120 torchrun --standalone --nproc-per-node "$n" "$root/scripts/torch/ddp.py" --buckets 1,2,4,8,16,32
  unset CUDA_VISIBLE_DEVICES
}
# The split of balanced.yaml and the pipeline across GPUs 0 and 1, beside the native two-link check.
split() {
  local dir=$out/x2
  mkdir -p "$dir"
  export CUDA_VISIBLE_DEVICES=0,1
  step 60 "$cp" run --devices all --gate --json "$dir/balanced-gate.json"
  step 60 "$cp" run --devices all --json "$dir/balanced.json"
  step 60 "$cp" run "$root/configs/cross-device.yaml" --json "$dir/cross-device.json"
  step 60 "$cp" run "$root/configs/cross-device-compute.yaml" --json "$dir/cross-device-compute.json"
  step 60 nvcc -O2 -o /tmp/two-gpu-link "$root/scripts/native/two-gpu-link.cu"
  step 30 /tmp/two-gpu-link own
  step 30 /tmp/two-gpu-link shared
  unset CUDA_VISIBLE_DEVICES
}
suite() {
  cd /tmp/cuda-pipe && CUDA_VISIBLE_DEVICES=$1 timeout -k 10 "${SUITE_S:-420}" bin/node --test --test-concurrency=1 --test-timeout=200000 --test-reporter=spec dist/test/gpu/*.test.js dist/src/kinds/*/*.gpu.test.js > "$out/suite.log" 2>&1
  echo "suite on GPUs $1: exit $?" >> "$out/suite.log"
}
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  nvidia-smi topo -m
  echo "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
  if [ "$gpus" -gt 2 ]; then ddp "$gpus"; fi
  split
  if [ "$gpus" -ge 4 ]; then
    suite 2,3 &
    ddp 2
    wait
  else
    ddp 2
    suite 0,1
  fi
  grep -E '^ℹ (tests|pass|fail|skipped|duration_ms)|^suite on' "$out/suite.log"
} 2>&1 | tee "$out/log.txt"
