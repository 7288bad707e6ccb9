#!/usr/bin/env bash
# Runs StrykerJS (stryker.config.json) on a machine without Node.js but with many cores, such as the GPU host: the
# Node.js runtime comes from the portable bundle (build/cuda-pipe-linux-x64.tar.xz) and the development packages
# from a tarball of this checkout's node_modules, made beforehand on the build machine (build/ travels as `carry`) with
#   tar -cf build/mut/node_modules.tar.xz -I 'xz -6 -T2' --exclude='node_modules/@esbuild' \
#     --exclude='node_modules/@biomejs' node_modules
# (playwright-core stays: analyze-render imports it, and skips its page test where no browser is.) The recorded files
# the listed tests read travel the same way when docs/measurements stays behind: list them with
# scripts/mutation/trace-reads.cjs (its header says how), then
#   tar -cf build/mut/measured.tar.xz -I 'xz -9 -T2' $(cat list)
# (78 files, 3.2 MB, on 2026-11-28: docs/measurements/2026-11-28-h200x4-mutation-2/measured-files.txt).
# Stryker's incremental file comes back as OUT/<name>.incremental.json; put it in build/mut/ under the same name and
# the next run with the same first glob re-tests only the mutants whose code or tests changed (none there: all afresh).
# Usage: scripts/mutation/host.sh OUT CONCURRENCY GLOB... (globs without braces: they are joined with commas)
# writes OUT/<name>.json (Stryker's JSON report), OUT/<name>.log and OUT/<name>.incremental.json, <name> from the
# first glob.
set -euo pipefail
out=${1:?usage: mutation-host.sh OUT CONCURRENCY GLOB...}; concurrency=${2:?}; shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
[ -x /tmp/cuda-pipe/bin/node ] || tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
[ -d node_modules/@stryker-mutator ] || tar xJf build/mut/node_modules.tar.xz
# Always: a tree sent again to a warm host can keep the folders and lose their files.
tar xJf build/mut/measured.tar.xz
export PATH=/tmp/cuda-pipe/bin:$PATH
# The listed tests are the CPU tests CI runs, which expect no usable GPU: on a GPU host with one GPU, a dry run over
# devices 0,1 is refused (the driver counts 1) and data-parallel's dry-run case fails Stryker's initial run. No
# visible device gives every CUDA call "no device", which the tool reads like CI's "no driver".
export CUDA_VISIBLE_DEVICES=
name=$(echo "$1" | tr -c 'A-Za-z0-9\n' '-' | sed 's/-*$//')
mkdir -p "$out"
mutate=$(IFS=,; echo "$*")
incremental=/tmp/stryker-$name.json
rm -f "$incremental"
[ ! -f "build/mut/$name.incremental.json" ] || cp "build/mut/$name.incremental.json" "$incremental"
node node_modules/@stryker-mutator/core/bin/stryker.js run --mutate "$mutate" --concurrency "$concurrency" \
  --buildCommand "node $root/node_modules/typescript/bin/tsc -p tsconfig.json" \
  --incrementalFile "$incremental" --reporters clear-text,json,progress-append-only \
  > "$out/$name.log" 2>&1 || { tail -30 "$out/$name.log"; exit 1; }
cp reports/mutation/mutation.json "$out/$name.json"
cp "$incremental" "$out/$name.incremental.json"
grep -A40 'Mutation score' "$out/$name.log" | grep '|' | head -60
