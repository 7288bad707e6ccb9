#!/usr/bin/env bash
# Issue 15 part 4 on a GPU host: configs/default-streams.yaml (chunk 1's load on cudaStreamPerThread and on
# cudaStreamLegacy among blocking streams, beside the layout without it) run three times from the bundle, with the
# Result, the timeline SVG and the report, then its GPU test. Run from a checkout holding
# build/cuda-pipe-linux-x64.tar.xz, it unpacks that first; from elsewhere it uses /tmp/cuda-pipe as it is.
# Usage: bash scripts/gpu-default-streams.sh OUTDIR   (about 2 minutes; logs in OUTDIR/default-streams.log)
set -uo pipefail
out=${1:?usage: gpu-default-streams.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -f build/cuda-pipe-linux-x64.tar.xz ]; then rm -rf /tmp/cuda-pipe && tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 3; fi
[ -x /tmp/cuda-pipe/bin/cuda-pipe ] || { echo 'no bundle at /tmp/cuda-pipe and no build/cuda-pipe-linux-x64.tar.xz here'; exit 3; }
cd /tmp/cuda-pipe || exit 3
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
cp=/tmp/cuda-pipe/bin/cuda-pipe
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  step "$cp" run configs/default-streams.yaml --dry-run
  for i in 1 2 3; do
    step "$cp" run configs/default-streams.yaml --json "$out/default-streams-$i.json" --svg "$out/default-streams-$i.svg"
  done
  step "$cp" report "$out/default-streams-1.json" --html "$out/default-streams-1.html"
  step bin/node --test --test-reporter=spec --test-name-pattern default-streams dist/test/gpu/toolbox.test.js
} 2>&1 | tee "$out/default-streams.log"
