#!/usr/bin/env bash
# Issue 17's GEMM baselines on a GPU host: the native cuBLAS program (build/native/gemm, from scripts/native/build.sh)
# and PyTorch (scripts/torch/gemm.py) on the issue's reference shapes, 16 bf16 and fp32 4096³ products over 1 and 4
# streams, on zeros (as GPU-FACTS.md's figures) and on a seeded pattern (as cuda-pipe runs), stream-issued and as a
# graph; tf32, fp16 and 64 × 1024³ beside them; the cuBLAS GPU test from the bundle when one is here; and PyTorch's
# inference and weight-streaming pipelines. Run from the repository copy (holding build/native/gemm and, for the test,
# build/cuda-pipe-linux-x64.tar.xz). Logs go to OUT/log.txt, every JSON line to OUT/<program>.jsonl, and a table of
# torch against native to OUT/summary.txt. Usage: bash scripts/gpu-gemm.sh OUT
set -uo pipefail
out=${1:?usage: gpu-gemm.sh OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
gemm="$root/build/native/gemm"
torch_dir="$root/scripts/torch"
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
# Runs a baseline, shows its output and keeps its JSON line in OUT/<name>.jsonl.
record() {
  local name=$1; shift
  echo; echo "=== $*"
  "$@" > "$out/last.txt" 2>&1
  local code=$?
  cat "$out/last.txt"
  grep '^{' "$out/last.txt" >> "$out/$name.jsonl"
  echo "(exit $code)"
}
pair() {
  record native "$gemm" "$@"
  record torch python3 "$torch_dir/gemm.py" "$@"
}
{
  step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  [ -x "$gemm" ] || echo "no $gemm: run scripts/native/build.sh on the build machine and carry build/"
  for dtype in bf16 fp32; do
    for streams in 1 4; do
      for data in zeros pattern; do pair --dtype "$dtype" --size 4096 --count 16 --streams "$streams" --data "$data"; done
    done
    pair --dtype "$dtype" --size 4096 --count 16 --streams 4 --data pattern --graph
    for streams in 1 4; do pair --dtype "$dtype" --size 1024 --count 64 --streams "$streams" --data pattern; done
  done
  for dtype in tf32 fp16; do pair --dtype "$dtype" --size 4096 --count 16 --streams 4 --data pattern; done
  pair --dtype bf16 --size 4096 --count 16 --streams 4 --data pattern --shared-b
  if [ -f "$root/build/cuda-pipe-linux-x64.tar.xz" ]; then
    rm -rf /tmp/cuda-pipe && tar xJf "$root/build/cuda-pipe-linux-x64.tar.xz" -C /tmp
    (cd /tmp/cuda-pipe && step bin/node --test --test-reporter=spec dist/src/kinds/gemm/cublas.gpu.test.js)
  fi
  for streams in 1 4; do record inference python3 "$torch_dir/inference.py" --streams "$streams" --check; done
  record weight-streaming python3 "$torch_dir/weight_streaming.py"
  rm -f "$out/last.txt"
  echo; echo "=== torch against native (median ms)"
  python3 - "$out/native.jsonl" "$out/torch.jsonl" <<'PY' | tee "$out/summary.txt"
import json, os, sys
rows = lambda path: list(map(json.loads, open(path))) if os.path.exists(path) else []
key = lambda r: (r['dtype'], r['m'], r['n'], r['k'], r['count'], r['streams'], r['issue'], r['data'], r['sharedB'])
native = {key(r): r for r in rows(sys.argv[1])}
print(f"{'product':<34} {'streams':>7} {'issue':>6} {'data':>7} {'native ms':>10} {'torch ms':>9} {'torch/native':>12}")
for r in rows(sys.argv[2]):
    n = native.get(key(r))
    shape = f"{r['count']} x {r['dtype']} {r['m']}x{r['n']}x{r['k']}{' shared B' if r['sharedB'] else ''}"
    ratio = f"{r['medianMs'] / n['medianMs']:.3f}" if n else 'no native'
    print(f"{shape:<34} {r['streams']:>7} {r['issue']:>6} {r['data']:>7} {n['medianMs'] if n else '':>10} {r['medianMs']:>9} {ratio:>12}")
PY
} 2>&1 | tee "$out/log.txt"
