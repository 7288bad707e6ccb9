#!/usr/bin/env bash
# Issue 9, the stream toolbox, on a GPU host: the GPU test suite and one benchmark run per toolbox item, from the
# bundle at /tmp/cuda-pipe. Run from a checkout holding build/cuda-pipe-linux-x64.tar.xz, it unpacks that first
# (replacing any older /tmp/cuda-pipe); run from elsewhere, it uses /tmp/cuda-pipe as it is.
# Usage: bash scripts/gpu/toolbox.sh OUTDIR [part...]
#   parts: tests (the whole GPU suite), tests-toolbox (test/gpu/toolbox.test.ts alone, about 4 min: the 8 GiB ring
#   takes 1 to 2 of them), tests-core (the other GPU tests), bench (every benchmark below, about 5 min), or one of
#   graphs, host, ring, legacy, memory, events, priorities; default: tests bench. Run `tests` and `bench` as two
#   device commands: each fits in 10 minutes. Logs go to OUTDIR/<part>.log, Result JSON files to OUTDIR/*.json.
set -uo pipefail
out=${1:?usage: toolbox.sh OUTDIR [part...]}
shift
parts=("${@:-tests bench}")
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -f build/cuda-pipe-linux-x64.tar.xz ]; then rm -rf /tmp/cuda-pipe && tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 3; fi
[ -x /tmp/cuda-pipe/bin/cuda-pipe ] || { echo 'no bundle at /tmp/cuda-pipe and no build/cuda-pipe-linux-x64.tar.xz here'; exit 3; }
cd /tmp/cuda-pipe || exit 3
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
cp=/tmp/cuda-pipe/bin/cuda-pipe
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
run() {
  local name=$1; shift
  local tag; tag=$(printf '%s' "$*" | tr -c 'A-Za-z0-9' '-')
  step "$cp" run "configs/$name.yaml" --json "$out/$name${tag:+-$tag}.json" "$@"
}

part() {
  case $1 in
    tests) step bin/cuda-pipe-gpu-tests ;;
    tests-toolbox) step bin/node --test --test-reporter=spec dist/test/gpu/toolbox.test.js ;;
    tests-core) step bin/node --test --test-reporter=spec dist/test/gpu/pipeline.test.js dist/test/gpu/runtime.test.js ;;
    bench) for p in graphs host ring legacy memory events priorities; do part "$p"; done ;;
    graphs)
      run graph-launches; run graph-launches --gate
      run graph-copies ;;
    host)
      run host-stage; run host-stage --wait thread; run host-stage --mode graph ;;
    ring)
      run stage-per-stream; run stage-per-stream --mode graph
      step "$cp" run configs/ring-8gib.yaml --json "$out/ring-8gib.json" ;;
    legacy)
      run legacy-default ;;
    memory)
      step "$cp" run configs/host-memory.yaml --host-memory pinned,pageable,write-combined,registered --json "$out/host-memory.json" ;;
    events)
      step "$cp" overhead; step "$cp" overhead ;;
    priorities)
      run priorities; run priorities --gate ;;
    *) echo "unknown part $1"; return 2 ;;
  esac
}

for p in ${parts[*]}; do part "$p" 2>&1 | tee "$out/$p.log"; done
