#!/usr/bin/env bash
# A/B timing of two bundles on the GPU host, interleaved so that drift on a shared host hits both alike: the
# balanced config at 16 and 32 chunks and `overhead`, ROUNDS times each. Extra arguments go to the B runs only
# (e.g. --wait thread). Usage: bash scripts/gpu/ab.sh A.tar.xz B.tar.xz OUTDIR [ROUNDS] [-- B-only run flags]
set -uo pipefail
a=${1:?bundle A}; b=${2:?bundle B}; out=${3:?output folder}; rounds=${4:-3}
shift 4 2>/dev/null || shift $#
[ "${1:-}" = "--" ] && shift
mkdir -p "$out" /tmp/ab-a /tmp/ab-b
tar xJf "$a" -C /tmp/ab-a && tar xJf "$b" -C /tmp/ab-b
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
median() { node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1]));const m=(r.modes??[]).find(m=>m.kind==="overlapped"||m.role?.kind==="overlapped");console.log(m.stats.median.toFixed(4))' "$1"; }
for round in $(seq 1 "$rounds"); do
  for side in a b; do
    cp=/tmp/ab-$side/cuda-pipe/bin/cuda-pipe
    extra=(); [ "$side" = b ] && extra=("$@")
    for chunks in 16 32; do
      "$cp" run --chunks "$chunks" --json "$out/$side-$chunks-$round.json" "${extra[@]}" > "$out/$side-$chunks-$round.txt" 2>&1
      echo "round $round $side chunks $chunks: $(PATH=/tmp/ab-$side/cuda-pipe/bin:$PATH median "$out/$side-$chunks-$round.json") ms"
    done
    "$cp" overhead "${extra[@]}" 2>&1 | sed "s/^/round $round $side overhead: /" | grep -v 'Host cost'
  done
done
