// How many passes over the samples `compare` makes to find the Hodges–Lehmann shift and its Moses interval of each
// mode of two recorded Results (src/compare/shift.ts's kthDifference): bisection on to adjacent doubles, as before,
// against bisection until at most m + n differences remain, which are then sorted, as now. Both must find the same
// differences. The passes the current code makes are counted from its reads of the first run's samples (m a pass,
// and two reads beside them). Usage, after `npm run build`, from the checkout:
//   node docs/measurements/2026-11-29-compare-start/kth-counts.mjs test/fixtures/h100-balanced-1.json test/fixtures/h100-balanced-2.json
import { readFileSync } from 'node:fs';
import { VERDICT_CONFIDENCE } from '../../../dist/src/compare/rule.js';
import { kthDifference, mosesRank } from '../../../dist/src/compare/shift.js';

/** The k-th difference by bisection on to adjacent doubles, and the passes over the samples it took. */
function toAdjacent(xs, ys, k) {
  let passes = 0;
  const count = (v) => {
    passes++;
    let [total, j] = [0, 0];
    for (const x of xs) {
      while (j < ys.length && ys[j] - x <= v) j++;
      total += j;
    }
    return total;
  };
  let lo = ys[0] - xs.at(-1);
  if (count(lo) >= k) return { value: lo, passes };
  let hi = ys.at(-1) - xs[0];
  for (;;) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) return { value: hi, passes };
    if (count(mid) >= k) hi = mid;
    else lo = mid;
  }
}

const [a, b] = process.argv.slice(2).map((file) => JSON.parse(readFileSync(file, 'utf8')));
const ascending = (ms) => ms.map(Math.log).sort((p, q) => p - q);
let [before, now] = [0, 0];
for (const mode of a.modes) {
  const other = b.modes.find((m) => m.id === mode.id);
  if (!other) continue;
  const [xs, ys] = [ascending(mode.samplesMs), ascending(other.samplesMs)];
  const total = xs.length * ys.length;
  const k = mosesRank(xs.length, ys.length, VERDICT_CONFIDENCE);
  const ranks = [k, total - k + 1, ...(total % 2 ? [(total + 1) / 2] : [total / 2, total / 2 + 1])];
  let [modeBefore, modeNow] = [0, 0];
  for (const rank of ranks) {
    const old = toAdjacent(xs, ys, rank);
    let reads = 0;
    const counted = new Proxy(xs, {
      get: (target, key) => {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return target[key];
      },
    });
    const value = kthDifference(counted, ys, rank);
    if (value !== old.value) throw new Error(`${mode.id}, rank ${rank}: ${value} against ${old.value}`);
    modeBefore += old.passes;
    modeNow += Math.floor(reads / xs.length);
  }
  [before, now] = [before + modeBefore, now + modeNow];
  console.log(`${mode.id}: ${xs.length} and ${ys.length} samples, ranks ${ranks.join(', ')}: ${modeBefore} passes, now ${modeNow}`);
}
console.log(`every mode: ${before} passes to adjacent doubles, ${now} now; the same differences found`);
