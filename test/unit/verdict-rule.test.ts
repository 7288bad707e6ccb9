import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { asRange, judge, overallVerdict, separateRunsRule, type Verdict } from '../../src/compare/rule.js';
import { mosesRank, shiftInterval } from '../../src/compare/shift.js';
import { compareResults, type ModeComparison } from '../../src/compare/verdict.js';
import { loadResults } from '../../src/result/load.js';

// The one verdict rule (src/compare/rule.ts) on the interval of two independent runs (src/compare/shift.ts), and on
// the H200 Results that the noise rule misjudged: the stored baseline against later runs of the same configs on an
// H200, where the noise of the baseline's own copies (2% and more) had raised the bar past a 6% change.

const DEADLINE = { timeout: 20_000 };
const MEASURED = join('docs', 'measurements', '2026-11-23-h200-issues15-16');
const baseline = loadResults(join('baselines', 'nvidia-h200', 'results.json'));

/** Every arrangement of m a's and n b's, counted: P(U ≤ c) by brute force, U the (a, b) pairs in order. */
function bruteTail(m: number, n: number, c: number): number {
  let below = 0;
  let total = 0;
  const walk = (a: number, b: number, u: number) => {
    if (a === 0 && b === 0) {
      total++;
      if (u <= c) below++;
      return;
    }
    // An a placed now precedes the b's still to come: each adds one ordered pair.
    if (a > 0) walk(a - 1, b, u + b);
    if (b > 0) walk(a, b - 1, u);
  };
  walk(m, n, 0);
  return below / total;
}

/**
 * P(U ≤ c) for c = 0 … ⌊mn/2⌋ by the recurrence over both sizes, p(i, j, u) = i/(i+j)·p(i−1, j, u−j) +
 * j/(i+j)·p(i, j−1, u), in probabilities: the way shift.ts counted before it took the Gaussian binomial.
 */
function recurrenceTail(m: number, n: number): Float64Array {
  const top = Math.floor((m * n) / 2);
  const rows = Array.from({ length: m + 1 }, () => Float64Array.from({ length: top + 1 }, (_, u) => (u === 0 ? 1 : 0)));
  for (let j = 1; j <= n; j++) {
    for (let i = 1; i <= m; i++) {
      const [row, below] = [rows[i] as Float64Array, rows[i - 1] as Float64Array];
      for (let u = top; u >= 0; u--)
        row[u] = (j / (i + j)) * (row[u] as number) + (u >= j ? (i / (i + j)) * (below[u - j] as number) : 0);
    }
  }
  let sum = 0;
  return (rows[m] as Float64Array).map((p) => {
    sum += p;
    return sum;
  });
}

describe("the Moses interval's rank", () => {
  it('is 28 for 10 and 10 samples at 90%: the Mann–Whitney critical U of 27 at α = 0.10', DEADLINE, () => {
    assert.equal(mosesRank(10, 10, 0.9), 28);
    assert.equal(mosesRank(10, 10, 0.95), 24);
  });

  it('agrees with counting every arrangement for small samples', DEADLINE, () => {
    for (const [m, n] of [
      [3, 3],
      [3, 5],
      [4, 6],
      [5, 5],
      [6, 7],
      [2, 9],
    ] as const) {
      const k = mosesRank(m, n, 0.9);
      assert.ok(k !== null, `${m} and ${n}`);
      assert.ok(bruteTail(m, n, k - 1) <= 0.05, `${m}, ${n}: P(U ≤ ${k - 1})`);
      assert.ok(bruteTail(m, n, k) > 0.05, `${m}, ${n}: P(U ≤ ${k})`);
      assert.equal(mosesRank(n, m, 0.9), k, 'symmetric in the sizes');
    }
  });

  it(
    'is the rank the recurrence over both sizes gives, for every pair of sizes under 50, at 80 to 99.9%',
    DEADLINE,
    () => {
      const confidences = [0.8, 0.9, 0.95, 0.99, 0.999];
      const differ: string[] = [];
      for (let m = 1; m < 50; m++) {
        for (let n = m; n < 50; n++) {
          const tail = recurrenceTail(m, n);
          for (const confidence of confidences) {
            const limit = ((1 - confidence) / 2) * (1 + 1e-9);
            const k = tail.findIndex((p) => p > limit);
            const expected = k === -1 ? tail.length : k;
            const [got, mirrored] = [mosesRank(m, n, confidence), mosesRank(n, m, confidence)];
            if (got !== (expected >= 1 ? expected : null) || mirrored !== got)
              differ.push(`${m} and ${n} at ${confidence}: ${got} (${mirrored} mirrored) against ${expected}`);
          }
        }
      }
      assert.deepEqual(differ, []);
    },
  );

  it(
    'has none for too few samples: 2 and 2, 2 and 4, 1 and 18; 3 and 3, 2 and 5 and 1 and 19 are the least',
    DEADLINE,
    () => {
      assert.deepEqual(
        [mosesRank(2, 2, 0.9), mosesRank(2, 4, 0.9), mosesRank(1, 18, 0.9), mosesRank(0, 10, 0.9)],
        [null, null, null, null],
      );
      assert.deepEqual([mosesRank(3, 3, 0.9), mosesRank(2, 5, 0.9), mosesRank(1, 19, 0.9)], [1, 1, 1]);
    },
  );

  it('takes the normal approximation from 50 samples a side: 1487 for 60 and 60', DEADLINE, () => {
    // ⌊mn/2 − 1.6449·√(mn(m+n+1)/12) + 0.5⌋ = ⌊1800 − 313.40 + 0.5⌋.
    assert.equal(mosesRank(60, 60, 0.9), 1487);
    // At 95%: ⌊1800 − 1.9600·190.53 + 0.5⌋.
    assert.equal(mosesRank(60, 60, 0.95), 1427);
    // Either side of the switch the two agree to within a rank.
    const exact = mosesRank(49, 49, 0.9) as number;
    const normal = Math.floor((49 * 49) / 2 - 1.6448536269514722 * Math.sqrt((49 * 49 * 99) / 12) + 0.5);
    assert.ok(Math.abs(exact - normal) <= 1, `${exact} against ${normal}`);
  });

  it(
    'takes the normal approximation once either side has 50 samples, and none where its rank falls below 1',
    DEADLINE,
    () => {
      // 3 and 80 at 90%: 53 by the approximation, where counting gives 52; 50 and 3 at 95%: 24, where counting
      // gives 25.
      assert.deepEqual([mosesRank(3, 80, 0.9), mosesRank(80, 3, 0.9)], [53, 53]);
      assert.deepEqual([mosesRank(50, 3, 0.95), mosesRank(3, 50, 0.95)], [24, 24]);
      // 50 and 1: ⌊25 − 1.6449·√(50·52/12) + 0.5⌋ = 1 at 90%; at 95% the approximation gives −4, which is no rank.
      assert.deepEqual([mosesRank(50, 1, 0.9), mosesRank(50, 1, 0.95), mosesRank(1, 50, 0.95)], [1, null, null]);
    },
  );

  it(
    'reads the normal quantile closely enough to place the rank of thousands of samples, in the middle and the tails',
    DEADLINE,
    () => {
      // Reference quantiles z of 1 − (1 − confidence)/2; at these sizes 1e-4 in z moves the rank by more than one.
      const quantiles = [
        [0.9, 1.6448536269514722],
        [0.95, 1.959963984540054],
        [0.99, 2.5758293035489004],
        [0.999, 3.2905267314919255],
      ] as const;
      for (const [m, n] of [
        [1000, 1000],
        [700, 900],
      ] as const) {
        for (const [confidence, z] of quantiles) {
          const expected = Math.floor((m * n) / 2 - z * Math.sqrt((m * n * (m + n + 1)) / 12) + 0.5);
          assert.equal(mosesRank(m, n, confidence), expected, `${m} and ${n} at ${confidence}`);
        }
      }
    },
  );
});

describe('the Hodges–Lehmann shift of two runs', () => {
  it('is the median of every difference of log times, its interval the k-th from each end', DEADLINE, () => {
    // Logs 0, 0.1, 0.2 against 0.3, 0.4, 0.5: differences 0.1, 0.2, 0.2, 0.3, 0.3, 0.3, 0.4, 0.4, 0.5; k = 1.
    const measured = shiftInterval([0, 0.1, 0.2].map(Math.exp), [0.3, 0.4, 0.5].map(Math.exp), 0.9);
    assert.ok(measured.interval);
    const { estimate, low, high } = measured.interval;
    assert.deepEqual(
      [estimate, low, high].map((x) => Number(x.toFixed(12))),
      [0.3, 0.1, 0.5],
    );
  });

  it('says why there is no interval: too few samples, or a time that is not positive', DEADLINE, () => {
    assert.deepEqual(shiftInterval([1, 2], [3, 4], 0.9), {
      interval: null,
      reason: '2 and 2 samples: too few for a 90% interval',
    });
    assert.equal(
      shiftInterval([1, 0, 2], [3, 4, 5], 0.9).reason,
      'a time that is not positive and finite: no interval',
    );
  });
});

describe('the recorded H200 pairs the noise rule called same', () => {
  const pairOf = (file: string, mode: string, swapped = false): ModeComparison => {
    const candidate = loadResults(file);
    const comparison = swapped ? compareResults(candidate, baseline) : compareResults(baseline, candidate);
    const pair = comparison.pairs.find((p) => p.mode === mode);
    assert.ok(pair, `${mode} in ${file}`);
    return pair;
  };
  /** The interval in per cent, to two decimals: estimate, low, high. */
  const percent = (p: ModeComparison) =>
    p.interval ? [p.interval.estimate, p.interval.low, p.interval.high].map((x) => Number((x * 100).toFixed(2))) : null;
  const cases: ReadonlyArray<{
    what: string;
    file: string;
    mode: string;
    verdict: Verdict;
    interval: number[];
    swapped: number[];
  }> = [
    {
      what: 'copy-bound overlapped 16×4, −5.9% with quartiles apart (needed 6.75%)',
      file: join(MEASURED, 'bound', 'run-copy-bound-1.json'),
      mode: 'overlapped:16x4:depth-first:chunk-per-stream',
      verdict: 'faster',
      interval: [-5.85, -6.46, -5.16],
      swapped: [6.21, 5.44, 6.9],
    },
    {
      what: 'copy-bound overlapped 16×4 in the second run, −6.0% (needed 6.73%)',
      file: join(MEASURED, 'bound', 'run-copy-bound-2.json'),
      mode: 'overlapped:16x4:depth-first:chunk-per-stream',
      verdict: 'faster',
      interval: [-5.88, -6.52, -5.14],
      swapped: [6.25, 5.42, 6.97],
    },
    {
      what: 'balanced H2D + D2H at once, −5.8% (needed 6.80%)',
      file: join('test', 'fixtures', 'h200-balanced-16-traced.json'),
      mode: 'bidirectional',
      verdict: 'faster',
      interval: [-5.53, -6.38, -4.68],
      swapped: [5.85, 4.91, 6.82],
    },
    {
      what: 'copy-bound H2D + D2H at once, −7.3% (needed 7.92%)',
      file: join(MEASURED, 'bound', 'run-copy-bound-2.json'),
      mode: 'bidirectional',
      verdict: 'faster',
      interval: [-6.01, -7.28, -4.47],
      swapped: [6.4, 4.68, 7.85],
    },
    {
      what: 'async-overlap kernel sincos alone, +4.8% (needed 11.26%)',
      file: join(MEASURED, 'bound-final', 'run-async-overlap-1.json'),
      mode: 'kernel:sincos',
      verdict: 'slower',
      interval: [4.76, 3.12, 6.0],
      swapped: [-4.54, -5.66, -3.03],
    },
    {
      what: 'async-overlap kernel sincos alone, +0.7% with an interval of −1.1% to +2.2%: noisy, not same',
      file: join(MEASURED, 'bound', 'run-async-overlap-2.json'),
      mode: 'kernel:sincos',
      verdict: 'noisy',
      interval: [0.64, -1.12, 2.18],
      swapped: [-0.63, -2.13, 1.14],
    },
    {
      what: 'multi-kernel overlapped 16×4, +0.7% with an interval of −0.4% to +2.5%: noisy, not same',
      file: join(MEASURED, 'bound', 'run-multi-kernel-2.json'),
      mode: 'overlapped:16x4:depth-first:chunk-per-stream',
      verdict: 'noisy',
      interval: [0.96, -0.42, 2.45],
      swapped: [-0.95, -2.39, 0.42],
    },
  ];
  const MIRROR: Record<Verdict, Verdict> = { faster: 'slower', slower: 'faster', same: 'same', noisy: 'noisy' };

  for (const c of cases) {
    it(
      `${c.what}: ${c.verdict}, the interval ${c.interval[1]}% to ${c.interval[2]}% against the ±1% band`,
      DEADLINE,
      () => {
        const pair = pairOf(c.file, c.mode);
        assert.deepEqual([pair.verdict, percent(pair)], [c.verdict, c.interval]);
        assert.equal(pair.needed, 0.01);
      },
    );

    it(`${c.what}, swapped: ${MIRROR[c.verdict]}, the mirrored interval`, DEADLINE, () => {
      const pair = pairOf(c.file, c.mode, true);
      assert.deepEqual([pair.verdict, percent(pair)], [MIRROR[c.verdict], c.swapped]);
    });
  }

  it('keeps copy-bound serial −0.5% same: its whole interval, −0.60% to −0.38%, lies inside ±1%', DEADLINE, () => {
    const pair = pairOf(join(MEASURED, 'bound', 'run-copy-bound-1.json'), 'serial');
    assert.deepEqual([pair.verdict, percent(pair)], ['same', [-0.48, -0.6, -0.38]]);
    assert.equal(pair.reason, 'B/A -0.5% (90% interval -0.6% to -0.4%): inside the ±1.0% band');
  });

  it('gives each comparison one verdict from its gating pairs', DEADLINE, () => {
    const verdictOf = (file: string) => compareResults(baseline, loadResults(file)).verdict;
    assert.equal(verdictOf(join(MEASURED, 'bound', 'run-copy-bound-1.json')), 'faster');
    assert.equal(verdictOf(join(MEASURED, 'bound-final', 'run-async-overlap-1.json')), 'slower');
    assert.equal(verdictOf(join(MEASURED, 'bound', 'run-multi-kernel-2.json')), 'mixed');
    assert.equal(
      compareResults(loadResults(join(MEASURED, 'bound', 'run-multi-kernel-2.json')), baseline).verdict,
      'mixed',
    );
  });
});

describe('the verdicts benchmark on the H200, judged again (bench-verdicts.sh, 2026-11-23)', () => {
  const at = (name: string) => loadResults(join(MEASURED, 'verdicts', `${name}.json`));
  const first = at('baseline');

  it('fails the gate on every round of the 3% heavier kernel, and on no round of unchanged code', {
    timeout: 60_000,
  }, () => {
    const rounds = Array.from({ length: 10 }, (_, i) => i + 1);
    const heavier = rounds.map((r) => compareResults(first, at(`run-heavier3-${r}`)));
    const unchanged = rounds.map((r) => compareResults(first, at(`run-base-${r}`)));
    assert.deepEqual(
      heavier.map((c) => c.verdict),
      ['mixed', 'mixed', 'mixed', 'mixed', 'mixed', 'mixed', 'slower', 'slower', 'slower', 'mixed'],
    );
    for (const c of heavier) {
      assert.deepEqual(
        c.pairs.filter((p) => p.verdict === 'slower' && p.gating).map((p) => p.mode),
        ['serial', 'overlapped:16x4:depth-first:chunk-per-stream', 'kernel:fma'],
      );
    }
    // The copies of later runs were faster than the baseline's own, minutes before: said so, never a regression.
    assert.deepEqual(
      unchanged.map((c) => c.verdict),
      ['faster', 'faster', 'faster', 'faster', 'noisy', 'faster', 'faster', 'faster', 'noisy', 'faster'],
    );
    for (const c of unchanged) assert.ok(c.pairs.every((p) => !p.gating || p.verdict !== 'slower'));
  });
});

describe('one verdict for a comparison', () => {
  it('is mixed for slower and faster, slower or faster where either is shown, else noisy, else same', DEADLINE, () => {
    const cases: Array<[Verdict[], string]> = [
      [['slower', 'faster', 'same'], 'mixed'],
      [['slower', 'noisy', 'same'], 'slower'],
      [['faster', 'noisy', 'same'], 'faster'],
      [['noisy', 'same'], 'noisy'],
      [['same', 'same'], 'same'],
      [[], 'noisy'],
    ];
    for (const [verdicts, overall] of cases) assert.equal(overallVerdict(verdicts), overall, verdicts.join(','));
  });

  it('reads a band set by --threshold: 6.5% makes the copy-bound overlapped −5.9% noisy, 7% same', DEADLINE, () => {
    const candidate = loadResults(join(MEASURED, 'bound', 'run-copy-bound-1.json'));
    const mode = (band: number) =>
      compareResults(baseline, candidate, separateRunsRule(band)).pairs.find((p) => p.role.kind === 'overlapped');
    assert.deepEqual(
      [0.05, 0.065, 0.07].map((band) => mode(band)?.verdict),
      ['faster', 'noisy', 'same'],
    );
  });

  it('states the change as B/A − 1 from the interval of ln(B/A)', DEADLINE, () => {
    const range = asRange({ estimate: Math.log(1.05), low: Math.log(1.02), high: Math.log(1.08) });
    assert.deepEqual(
      [range.estimate, range.low, range.high].map((x) => Number(x.toFixed(12))),
      [0.05, 0.02, 0.08],
    );
    assert.equal(
      judge(
        { interval: { estimate: Math.log(1.05), low: Math.log(1.02), high: Math.log(1.08) }, reason: null },
        { band: 0.01 },
      ),
      'slower',
    );
  });
});
