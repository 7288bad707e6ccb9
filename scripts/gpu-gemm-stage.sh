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
native() { # DTYPE DATA [--graph]
  echo; echo "=== build/native/gemm --dtype $1 --size 4096 --count 16 --streams 4 --data $2 ${3:-}"
  build/native/gemm --dtype "$1" --size 4096 --count 16 --streams 4 --data "$2" ${3:-} | tee -a "$out/native.jsonl"
  echo "(exit ${PIPESTATUS[0]})"
}
{
  step nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  step /tmp/cuda-pipe/bin/node --test --test-reporter=spec /tmp/cuda-pipe/dist/test/gpu/gemm-stage.test.js
  [ -x build/native/gemm ] || echo 'no build/native/gemm: run scripts/native/build.sh to compare with the native program'
  for pair in gemm:bf16 gemm-fp32:fp32; do
    name=${pair%%:*} dtype=${pair##*:}
    [ -x build/native/gemm ] && native "$dtype" cuda-pipe
    step /tmp/cuda-pipe/bin/cuda-pipe run "$here/configs/$name.yaml" --json "$out/$name.json" --svg "$out/$name.svg"
    [ -x build/native/gemm ] && native "$dtype" cuda-pipe
    step /tmp/cuda-pipe/bin/cuda-pipe run "$here/configs/$name.yaml" --mode graph --json "$out/$name-graph.json"
    if [ -x build/native/gemm ]; then
      native "$dtype" cuda-pipe --graph
      for data in zeros pattern; do native "$dtype" "$data"; done
    fi
  done
  # Each config's overlapped median against the mean of the native runs on the same data, issued the same way.
  step /tmp/cuda-pipe/bin/node -e '
    const fs = require("fs");
    const [dir] = process.argv.slice(1);
    const native = fs.readFileSync(dir + "/native.jsonl", "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const lines = [];
    for (const [name, dtype] of [["gemm", "bf16"], ["gemm-fp32", "fp32"]]) {
      for (const [suffix, issue] of [["", "stream"], ["-graph", "graph"]]) {
        const file = dir + "/" + name + suffix + ".json";
        if (!fs.existsSync(file)) continue;
        const r = JSON.parse(fs.readFileSync(file, "utf8"));
        const mode = r.modes.find((m) => m.role.kind === "overlapped" && (m.role.layout.issue ?? "stream") === issue);
        const same = native.filter((n) => n.dtype === dtype && n.data === "cuda-pipe" && n.issue === issue).map((n) => n.medianMs);
        if (!mode || same.length === 0) continue;
        const ref = same.reduce((a, b) => a + b, 0) / same.length;
        lines.push(`${name} (${dtype}, ${issue}): cuda-pipe ${mode.stats.median.toFixed(3)} ms, native on the same data ${same.map((x) => x.toFixed(3)).join(" / ")} ms (mean ${ref.toFixed(3)}): ratio ${(mode.stats.median / ref).toFixed(3)}`);
      }
    }
    console.log(lines.join("\n"));
    fs.writeFileSync(dir + "/ratio.txt", lines.join("\n") + "\n");
  ' "$out"
} 2>&1 | tee "$out/gemm-stage.log"
