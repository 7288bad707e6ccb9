#!/usr/bin/env bash
# Issue 24's follow-up on a two-GPU host, from the bundle, each command under its own timeout: a reduce-scatter
# version of ddp.yaml from one process and as two ranks (what verification says of it), ddp.yaml as two ranks under
# mpirun with its default binding (a core a rank) and with --bind-to none, the ranks merged, then the whole GPU
# suite. Usage on the GPU host: bash scripts/gpu-issue24-followup.sh OUT [BUNDLE]
source "$(dirname "$0")/gpu-common.sh"
mpi=(mpirun --allow-run-as-root -np 2 -x PATH -x LD_LIBRARY_PATH -x NCCL_DEBUG -x NCCL_NVLS_ENABLE -x CUDA_PIPE_CACHE_DIR)
sed -e 's/op: allreduce/op: reducescatter/' "$root/configs/ddp.yaml" > /tmp/ddp-rs.yaml
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  step 60 "$cp" run /tmp/ddp-rs.yaml --devices all --chunks 4 --json "$out/rs-devices.json"
  step 90 "${mpi[@]}" "$cp" run /tmp/ddp-rs.yaml --chunks 4 --nccl-dir /tmp --json "$out/rs-rank%r.json"
  step 120 "${mpi[@]}" "$cp" run "$root/configs/ddp.yaml" --chunks 4 --nccl-dir /tmp --json "$out/ddp-rank%r.json"
  step 120 "${mpi[@]}" --bind-to none "$cp" run "$root/configs/ddp.yaml" --chunks 4 --nccl-dir /tmp --json "$out/ddp-unbound-rank%r.json"
  step 30 "$cp" merge "$out"/ddp-unbound-rank0.json "$out"/ddp-unbound-rank1.json
} 2>&1 | tee "$out/log.txt"
cd /tmp/cuda-pipe && timeout -k 10 "${SUITE_S:-300}" bin/node --test --test-concurrency=1 --test-timeout=200000 --test-reporter=spec dist/test/gpu/*.test.js dist/src/kinds/*/*.gpu.test.js > "$out/suite.log" 2>&1
echo "suite: exit $?" >> "$out/suite.log"
grep -E '^ℹ (tests|pass|fail|skipped|duration_ms)|^suite' "$out/suite.log" | tee -a "$out/log.txt"
