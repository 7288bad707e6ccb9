#!/usr/bin/env bash
# Issue 17's gemm stage on a GPU host, from the bundle: its GPU test (a gemm and a kernel per chunk, verified within a
# tolerance, replayed as a graph, traced), then configs/gemm.yaml and configs/gemm-fp32.yaml beside the native cuBLAS
# program on the same work (build/native/gemm, scripts/native/build.sh). The configs seed A and B with cuda-pipe's
# pattern, so the like-for-like native figure is its --data cuda-pipe (the same distribution); zeros and its own
# pattern are run too, to show how much the data moves a GEMM's time. The native run goes before and after each
# cuda-pipe run so that drift of the card's clocks shows. Run from a checkout holding build/cuda-pipe-linux-x64.tar.xz
# (npm run bundle) and build/native/gemm; a few minutes. Usage: bash scripts/gpu-gemm-stage.sh OUTDIR. Logs go to
# OUTDIR/gemm-stage.log, Results to OUTDIR/*.json, native JSON lines to OUTDIR/native.jsonl, the ratios to
# OUTDIR/ratio.txt.
set -uo pipefail
out=${1:?usage: gpu-gemm-stage.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(pwd)
[ -f build/cuda-pipe-linux-x64.tar.xz ] || { echo 'no build/cuda-pipe-linux-x64.tar.xz here: run npm run bundle first'; exit 3; }
rm -rf /tmp/cuda-pipe && tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 3
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
native() { # DTYPE DATA [more arguments]
  local dtype=$1 data=$2; shift 2
  echo; echo "=== build/native/gemm --dtype $dtype --size 4096 --count 16 --streams 4 --data $data $*"
  build/native/gemm --dtype "$dtype" --size 4096 --count 16 --streams 4 --data "$data" "$@" | tee -a "$out/native.jsonl"
  echo "(exit ${PIPESTATUS[0]})"
}
# A bf16 GEMM on the H200 is power-limited: its SM clock falls from 1980 MHz after a few hundred milliseconds of
# back-to-back products, and the native program's default 10 reps (~30 ms) end before that. So each cuda-pipe run is
# paired with the native program run as long (sustained: 400 reps, about as long as cuda-pipe's default stopping
# rule keeps a mode running) and as short (burst: cuda-pipe --reps 10 --warmup 3 against the native default), with
# the SM clock and power sampled every 50 ms into OUT/clocks.csv.
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 50 > "$out/clocks.csv" 2>/dev/null &
sampler=$!
{
  step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  step /tmp/cuda-pipe/bin/node --test --test-reporter=spec /tmp/cuda-pipe/dist/src/kinds/gemm/stage.gpu.test.js
  [ -x build/native/gemm ] || echo 'no build/native/gemm: run scripts/native/build.sh to compare with the native program'
  for pair in gemm:bf16 gemm-fp32:fp32; do
    name=${pair%%:*} dtype=${pair##*:}
    [ -x build/native/gemm ] && native "$dtype" cuda-pipe --reps 400
    step /tmp/cuda-pipe/bin/cuda-pipe run "$here/configs/$name.yaml" --json "$out/$name.json" --svg "$out/$name.svg"
    [ -x build/native/gemm ] && native "$dtype" cuda-pipe --reps 400
    sleep 5
    [ -x build/native/gemm ] && native "$dtype" cuda-pipe
    step /tmp/cuda-pipe/bin/cuda-pipe run "$here/configs/$name.yaml" --reps 10 --warmup 3 --json "$out/$name-burst.json"
    [ -x build/native/gemm ] && native "$dtype" cuda-pipe
    step /tmp/cuda-pipe/bin/cuda-pipe run "$here/configs/$name.yaml" --mode graph --json "$out/$name-graph.json"
    if [ -x build/native/gemm ]; then
      native "$dtype" cuda-pipe --reps 400 --graph
      for data in zeros pattern; do native "$dtype" "$data"; done
    fi
  done
  # Each config's overlapped median against the native runs on the same data, issued the same way, as long.
  step /tmp/cuda-pipe/bin/node -e '
    const fs = require("fs");
    const [dir] = process.argv.slice(1);
    const native = fs.readFileSync(dir + "/native.jsonl", "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const lines = [];
    for (const [name, dtype] of [["gemm", "bf16"], ["gemm-fp32", "fp32"]]) {
      for (const [suffix, issue, reps] of [["", "stream", 400], ["-burst", "stream", 10], ["-graph", "graph", 400]]) {
        const file = dir + "/" + name + suffix + ".json";
        if (!fs.existsSync(file)) continue;
        const r = JSON.parse(fs.readFileSync(file, "utf8"));
        const mode = r.modes.find((m) => m.role.kind === "overlapped" && (m.role.layout.issue ?? "stream") === issue);
        const same = native.filter((n) => n.dtype === dtype && n.data === "cuda-pipe" && n.issue === issue && n.reps === reps).map((n) => n.medianMs);
        if (!mode || same.length === 0) continue;
        const ref = same.reduce((a, b) => a + b, 0) / same.length;
        lines.push(`${name} (${dtype}, ${issue}, ${reps === 10 ? "burst: 10 reps" : "sustained"}): cuda-pipe ${mode.stats.median.toFixed(3)} ms (${mode.stats.n ?? mode.samples?.length ?? "?"} reps), native on the same data ${same.map((x) => x.toFixed(3)).join(" / ")} ms (${reps} reps, mean ${ref.toFixed(3)}): ratio ${(mode.stats.median / ref).toFixed(3)}`);
      }
    }
    console.log(lines.join("\n"));
    fs.writeFileSync(dir + "/ratio.txt", lines.join("\n") + "\n");
  ' "$out"
} 2>&1 | tee "$out/gemm-stage.log"
kill "$sampler" 2>/dev/null
