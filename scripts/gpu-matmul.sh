#!/usr/bin/env bash
# Issue 28's matmul stage on the H200, from the bundle, in one call of about 5 to 6 minutes:
#   (a) its GPU test (each epilogue, fp16 and fp8 against a CPU reference; a two-layer config end to end);
#   (b) the native cuBLASLt program (build/native/matmul, scripts/native/matmul.cu) and `cuda-pipe run
#       configs/inference-matmul.yaml`, alternated twice, both 400 reps after 20 warm-up reps: each product alone on
#       whole buffers, the native median against the Result's stage mode (`throughput.tflops` of kernel:layer1 and
#       kernel:layer2);
#   (c) PyTorch's grid, scripts/torch/inference.py over batches 1, 2, 4, 8, 16, 32 (rows = 8192 / batches) and streams
#       1, 2, 4, 8 (streams ≤ batches), each layout followed by `cuda-pipe run configs/inference-matmul.yaml --chunks B
#       --streams S`, both 30 reps after 3 warm-up reps;
#   (d) OUT/summary.txt: per layout our overlapped median against PyTorch's and the ratio, and each product's TFLOP/s
#       against the native program's.
# Run from a checkout holding build/cuda-pipe-linux-x64.tar.xz (npm run bundle); build/native/matmul is built with
# the host's nvcc when missing. Usage: bash scripts/gpu-matmul.sh OUT. Everything is logged to OUT/gpu-matmul.log as
# it runs; Results go to OUT/*.json, the native lines to OUT/native.jsonl, PyTorch's to OUT/torch.jsonl, the SM clock
# and power every 100 ms to OUT/clocks.csv.
source "$(dirname "$0")/gpu-common.sh" "${1:?usage: gpu-matmul.sh OUT}"
exec > >(tee -a "$out/gpu-matmul.log") 2>&1

# gpu-common.sh's step, with 10 s between SIGTERM and SIGKILL.
step() {
  local limit=$1; shift
  echo; echo "=== $(date +%T) timeout $limit: $*"
  local started=$SECONDS
  timeout -k 10 "$limit" "$@"
  echo "(exit $? after $((SECONDS - started)) s)"
}
# A command whose JSON lines (those starting with "{") are also appended to FILE.
record() { # FILE LIMIT CMD...
  local file=$1 limit=$2; shift 2
  echo; echo "=== $(date +%T) timeout $limit: $*"
  local started=$SECONDS
  timeout -k 10 "$limit" "$@" | tee >(grep '^{' >> "$file")
  echo "(exit ${PIPESTATUS[0]} after $((SECONDS - started)) s)"
}

config="$root/configs/inference-matmul.yaml"
native=$root/build/native/matmul
timeout -k 10 400 nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 100 > "$out/clocks.csv" 2>/dev/null &
sampler=$!

step 30 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
[ -x "$native" ] || step 120 bash "$root/scripts/native/build.sh"

# (a)
step 180 /tmp/cuda-pipe/bin/node --test --test-reporter=spec /tmp/cuda-pipe/dist/src/kinds/matmul/matmul.gpu.test.js

# (b)
for round in 1 2; do
  record "$out/native.jsonl" 60 "$native" --reps 400 --warmup 20
  step 150 "$cp" run "$config" --reps 400 --warmup 20 --no-tracing --json "$out/stage-$round.json"
done

# (c)
for batches in 1 2 4 8 16 32; do
  for streams in 1 2 4 8; do
    [ "$streams" -le "$batches" ] || continue
    record "$out/torch.jsonl" 90 python3 "$root/scripts/torch/inference.py" --batches "$batches" --rows $((8192 / batches)) --streams "$streams" --reps 30 --warmup 3
    step 90 "$cp" run "$config" --chunks "$batches" --streams "$streams" --reps 30 --warmup 3 --no-tracing --json "$out/grid-$batches-$streams.json"
  done
done

# (d)
step 60 /tmp/cuda-pipe/bin/node -e '
  const fs = require("fs");
  const [dir] = process.argv.slice(1);
  const jsonLines = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)) : []);
  const result = (file) => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : null);
  const lines = [];
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

  lines.push("Each product alone on whole buffers, 400 reps after 20 (cuda-pipe stage mode against the native cuBLASLt program):");
  const native = jsonLines(dir + "/native.jsonl");
  for (const name of ["layer1", "layer2"]) {
    const theirs = native.flatMap((n) => n.products.filter((p) => p.name === name).map((p) => p.tflops));
    const ours = [1, 2].flatMap((round) => {
      const r = result(dir + "/stage-" + round + ".json");
      const mode = r?.modes.find((m) => m.role.kind === "stage" && m.role.stage === "kernel" && m.role.kernel === name);
      return mode?.throughput?.tflops ? [mode.throughput.tflops] : [];
    });
    if (!theirs.length || !ours.length) { lines.push(`  ${name}: missing (native ${theirs.length} runs, cuda-pipe ${ours.length})`); continue; }
    const ratio = mean(ours) / mean(theirs);
    lines.push(`  ${name}: cuda-pipe ${ours.map((t) => t.toFixed(1)).join(" / ")} TFLOP/s, native ${theirs.map((t) => t.toFixed(1)).join(" / ")} TFLOP/s: ratio ${ratio.toFixed(3)} (${ratio >= 0.97 ? "within" : "NOT within"} 3%)`);
  }

  lines.push("", "PyTorch grid, 30 reps after 3 each (our overlapped median against PyTorch'"'"'s; ratio < 1: ours faster):");
  const torch = jsonLines(dir + "/torch.jsonl");
  let slower = 0;
  for (const t of torch) {
    const r = result(dir + "/grid-" + t.batches + "-" + t.streams + ".json");
    const mode = r?.modes.find((m) => m.role.kind === "overlapped" && (m.role.layout.issue ?? "stream") === "stream");
    const layout = `${String(t.batches).padStart(2)} batches × ${t.streams} streams`;
    if (!mode) { lines.push(`  ${layout}: PyTorch ${t.medianMs.toFixed(3)} ms, cuda-pipe missing`); continue; }
    const ratio = mode.stats.median / t.medianMs;
    if (ratio > 1) slower++;
    lines.push(`  ${layout}: cuda-pipe ${mode.stats.median.toFixed(3)} ms (verification ${r.verification.status}), PyTorch ${t.medianMs.toFixed(3)} ms: ratio ${ratio.toFixed(3)}`);
  }
  lines.push(`  layouts where cuda-pipe is slower than PyTorch: ${slower} of ${torch.length}`);
  console.log(lines.join("\n"));
  fs.writeFileSync(dir + "/summary.txt", lines.join("\n") + "\n");
' "$out"

kill "$sampler" 2>/dev/null
echo "done at $(date +%T) after $SECONDS s"
