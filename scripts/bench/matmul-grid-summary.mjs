// OUT/summary.txt for scripts/gpu/matmul-grid.sh: per layout of PyTorch's grid, the median over rounds of each
// side's per-round median (PyTorch's JSON line, the overlapped mode of the layout's Result), their ratio, and in how
// many rounds cuda-pipe was the faster; against PyTorch as a user runs it (torch-R.jsonl), then against PyTorch with
// one hardware queue as well (torch-c1-R.jsonl, where present). Plain Node with no imports beyond its own, so it runs
// from the portable bundle's node. Usage: node scripts/bench/matmul-grid-summary.mjs OUT ROUNDS
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const [dir, roundsArg] = process.argv.slice(2);
const rounds = Array.from({ length: Number(roundsArg) }, (_, i) => i + 1);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const read = (file) => (existsSync(file) ? readFileSync(file, 'utf8') : '');
const jsonLines = (file) =>
  read(file)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
const results = rounds.map((r) => {
  const byLayout = new Map();
  for (const t of jsonLines(`${dir}/torch-${r}.jsonl`)) {
    const text = read(`${dir}/round-${r}/${t.batches}-${t.streams}.json`);
    if (text) byLayout.set(`${t.batches}x${t.streams}`, JSON.parse(text));
  }
  return byLayout;
});
const overlapped = (r) =>
  r?.modes.find((m) => m.role.kind === 'overlapped' && (m.role.layout.issue ?? 'stream') === 'stream');
const layouts = jsonLines(`${dir}/torch-1.jsonl`).map((t) => [t.batches, t.streams]);
const anyResult = results.flatMap((m) => [...m.values()])[0];
const queues = anyResult?.pipeline.connections;

const lines = [
  `cuda-pipe run against PyTorch's grid, ${rounds.length} rounds taking turns, 100 steps after 10 each (ratio < 1: cuda-pipe faster).`,
  `cuda-pipe's config: ${queues === undefined ? "CUDA's default hardware queues" : `pipeline.connections ${queues}`}. Per layout: the median over rounds of each round's median, and the rounds cuda-pipe won.`,
];

function compare(prefix, title) {
  const theirs = rounds.map((r) => jsonLines(`${dir}/${prefix}-${r}.jsonl`));
  if (!theirs[0].length) return;
  lines.push('', title);
  let slower = 0;
  for (const [batches, streams] of layouts) {
    const pairs = rounds.flatMap((_, i) => {
      const them = theirs[i].find((t) => t.batches === batches && t.streams === streams)?.medianMs;
      const mode = overlapped(results[i].get(`${batches}x${streams}`));
      return them && mode ? [{ theirs: them, ours: mode.stats.median }] : [];
    });
    const label = `${String(batches).padStart(2)} batches × ${streams} streams`;
    if (pairs.length === 0) {
      lines.push(`  ${label}: missing`);
      slower++;
      continue;
    }
    const a = median(pairs.map((p) => p.ours));
    const b = median(pairs.map((p) => p.theirs));
    const won = pairs.filter((p) => p.ours < p.theirs).length;
    if (a > b) slower++;
    const each = pairs.map((p) => `${p.ours.toFixed(3)}/${p.theirs.toFixed(3)}`).join(' ');
    lines.push(
      `  ${label}: cuda-pipe ${a.toFixed(3)} ms, PyTorch ${b.toFixed(3)} ms: ratio ${(a / b).toFixed(3)}; won ${won} of ${pairs.length} rounds (${each})`,
    );
  }
  lines.push(`  layouts where cuda-pipe is slower: ${slower} of ${layouts.length}`);
}

compare('torch', "Against PyTorch with CUDA's default hardware queues, as a user runs it:");
compare('torch-c1', 'Against PyTorch with CUDA_DEVICE_MAX_CONNECTIONS=1 as well:');
const unverified = results.flatMap((m, i) =>
  [...m.entries()]
    .filter(([, r]) => r.verification?.status !== 'passed')
    .map(([layout, r]) => `${layout} round ${i + 1}: ${r.verification?.status}`),
);
lines.push(
  '',
  `verification: ${unverified.length ? `not passed in ${unverified.join(', ')}` : 'passed in every Result'}`,
);
console.log(lines.join('\n'));
writeFileSync(`${dir}/summary.txt`, `${lines.join('\n')}\n`);
