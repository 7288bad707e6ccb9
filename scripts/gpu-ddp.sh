#!/usr/bin/env bash
# The NCCL path on a GPU host, from the bundle: the NCCL GPU tests, configs/ddp.yaml run once (JSON, SVG and
# Chrome trace), and a sweep over bucket sizes (pipeline.chunks = buckets of the 32 layers). With two GPUs or more
# the same run from one process driving every GPU (--devices all: data-parallel, one NCCL rank a GPU), and as two
# ranks under mpirun, where mpirun is installed. Usage on the GPU host:
#   bash scripts/gpu-ddp.sh OUTDIR [BUNDLE]   (BUNDLE: the tarball, default build/cuda-pipe-linux-x64.tar.xz)
set -uo pipefail
out=${1:?output folder}
bundle=${2:-build/cuda-pipe-linux-x64.tar.xz}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tar xJf "$bundle" -C /tmp
cp="/tmp/cuda-pipe/bin/cuda-pipe"
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
cd /tmp/cuda-pipe
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  nvidia-smi --query-gpu=index,name --format=csv,noheader
  step bin/node --test --test-concurrency=1 --test-reporter=spec dist/src/kinds/collective/nccl.gpu.test.js
  step "$cp" run configs/ddp.yaml --json "$out/ddp.json" --svg "$out/ddp.svg" --trace "$out/ddp-trace.json"
  step "$cp" sweep configs/ddp.yaml --chunks 2,4,8,16,32 --max-time 8 --json "$out/ddp-sweep.json" --md "$out/ddp-sweep.md"
  gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
  if [ "$gpus" -ge 2 ]; then
    # One process, every GPU a rank (ncclCommInitAll), each bucket's calls grouped across devices.
    step "$cp" run configs/ddp.yaml --devices all --json "$out/ddp-devices.json" --svg "$out/ddp-devices.svg" --trace "$out/ddp-devices-trace.json" --md "$out/ddp-devices.md"
  else
    echo "=== one process over every GPU skipped: $gpus GPU(s)"
  fi
  if [ "$gpus" -ge 2 ] && command -v mpirun >/dev/null; then
    step mpirun --allow-run-as-root -np 2 -x PATH -x LD_LIBRARY_PATH "$cp" run configs/ddp.yaml --json "$out/ddp-2ranks-%r.json" --nccl-dir /tmp
  else
    echo "=== two ranks skipped: $gpus GPU(s), mpirun $(command -v mpirun || echo missing)"
  fi
} 2>&1 | tee "$out/log.txt"
