#!/usr/bin/env bash
# Whether a V8 startup snapshot holding `report`'s modules, already run, starts `report` sooner than the built CLI
# (issue 40). The snapshot's entry loads the report command's chunk and every chunk it needs from dist/cli (zod and
# the schemas built, the kinds' table made) and then, at start, the main chunk, which runs the command line. The
# signal handlers two chunks install as they load cannot be in a snapshot: the entry holds them back and installs them
# at start. It is a measurement, not a working start: the command runs but its report is not printed, as the stdout
# that src/cli/io.ts took while the snapshot was built is not the process's after it. Timed in turns with
# `node bin/cuda-pipe report` and `node -e ""`: whole processes, wall and CPU (user + system) medians.
# Usage, after `npm run build`, from the checkout: bash docs/measurements/2026-11-29-report-start-2/snapshot.sh [RUNS]
set -euo pipefail
root=$(pwd)
runs=${1:-21}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-pipe-snapshot-report.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/entry.cjs" <<JS
'use strict';
const { readdirSync, readFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { Script } = require('node:vm');
const dir = '$root/dist/cli';
const WRAPPER = '(function (exports, require, module, __filename, __dirname, cudaPipeModuleUrl) {';
const modules = new Map();
const outside = createRequire(join(dir, 'start.js'));
const load = (name) => {
  const known = modules.get(name);
  if (known) return known.exports;
  const module = { exports: {} };
  modules.set(name, module);
  const file = join(dir, name);
  const script = new Script(WRAPPER + readFileSync(file, 'latin1') + '\n})', { filename: file });
  const require = (id) => (id.startsWith('./') ? load(id.slice(2)) : outside(id));
  require.resolve = outside.resolve;
  script.runInThisContext().call(module.exports, module.exports, require, module, file, dir, pathToFileURL(file).href);
  return module.exports;
};
const held = [];
const on = process.on;
process.on = function (event, listener) {
  if (String(event).startsWith('SIG')) held.push([event, listener]);
  else on.call(this, event, listener);
  return this;
};
load(readdirSync(dir).find((name) => /^report-.*[.]js$/.test(name)));
process.on = on;
const main = readdirSync(dir).find((name) => /^main-.*[.]js$/.test(name));
require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {
  for (const [event, listener] of held) process.on(event, listener);
  process.argv.splice(1, 0, join(dir, 'cuda-pipe.js'));
  load(main);
});
JS
node --snapshot-blob "$tmp/report.blob" --build-snapshot "$tmp/entry.cjs" 2> "$tmp/build.err" \
  || { cat "$tmp/build.err" >&2; exit 1; }
echo "snapshot: $(stat -c %s "$tmp/report.blob") bytes"
fixture=$root/test/fixtures/h200-balanced-16-traced.json
python3 - "$runs" "$tmp/report.blob" "$fixture" <<'PY'
import resource, statistics, subprocess, sys, time, os
runs, blob, fixture = int(sys.argv[1]), sys.argv[2], sys.argv[3]
env = {k: v for k, v in os.environ.items() if k != 'NODE_EXTRA_CA_CERTS'}
commands = [
    ('node -e ""', ['node', '-e', '']),
    ('report, built', ['node', 'bin/cuda-pipe', 'report', fixture]),
    ('report, from the snapshot', ['node', '--snapshot-blob', blob, 'report', fixture]),
]
wall = {name: [] for name, _ in commands}
cpu = {name: [] for name, _ in commands}
print(f'{runs} rounds after one not counted, the commands in turns; load {os.getloadavg()[0]:.2f} before')
for round in range(runs + 1):
    for name, argv in commands:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        took = (time.perf_counter() - start) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f'{name} exited {done.returncode}: {done.stderr.decode()}')
        if round == 0:
            print(f'{name}: exit 0, {len(done.stdout)} bytes on stdout')
            continue
        wall[name].append(took)
        cpu[name].append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
print(f'load {os.getloadavg()[0]:.2f} after')
print(f'{"command":28} {"wall median":>11} {"q1":>7} {"q3":>7} {"CPU median":>10}')
for name, _ in commands:
    q = statistics.quantiles(wall[name], n=4)
    print(f'{name:28} {statistics.median(wall[name]):11.1f} {q[0]:7.1f} {q[2]:7.1f} {statistics.median(cpu[name]):10.1f}')
PY
