#!/usr/bin/env bash
# Issue 17's gemm stage on a GPU host, from the bundle: its GPU test (a gemm and a kernel per chunk, verified within a
# tolerance, replayed as a graph, traced), then configs/gemm.yaml and configs/gemm-fp32.yaml beside the native cuBLAS
# program on the same work (build/native/gemm, scripts/native/build.sh), on zeros and on a pattern, since the configs'
# operands are unseeded device scratch. Run from a checkout holding build/cuda-pipe-linux-x64.tar.xz (npm run bundle)
# and build/native/gemm; a few minutes. Usage: bash scripts/gpu-gemm-stage.sh OUTDIR. Logs go to OUTDIR/gemm-stage.log,
# Results to OUTDIR/*.json.
set -uo pipefail
out=${1:?usage: gpu-gemm-stage.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(pwd)
[ -f build/cuda-pipe-linux-x64.tar.xz ] || { echo 'no build/cuda-pipe-linux-x64.tar.xz here: run npm run bundle first'; exit 3; }
rm -rf /tmp/cuda-pipe && tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 3
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  step /tmp/cuda-pipe/bin/node --test --test-reporter=spec /tmp/cuda-pipe/dist/test/gpu/gemm-stage.test.js
  for name in gemm gemm-fp32; do
    step /tmp/cuda-pipe/bin/cuda-pipe run "$here/configs/$name.yaml" --json "$out/$name.json" --svg "$out/$name.svg"
    step /tmp/cuda-pipe/bin/cuda-pipe run "$here/configs/$name.yaml" --mode graph --json "$out/$name-graph.json"
  done
  if [ -x build/native/gemm ]; then
    for dtype in bf16 fp32; do
      for data in zeros pattern; do step build/native/gemm --dtype "$dtype" --size 4096 --count 16 --streams 4 --data "$data"; done
      step build/native/gemm --dtype "$dtype" --size 4096 --count 16 --streams 4 --data pattern --graph
    done
  else
    echo 'no build/native/gemm: run scripts/native/build.sh to compare with the native program'
  fi
} 2>&1 | tee "$out/gemm-stage.log"
