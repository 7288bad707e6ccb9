// Host-side cost of verifying a 16-bit float output: compareWithin over the logits of configs/inference-matmul.yaml
// (8,192 × 1,000 bfloat16, and the same count of float16), and filling its 64 MiB bfloat16 input with the seeded
// pattern. Medians of ROUNDS (default 5). Runs on the compiled dist: npm run build first.
// Usage: node scripts/bench/compare.mjs [ROUNDS]
import { compareWithin } from '../../dist/src/data/compare.js';
import { fillPattern } from '../../dist/src/data/patterns.js';
import { median } from '../../dist/src/quantile.js';

const rounds = Number(process.argv[2] ?? 5);
const elements = 8192 * 1000;
const time = (fn) => {
  const samples = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
};
for (const type of ['bfloat16', 'float16']) {
  const expected = new Uint8Array(elements * 2);
  fillPattern(expected, type, { kind: 'random', seed: 1 });
  const actual = expected.slice();
  const buffer = { name: 'logits', type, elementBytes: 2 };
  const ms = time(() => compareWithin(buffer, expected, actual, 0x5a, { relative: 0.02, absolute: 0.25 }));
  console.log(`compareWithin ${type} × ${elements}: ${ms.toFixed(1)} ms (median of ${rounds})`);
}
const input = new Uint8Array(64 * 2 ** 20);
console.log(
  `fillPattern bfloat16 random, 64 MiB: ${time(() => fillPattern(input, 'bfloat16', { kind: 'random', seed: 1 })).toFixed(1)} ms (median of ${rounds})`,
);
