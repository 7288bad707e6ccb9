// Whether a V8 startup snapshot could start cuda-pipe sooner (issue 40): Node.js 20 builds one with
// `node --snapshot-blob FILE --build-snapshot entry.js` and starts from it with `node --snapshot-blob FILE`. Before any
// of the tool is in it, a start from a user snapshot must be no slower than a plain start, or the snapshot cannot win.
// This builds the least snapshot there is (an entry that prints a line, its main function set) in a temporary folder
// and times, in turns, `node -e ""` and the start from that snapshot, each a whole process: wall medians and quartiles
// and CPU medians (user + system, Linux's 10 ms ticks), NODE_EXTRA_CA_CERTS left out as scripts/bench/start.mjs does.
// A benchmark, not a test. Usage: node scripts/bench/snapshot-floor.mjs [--runs N]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const at = process.argv.indexOf('--runs');
const runs = at >= 0 ? Number(process.argv[at + 1]) : 21;
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-snapshot-'));
const entry = join(dir, 'entry.cjs');
const blob = join(dir, 'snapshot.blob');
writeFileSync(
  entry,
  "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => process.stdout.write('0.1.0\\n'));\n",
);
const built = spawnSync(process.execPath, ['--snapshot-blob', blob, '--build-snapshot', entry], { encoding: 'utf8' });
if (built.status !== 0) throw new Error(`node --build-snapshot failed: ${built.stderr}`);

const env = { ...process.env };
delete env.NODE_EXTRA_CA_CERTS;
const COMMANDS = [
  { name: 'node -e ""', argv: ['-e', ''] },
  { name: 'node --snapshot-blob (least snapshot)', argv: ['--snapshot-blob', blob] },
];
const childrenCpuMs = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
};
const wall = COMMANDS.map(() => []);
const cpu = COMMANDS.map(() => []);
const loadBefore = loadavg();
for (let round = 0; round <= runs; round++) {
  COMMANDS.forEach((command, i) => {
    const cpuBefore = childrenCpuMs();
    const start = performance.now();
    const run = spawnSync(process.execPath, command.argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const ms = performance.now() - start;
    if (run.status !== 0) throw new Error(`${command.name} exited ${run.status}: ${run.stderr}`);
    if (round > 0) {
      wall[i].push(ms);
      cpu[i].push(childrenCpuMs() - cpuBefore);
    }
  });
}
const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (pos - lo);
};
console.log(
  `node ${process.version}, ${cpus().length} CPUs, ${runs} rounds after one not counted; snapshot ${statSync(blob).size} bytes`,
);
console.log(
  `load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} after`,
);
console.log(
  `${'command'.padEnd(38)} ${'median'.padStart(7)} ${'q1'.padStart(7)} ${'q3'.padStart(7)} ${'cpu'.padStart(5)}`,
);
COMMANDS.forEach((command, i) => {
  const f = (q) => quantile(wall[i], q).toFixed(1).padStart(7);
  console.log(
    `${command.name.padEnd(38)} ${f(0.5)} ${f(0.25)} ${f(0.75)} ${String(quantile(cpu[i], 0.5)).padStart(5)}`,
  );
});
rmSync(dir, { recursive: true, force: true });
