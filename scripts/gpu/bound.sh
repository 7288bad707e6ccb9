#!/usr/bin/env bash
# Issue 15, part 1: is the overlap model's bound a floor? Runs every shipped one-GPU config (cross-device*.yaml need
# two GPUs) and the default sweeps of balanced and small, twice each, with --json into OUTDIR, then prints every
# overlapped mode's and sweep layout's efficiency (bound / measured median) and the largest. Exits 1 when any is
# above 1.01. About 6 minutes of GPU time on the H200. Usage on the GPU host: bash scripts/gpu/bound.sh OUTDIR
set -uo pipefail
out=${1:?output folder}
mkdir -p "$out"
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
cp="/tmp/cuda-pipe/bin/cuda-pipe"
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
cd /tmp/cuda-pipe
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  for pass in 1 2; do
    for config in configs/*.yaml; do
      name=$(basename "$config" .yaml)
      case "$name" in cross-device*) continue ;; esac
      # A fixed rep count keeps the session short; the bound takes each part's fastest rep, the efficiency the median.
      step "$cp" run "$config" --reps 15 --warmup 3 --no-tracing --json "$out/run-$name-$pass.json"
    done
    for name in balanced small; do
      # 15 reps a mode, the model's parts (a kernels-chunked mode per layout) and the layouts alike, keep the sweep short.
      step "$cp" sweep "configs/$name.yaml" --max-time 20 --set repetitions.reps=15 --json "$out/sweep-$name-$pass.json"
    done
  done
} 2>&1 | tee "$out/log.txt"
python3 - "$out" <<'PY' | tee "$out/efficiency.txt"
import glob, json, os, sys
LIMIT = 1.01
rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], '*.json'))):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as error:
        rows.append((os.path.basename(path), 'unreadable', str(error), 0, 0, '', float('inf')))
        continue
    for result in doc if isinstance(doc, list) else [doc]:
        for mode in result.get('modes', []):
            analysis = mode.get('analysis')
            if mode['role']['kind'] != 'overlapped' or not analysis:
                continue
            layout = mode['role']['layout']
            issue = layout.get('issue', 'stream')
            rows.append((os.path.basename(path), mode['id'], issue, mode['stats']['median'], analysis['bound']['ms'],
                         analysis['bound']['limitedBy'], analysis['efficiency']))
if not rows:
    print('no overlapped modes found: did the runs fail? see log.txt')
    sys.exit(1)
print(f"{'file':34} {'mode':70} {'issue':6} {'median ms':>10} {'bound ms':>10} {'limited by':12} {'eff':>6}")
for file, mode, issue, median, bound, limit, eff in rows:
    flag = '  ABOVE' if eff > LIMIT else ''
    print(f"{file:34} {mode:70} {issue:6} {median:10.4f} {bound:10.4f} {limit:12} {eff:6.3f}{flag}")
worst = max(rows, key=lambda r: r[6])
print(f"\n{len(rows)} overlapped modes and layouts; max efficiency {worst[6]:.3f} ({worst[0]} {worst[1]}); limit {LIMIT}")
sys.exit(1 if worst[6] > LIMIT else 0)
PY
status=${PIPESTATUS[0]}
expected=$(( 2 * ($(ls configs/*.yaml | grep -vc '/cross-device') + 2) ))
found=$(ls "$out"/*.json 2>/dev/null | wc -l)
if [ "$found" -ne "$expected" ]; then echo "only $found of $expected result files were written: see $out/log.txt"; exit 1; fi
exit "$status"
