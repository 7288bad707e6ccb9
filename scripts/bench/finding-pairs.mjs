// The finding pairs' table: for each pattern of scripts/torch/finding_pairs.py (and ddp_overlap.py's variants), the
// saving `cuda-pipe analyze` predicts from the problem's trace against the saving measured when the fix was applied:
// under the profiler (the problem's traced step median less the fix's, the steps analyze reads) and without it (the
// CUDA-event medians the script timed, the variants taking turns). A finding passes when its prediction is within 25%
// of the saving measured under the profiler; a pattern whose fix saves nothing passes when the finding stays silent.
// The data-parallel pair is judged against its unprofiled saving: its fix starts the all-reduces from Python hooks on
// autograd's thread, which the profiler slows, so its traced saving measures the profiler, not the fix.
// Usage: node scripts/bench/finding-pairs.mjs DIR [--ddp DIR] [--rates FILE] [--md OUT.md] [--json OUT.json]
//   DIR: a finding-pairs folder; --ddp: the folder of ddp_overlap.py's variants, where not DIR; --rates: the link
//   rates analyze takes (a probe or a Result of the same card), as a user would give them where the program's own
//   copies are too small to show the link's rate.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [dir, ...rest] = process.argv.slice(2);
if (!dir) throw new Error('usage: finding-pairs.mjs DIR [--md OUT.md] [--json OUT.json]');
const flag = (name) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : null;
};

// What each pattern's fix removes: the finding that must predict it; null where the fix saves nothing and the finding
// named must stay silent.
const PATTERNS = [
  { pattern: 'pageable', code: 'pageable-copy', expect: 'saving' },
  { pattern: 'default_stream', code: 'default-stream', expect: 'saving' },
  { pattern: 'default_torch', code: 'default-stream', expect: 'silent' },
  { pattern: 'serialised', code: 'serialised-copies', expect: 'saving' },
  { pattern: 'serialised_full', code: 'serialised-copies', expect: 'silent' },
  { pattern: 'copy_on_compute', code: 'copy-on-compute-stream', expect: 'saving' },
  { pattern: 'host_sync', code: 'host-sync', expect: 'saving' },
  { pattern: 'host_bound', code: 'host-bound', expect: 'saving' },
];
// The data-parallel pair: the same all-reduces, after backward and then each started as its gradient is ready
// (ddp_overlap.py --early). DDP itself is shown beside it, not judged: it also copies every gradient into its buckets
// and scales it, GPU work the problem does not do, so its saving is the overlap's less that work.
const DDP = [
  {
    pattern: 'ddp no-overlap → early all-reduces',
    code: 'exposed-communication',
    expect: 'saving',
    reference: 'unprofiled',
    problem: 'ddp-no-overlap',
    fix: 'ddp-early',
  },
  {
    pattern: 'ddp no-overlap → DDP (adds bucket copies)',
    code: 'exposed-communication',
    expect: 'shown',
    reference: 'unprofiled',
    problem: 'ddp-no-overlap',
    fix: 'ddp-overlap',
  },
];
const TOLERANCE = 0.25;

const cli = join(root, 'bin', 'cuda-pipe');
const rates = flag('--rates');
const analyze = (files) =>
  JSON.parse(
    execFileSync(cli, ['analyze', ...files, ...(rates ? ['--rates', rates] : []), '--json', '-'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 1 << 28,
    }),
  );
const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const stepOf = (doc) => median(doc.devices.map((d) => d.stepMs));
const predicted = (doc, code) => {
  const per = doc.devices.map((d) =>
    doc.findings
      .filter((f) => f.code === code && f.device === d.device && f.rank === d.rank)
      .reduce((a, f) => a + f.ms, 0),
  );
  return median(per);
};

const ddpDir = flag('--ddp') ?? dir;
const timed = new Map();
if (existsSync(join(dir, 'pairs.jsonl')))
  for (const line of readFileSync(join(dir, 'pairs.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const row = JSON.parse(line);
    if (!row.error) timed.set(row.pattern, row.savedMs);
  }
const ddpTimed = new Map();
if (existsSync(join(ddpDir, 'ddp.jsonl')))
  for (const line of readFileSync(join(ddpDir, 'ddp.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))) {
    const row = JSON.parse(line);
    const key = row.variant === 'overlap' && row.bucketMb > 1000 ? 'one-bucket' : row.variant;
    const ms = Math.max(...row.ranks.map((r) => r.timedMedianMs ?? r.medianMs));
    // Each run of a variant in order: the folders ddp-<variant>, then ddp-<variant>-2.
    const runs = ddpTimed.get(key) ?? [];
    ddpTimed.set(key, [...runs, ms]);
  }

const rows = [];
for (const p of PATTERNS) {
  const problem = join(dir, `${p.pattern}-problem.pt.trace.json.gz`);
  const fix = join(dir, `${p.pattern}-fix.pt.trace.json.gz`);
  if (!existsSync(problem) || !existsSync(fix)) continue;
  const a = analyze([problem]);
  const b = analyze([fix]);
  rows.push(row(p, a, b, timed.get(p.pattern) ?? null));
}
for (const [run, suffix] of ['', '-2'].entries())
  for (const p of DDP) {
    const ranks = (name) =>
      [0, 1].map((r) => join(ddpDir, name + suffix, `rank${r}.pt.trace.json.gz`)).filter(existsSync);
    if (ranks(p.problem).length < 2 || ranks(p.fix).length < 2) continue;
    const [problem, fix] = [ddpTimed.get('no-overlap')?.[run], ddpTimed.get(p.fix.replace(/^ddp-/, ''))?.[run]];
    const measured = problem !== undefined && fix !== undefined ? problem - fix : null;
    rows.push(
      row(
        { ...p, pattern: `${p.pattern}${run ? ` (run ${run + 1})` : ''}` },
        analyze(ranks(p.problem)),
        analyze(ranks(p.fix)),
        measured,
      ),
    );
  }

function row(p, a, b, timedSaving) {
  const prediction = predicted(a, p.code);
  const traced = stepOf(a) - stepOf(b);
  const reference = p.reference === 'unprofiled' ? timedSaving : traced;
  const error = p.expect !== 'silent' && reference > 0 ? (prediction - reference) / reference : null;
  const pass =
    p.expect === 'shown'
      ? null
      : p.expect === 'saving'
        ? error !== null && Math.abs(error) <= TOLERANCE
        : prediction === 0;
  const others = a.findings
    .filter((f) => f.code !== p.code && f.device === a.devices[0].device)
    .map((f) => `${f.code} ${f.ms.toFixed(3)}`);
  return {
    pattern: p.pattern,
    code: p.code,
    expect: p.expect,
    problemStepMs: stepOf(a),
    fixStepMs: stepOf(b),
    predictedMs: prediction,
    tracedSavingMs: traced,
    timedSavingMs: timedSaving,
    reference: p.reference ?? 'traced',
    error,
    pass,
    others,
  };
}

const f3 = (x) => (x === null ? '–' : x.toFixed(3));
const pct = (x) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
const lines = [
  '| pattern | finding | problem step (traced) | fix step (traced) | predicted saving | measured, traced | measured, unprofiled | error (against) | verdict | other findings |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) =>
      `| ${r.pattern} | ${r.code}${r.expect === 'silent' ? ' (must stay silent)' : ''} | ${f3(r.problemStepMs)} | ${f3(r.fixStepMs)} | ${f3(r.predictedMs)} | ${f3(r.tracedSavingMs)} | ${f3(r.timedSavingMs)} | ${pct(r.error)}${r.error === null ? '' : ` (${r.reference})`} | ${r.pass === null ? 'shown' : r.pass ? 'pass' : 'FAIL'} | ${r.others.join(', ') || '–'} |`,
  ),
];
console.log(lines.join('\n'));
const md = flag('--md');
if (md) writeFileSync(md, `${lines.join('\n')}\n`);
const json = flag('--json');
if (json) writeFileSync(json, `${JSON.stringify(rows, null, 1)}\n`);
process.exitCode = rows.every((r) => r.pass !== false) ? 0 : 1;
