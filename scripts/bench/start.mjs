// How long the CLI takes from `node` starting to its exit: each command of issue 40's targets run N times as a whole
// process, the commands taking turns (one round runs each once) so that a busy host slows them alike. `node -e ""`
// runs in every round too: the floor no command of a Node.js tool can go below on this host, printed beside them.
// So does scripts/bench/least-cli.cjs --version: one small file that prints the version, the floor of a command
// installed as a file (what `--version` could cost at the least).
// Beside the wall time, the CPU time of each run (user and system, from the children's times Linux keeps for this
// process, in its 10 ms ticks): on a host shared with other work, the wall time grows with the others' load and the
// CPU time much less, so the two together tell a slow start from a busy host.
// A benchmark, not a test: it prints medians and writes nothing unless asked.
// Usage: node scripts/bench/start.mjs [--runs N] [--bin FILE]... [--json OUT.json] [--keep-env]
//   --runs: rounds (default 21); --bin: the launcher to time (default bin/cuda-pipe of this checkout, which must be
// built: npm run build), repeated to time several checkouts in the same rounds (before and after a change); --json:
// also write every sample and median; --keep-env: run with NODE_EXTRA_CA_CERTS too.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { COMPARE_ARGS, readFlags, REPORT_ARGS, root, startEnv } from './start-commands.mjs';

const args = process.argv.slice(2);
const { flag, runs } = readFlags(args);
const given = args.flatMap((arg, i) => (arg === '--bin' && args[i + 1] !== undefined ? [args[i + 1]] : []));
const bins = given.length ? given : [join(root, 'bin', 'cuda-pipe')];
for (const bin of bins)
  if (!existsSync(bin))
    throw new Error(`${bin} does not exist: pass --bin FILE, or build this checkout (npm run build)`);
// Each launcher's checkout and commit, for the header: a benchmark says what it timed.
const checkoutOf = (bin) => {
  const at = join(dirname(bin), '..');
  const commit =
    spawnSync('git', ['-C', at, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const dirty = spawnSync('git', ['-C', at, 'status', '--porcelain', '--untracked-files=no'], {
    encoding: 'utf8',
  }).stdout?.trim();
  return { bin, commit, dirty: Boolean(dirty) };
};
const checkouts = bins.map(checkoutOf);
const out = flag('--json', null);

const commandsOf = (bin, label) => [
  { name: `${label}--version`, argv: [bin, '--version'], target: 100 },
  { name: `${label}--help`, argv: [bin, '--help'], target: 100 },
  { name: `${label}report`, argv: [bin, ...REPORT_ARGS], target: 200 },
  { name: `${label}compare`, argv: [bin, ...COMPARE_ARGS], target: 200 },
  { name: `${label}schema`, argv: [bin, 'schema'], target: 200 },
];
const COMMANDS = [
  { name: 'node -e ""', argv: ['-e', ''], target: null },
  { name: 'least --version', argv: [join(root, 'scripts', 'bench', 'least-cli.cjs'), '--version'], target: null },
  ...bins.flatMap((bin, i) => commandsOf(bin, bins.length > 1 ? `${i + 1}: ` : '')),
];
// NODE_EXTRA_CA_CERTS is left out of the runs unless --keep-env (start-commands.mjs), and the header says which.
const keepEnv = args.includes('--keep-env');
const env = startEnv(keepEnv);

// utime + stime of the waited-for children so far (fields 16 and 17 of /proc/self/stat), in ms; null off Linux.
const TICK_MS = 10;
const childrenCpuMs = () => {
  if (!existsSync('/proc/self/stat')) return null;
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
};

const samples = COMMANDS.map(() => []);
const cpuSamples = COMMANDS.map(() => []);
const codes = COMMANDS.map(() => new Set());
const loadBefore = loadavg();
for (let round = 0; round < runs + 1; round++) {
  COMMANDS.forEach((command, i) => {
    const cpuBefore = childrenCpuMs();
    const start = performance.now();
    const run = spawnSync(process.execPath, command.argv, {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
    });
    const ms = performance.now() - start;
    const cpuAfter = childrenCpuMs();
    if (run.error) throw run.error;
    if (run.status === null) throw new Error(`${command.name} ended by ${run.signal}`);
    codes[i].add(run.status);
    // The first round warms the page cache and is not counted.
    if (round > 0) {
      samples[i].push(ms);
      if (cpuBefore !== null) cpuSamples[i].push(cpuAfter - cpuBefore);
    }
  });
}
const loadAfter = loadavg();

const quantile = (sorted, q) => {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (at - lo);
};
const rows = COMMANDS.map((command, i) => {
  const sorted = [...samples[i]].sort((a, b) => a - b);
  return {
    command: command.name,
    median: quantile(sorted, 0.5),
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    cpu: cpuSamples[i].length
      ? quantile(
          [...cpuSamples[i]].sort((a, b) => a - b),
          0.5,
        )
      : null,
    min: sorted[0],
    max: sorted.at(-1),
    exit: [...codes[i]].join(','),
    target: command.target,
  };
});
const floor = rows[0].median;

const fmt = (ms) => ms.toFixed(1).padStart(7);
checkouts.forEach(({ bin, commit, dirty }, i) => {
  const label = bins.length > 1 ? `${i + 1}: ` : '';
  console.log(
    `cuda-pipe start times: ${label}${relative(process.cwd(), bin) || bin} at ${commit}${dirty ? ' (uncommitted changes)' : ''}`,
  );
});
console.log(
  `node ${process.version}, ${cpus().length} CPUs, ${runs} rounds after one not counted, times in ms of whole processes`,
);
console.log(
  `NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS === undefined ? 'not set' : keepEnv ? 'kept' : 'set here, left out of the runs'}`,
);
console.log(
  `load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after`,
);
console.log('');
const width = Math.max(12, ...rows.map((r) => r.command.length));
console.log(
  `${'command'.padEnd(width)} ${'median'.padStart(7)} ${'q1'.padStart(7)} ${'q3'.padStart(7)} ${'min'.padStart(7)} ${'max'.padStart(7)} ${'-floor'.padStart(7)} ${'cpu'.padStart(5)}  exit  target`,
);
for (const r of rows) {
  const verdict =
    r.target === null
      ? ''
      : `${r.target} ms: ${r.median < r.target ? 'met' : `missed by ${(r.median - r.target).toFixed(0)} ms`}`;
  const overFloor = r === rows[0] ? '' : fmt(r.median - floor);
  console.log(
    `${r.command.padEnd(width)} ${fmt(r.median)} ${fmt(r.q1)} ${fmt(r.q3)} ${fmt(r.min)} ${fmt(r.max)} ${overFloor.padStart(7)} ${String(r.cpu ?? '-').padStart(5)}  ${r.exit.padEnd(4)}  ${verdict}`,
  );
}
if (out) {
  const document = {
    checkouts,
    keepEnv,
    node: process.version,
    cpus: cpus().length,
    runs,
    loadBefore,
    loadAfter,
    rows,
    samples,
    cpuSamples,
  };
  writeFileSync(out, `${JSON.stringify(document, null, 2)}\n`);
}
