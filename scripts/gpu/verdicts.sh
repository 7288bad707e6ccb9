#!/usr/bin/env bash
# Issue 15, part 2: do the verdicts hold on the GPU? From the portable bundle on the GPU host, ROUNDS (10) rounds of:
#   compare: a 3% heavier kernel, and unchanged code, each run and compared with a baseline recorded at the start;
#   ab:      base against a 3% heavier kernel, a 1% heavier one, and itself, interleaved in one process.
# Targets: the heavier kernels are `slower` (exit 1) every time, unchanged code never is. The config is
# configs/compute-bound.yaml shrunk to 32 MiB (its kernel still about 6× its copies), so that all of it takes about
# 5 minutes of GPU time. Writes every log, Result and A/B document into OUTDIR, and OUTDIR/summary.md.
# Usage on the GPU host, from the repository copy: bash scripts/gpu/verdicts.sh OUTDIR [ROUNDS]
set -uo pipefail
out=${1:?output folder}; rounds=${2:-10}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
cp=/tmp/cuda-pipe/bin/cuda-pipe
node=/tmp/cuda-pipe/bin/node
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
work=$out/configs
mkdir -p "$work"
base_iters=$(sed -n 's/.*int32: \([0-9]*\).*/\1/p' /tmp/cuda-pipe/configs/compute-bound.yaml)
[ -n "$base_iters" ] || { echo "no int32 argument in configs/compute-bound.yaml" >&2; exit 2; }
heavier() { echo $(( base_iters * (100 + $1) / 100 )); }
make_config() { # name percent-heavier
  sed -e 's/size: 256MiB/size: 32MiB/' -e "s/int32: $base_iters/int32: $(heavier "$2")/" /tmp/cuda-pipe/configs/compute-bound.yaml > "$work/$1.yaml"
}
make_config base 0; make_config heavier3 3; make_config heavier1 1
echo "kernel iterations: base $base_iters, +1% $(heavier 1), +3% $(heavier 3); sizes 32 MiB" | tee "$out/log.txt"
started=$(date +%s)

# One line per command in results.tsv: experiment, round, exit code, and the verdicts of serial and overlapped.
results=$out/results.tsv
: > "$results"
verdicts() { # json kind(compare|ab)
  "$node" -e '
    const [file, kind] = process.argv.slice(1);
    let doc; try { doc = JSON.parse(require("fs").readFileSync(file, "utf8")); } catch { console.log("-\t-\t-"); process.exit(0); }
    const modes = kind === "ab" ? doc.modes : doc.pairs;
    const pick = (k) => modes.filter((m) => m.role.kind === k).map((m) => m.verdict + (kind === "ab" ? "(" + (m.change * 100).toFixed(2) + "%," + m.aMs.length + ")" : "(" + (m.change * 100).toFixed(2) + "%)")).join(",");
    const slower = modes.filter((m) => m.gating && m.verdict === "slower").map((m) => m.id ?? m.mode).join(",") || "none";
    console.log([pick("serial"), pick("overlapped"), slower].join("\t"));' "$1" "$2"
}
record() { # experiment round code json kind
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(verdicts "$4" "$5")" >> "$results"
  echo "$1 round $2: exit $3 ($(tail -1 "$results" | cut -f4-))" | tee -a "$out/log.txt"
}

{
  "$cp" probe
  "$cp" run "$work/base.yaml" --json "$out/baseline.json"
  echo "(baseline exit $?)"
} > "$out/baseline.txt" 2>&1
for round in $(seq 1 "$rounds"); do
  for exp in heavier3 base; do
    "$cp" run "$work/$exp.yaml" --json "$out/run-$exp-$round.json" > "$out/run-$exp-$round.txt" 2>&1
    "$cp" compare "$out/baseline.json" "$out/run-$exp-$round.json" --json "$out/compare-$exp-$round.json" > "$out/compare-$exp-$round.txt" 2>&1
    record "compare-$exp" "$round" $? "$out/compare-$exp-$round.json" compare
  done
  for exp in heavier3 heavier1 base; do
    "$cp" ab "$work/base.yaml" "$work/$exp.yaml" --max-time 5 --json "$out/ab-$exp-$round.json" > "$out/ab-$exp-$round.txt" 2>&1
    record "ab-$exp" "$round" $? "$out/ab-$exp-$round.json" ab
  done
done
elapsed=$(( $(date +%s) - started ))

{
  echo "# Verdicts on $("$node" -e 'try { console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).devices[0].name) } catch { console.log("(no baseline)") }' "$out/baseline.json")"
  echo
  echo "compute-bound at 32 MiB; $rounds rounds; $elapsed s in all. \`slower\` is exit 1 (a mode a user acts on was slower)."
  echo
  echo "| experiment | runs | slower (exit 1) | not slower (exit 0) | other exit | target |"
  echo "| --- | ---: | ---: | ---: | ---: | --- |"
  for exp in compare-heavier3 compare-base ab-heavier3 ab-heavier1 ab-base; do
    awk -F'\t' -v e="$exp" '$1 == e { n++; if ($3 == 1) s++; else if ($3 == 0) z++; else o++ }
      END { t = (e ~ /base$/) ? "never slower" : "slower every time"; printf "| %s | %d | %d | %d | %d | %s |\n", e, n, s, z, o, t }' "$results"
  done
  echo
  echo "Per run (serial and overlapped verdicts with the change, and for ab the pairs taken; which gating modes were slower):"
  echo
  echo '```'
  cat "$results"
  echo '```'
} > "$out/summary.md"
cat "$out/summary.md"
