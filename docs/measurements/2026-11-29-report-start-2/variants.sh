#!/usr/bin/env bash
# Three ways to start `report` and `compare` sooner, each a copy of this checkout's built CLI (dist/cli) under a
# temporary folder with its code cache recorded afresh as scripts/bundle-cli.mjs records it, then timed against the
# copy as built by scripts/bench/start.mjs in the same rounds. Usage, after `npm run build`, from the checkout:
#   bash docs/measurements/2026-11-29-report-start-2/variants.sh [RUNS] > variants.log
set -euo pipefail
root=$(pwd)
runs=${1:-21}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-pipe-start-variants.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fixtures=$root/test/fixtures

# A copy of the built CLI: bin/, dist/cli/ without its caches, the manifest and the dependencies.
copy() {
  local d=$tmp/$1
  mkdir -p "$d/dist"
  cp -r "$root/bin" "$d/bin"
  cp "$root/package.json" "$d/"
  cp -r "$root/dist/cli" "$d/dist/cli"
  ln -s "$root/node_modules" "$d/node_modules"
  rm -f "$d"/dist/cli/*.cache
}

# The commands the build records its code cache with, in its order.
record() {
  local loader=$tmp/$1/dist/cli/cuda-pipe.js args
  for args in "help" "schema" "compare $fixtures/h100-balanced-1.json $fixtures/h100-balanced-2.json" \
    "report $fixtures/h200-balanced-16-traced.json"; do
    # shellcheck disable=SC2086
    env -u NODE_OPTIONS COLUMNS=100 NO_COLOR=1 node -e \
      "process.argv.splice(1, 0, '$loader'); require('$loader').start({ recordCache: true });" -- $args > /dev/null
  done
}

# 1. As built.
copy built && record built
# 2. Commander given only the command that runs (report, compare or schema), not the definitions of all 12.
copy one-command
python3 - "$tmp/one-command/dist/cli" <<'PY'
import glob, sys
main = glob.glob(f'{sys.argv[1]}/main-*.js')[0]
text = open(main, encoding='latin1').read()
names = ['Run', 'Sweep', 'Probe', 'Kernels', 'Schema', 'Report', 'Timeline', 'Compare', 'Ab', 'Merge', 'Analyze', 'Overhead']
every = '\n'.join(f'add{n}(program2);' for n in names)
if every not in text:
    sys.exit('the main chunk no longer adds the 12 commands in this order: update variants.sh')
one = ("{ const which = process.argv[2]; if (which === 'report') addReport(program2); "
       "else if (which === 'compare') addCompare(program2); else if (which === 'schema') addSchema(program2); "
       "else {\n" + every + '\n} }')
open(main, 'w', encoding='latin1').write(text.replace(every, one))
PY
record one-command
# 3. Each chunk's file holding its CommonJS wrapper, so that the loader compiles the file's text as read instead of
#    the wrapper joined to it (one copy of every chunk's source the fewer).
copy wrapped
python3 - "$tmp/wrapped/dist/cli" <<'PY'
import glob, os, sys
wrapper = '(function (exports, require, module, __filename, __dirname, cudaPipeModuleUrl) {'
for f in glob.glob(f'{sys.argv[1]}/*.js'):
    if os.path.basename(f) == 'cuda-pipe.js':
        continue
    text = open(f, encoding='latin1').read()
    open(f, 'w', encoding='latin1').write(wrapper + text + '\n})')
loader = f'{sys.argv[1]}/cuda-pipe.js'
text = open(loader).read()
joined = 'new Script(`${WRAPPER}${source}\\n})`, {'
if joined not in text:
    sys.exit('the loader no longer joins the wrapper to the source: update variants.sh')
open(loader, 'w').write(text.replace(joined, 'new Script(source, {'))
PY
record wrapped

for v in built one-command wrapped; do
  node "$tmp/$v/bin/cuda-pipe" report "$fixtures/h200-balanced-16-traced.json" | head -1 | sed "s/^/$v: /"
done
node scripts/bench/start.mjs --runs "$runs" --bin "$tmp/built/bin/cuda-pipe" --bin "$tmp/one-command/bin/cuda-pipe" \
  --bin "$tmp/wrapped/bin/cuda-pipe"
