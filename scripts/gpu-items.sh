#!/usr/bin/env bash
# Buffers of any shape (issue 17, section 2) on a GPU host, from the bundle: the GPU test of rows with a resident
# table (byte for byte, and within a tolerance under a device-memory ring), then configs/items.yaml run, as a
# dry-run plan, on each host memory kind, and saved as a Result. Run from a checkout holding
# build/cuda-pipe-linux-x64.tar.xz (npm run bundle); about a minute. Usage: bash scripts/gpu-items.sh OUTDIR.
set -uo pipefail
out=${1:?usage: gpu-items.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -f build/cuda-pipe-linux-x64.tar.xz ] || { echo 'no build/cuda-pipe-linux-x64.tar.xz here: run npm run bundle first'; exit 3; }
rm -rf /tmp/cuda-pipe && tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 3
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
cp=/tmp/cuda-pipe/bin/cuda-pipe
cd /tmp/cuda-pipe || exit 3
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  step /tmp/cuda-pipe/bin/node --test --test-reporter=spec dist/test/gpu/items.test.js
  step "$cp" run configs/items.yaml --dry-run
  step "$cp" run configs/items.yaml --json "$out/items.json"
  step "$cp" run configs/items.yaml --host-memory pinned,pageable
} 2>&1 | tee "$out/items.log"
