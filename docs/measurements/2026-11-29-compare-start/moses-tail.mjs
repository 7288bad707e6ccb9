// The Mann–Whitney lower tail that `compare` counts for its Moses interval (src/compare/shift.ts), two ways: the
// recurrence over both sizes it used before, and the Gaussian binomial it uses now. For each pair of sizes a run of
// `compare` meets, the time of the first call in a fresh process (as at a command's start, V8 not yet warmed up),
// the median of 9 processes; then the largest relative difference of the two tails over every pair under 50.
// Usage, from the checkout: node docs/measurements/2026-11-29-compare-start/moses-tail.mjs
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

function recurrence(m, n) {
  const [small, large] = m <= n ? [m, n] : [n, m];
  const top = Math.floor((small * large) / 2);
  const rows = Array.from({ length: small + 1 }, () => Float64Array.from({ length: top + 1 }, (_, u) => +(u === 0)));
  for (let j = 1; j <= large; j++)
    for (let i = 1; i <= small; i++) {
      const [row, below] = [rows[i], rows[i - 1]];
      for (let u = top; u >= 0; u--) row[u] = (j / (i + j)) * row[u] + (u >= j ? (i / (i + j)) * below[u - j] : 0);
    }
  let sum = 0;
  return rows[small].map((p) => (sum += p));
}

function gaussianBinomial(m, n) {
  const [small, large] = m <= n ? [m, n] : [n, m];
  const top = Math.floor((small * large) / 2);
  const counts = new Float64Array(top + 1);
  counts[0] = 1;
  let orderings = 1;
  for (let i = 1; i <= small; i++) {
    const rise = large + i;
    for (let u = top; u >= rise; u--) counts[u] -= counts[u - rise];
    for (let u = i; u <= top; u++) counts[u] += counts[u - i];
    orderings = (orderings * rise) / i;
  }
  let sum = 0;
  return counts.map((c) => (sum += c) / orderings);
}

const [, , way, m, n] = process.argv;
if (way) {
  const tail = way === 'recurrence' ? recurrence : gaussianBinomial;
  const started = performance.now();
  tail(Number(m), Number(n));
  console.log(performance.now() - started);
} else {
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const self = fileURLToPath(import.meta.url);
  const firstCall = (name, a, b) =>
    median(
      Array.from({ length: 9 }, () =>
        Number(spawnSync(process.execPath, [self, name, a, b], { encoding: 'utf8' }).stdout),
      ),
    );
  console.log('sizes      recurrence ms  Gaussian binomial ms  (first call in a fresh process, median of 9)');
  for (const [a, b] of [[10, 10], [39, 10], [20, 20], [49, 49]])
    console.log(
      `${`${a} and ${b}`.padEnd(10)} ${firstCall('recurrence', a, b).toFixed(3).padStart(13)} ${firstCall('gaussian', a, b).toFixed(3).padStart(21)}`,
    );
  let worst = { relative: 0, at: '' };
  for (let a = 1; a < 50; a++)
    for (let b = a; b < 50; b++) {
      const [old, now] = [recurrence(a, b), gaussianBinomial(a, b)];
      old.forEach((p, u) => {
        const relative = Math.abs(p - now[u]) / p;
        if (relative > worst.relative) worst = { relative, at: `${a} and ${b}, U ≤ ${u}: ${p} against ${now[u]}` };
      });
    }
  console.log(`largest relative difference over every pair under 50: ${worst.relative.toExponential(2)} (${worst.at})`);
}
