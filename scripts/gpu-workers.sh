#!/usr/bin/env bash
# Issue 18's groundwork on a GPU host: the worker pool's GPU test (decode into pinned memory by address in a
# worker, through the device and back, checksum in a worker) and the pool's scaling on the host's cores, from the
# bundle. Run from a checkout holding build/cuda-pipe-linux-x64.tar.xz (npm run bundle); about a minute.
# Usage: bash scripts/gpu-workers.sh OUTDIR. Logs go to OUTDIR/workers.log.
set -uo pipefail
out=${1:?usage: gpu-workers.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(pwd)
[ -f build/cuda-pipe-linux-x64.tar.xz ] || { echo 'no build/cuda-pipe-linux-x64.tar.xz here: run npm run bundle first'; exit 3; }
rm -rf /tmp/cuda-pipe && tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 3
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  step nproc
  step /tmp/cuda-pipe/bin/node --test --test-reporter=spec /tmp/cuda-pipe/dist/test/gpu/workers.test.js
  step /tmp/cuda-pipe/bin/node "$here/scripts/workers-scaling.mjs" /tmp/cuda-pipe/dist
} 2>&1 | tee "$out/workers.log"
