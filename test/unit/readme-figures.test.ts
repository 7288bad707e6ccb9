import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';

// Figures the README and the docs/ pages it links quote, each next to the committed log it comes from: issue 26 found
// some that no log held or that an older run had given. A figure changed in one place and not the other fails here.
// Issue 26 moved the reference material and its figures out of the README into those pages; each figure is checked
// on the page that now holds it.

const root = packageRoot();
const page = (path: string) => readFileSync(join(root, path), 'utf8').replace(/\s+/g, ' ');
const PAGES = [
  'README.md',
  'docs/reference/cli.md',
  'docs/reference/config.md',
  'docs/measuring.md',
  'docs/toolbox.md',
  'docs/pipelines.md',
  'docs/several-gpus.md',
  'docs/figures.md',
  'docs/development.md',
  'docs/ci-dashboards.md',
] as const;
type Page = (typeof PAGES)[number];
const log = (path: string) => readFileSync(join(root, 'docs', 'measurements', path), 'utf8');

// development.md's five npm test runs with two queue processes: each run's log holds its wall time.
const TWO_WORKER_RUNS = (
  [
    ['a', '70.45'],
    ['b', '72.16'],
    ['c', '68.90'],
    ['d', '71.30'],
    ['e', '70.79'],
  ] as const
).map(([run, wall]) => ({
  page: 'docs/development.md' as const,
  readme: 'five runs one after another took 68.90 to 72.16 s (70.45, 72.16, 68.90, 71.30 and 70.79 s)',
  log: `2026-11-26-test-speed-4/two-workers/npm-test-${run}.txt`,
  holds: [`npm test: ${wall} s wall`, '# tests 1709', '# fail 0'],
}));

const SOURCED: readonly {
  readonly page: Page;
  readonly readme: string;
  readonly log: string;
  readonly holds: readonly string[];
}[] = [
  {
    page: 'docs/pipelines.md',
    readme: "below PyTorch's at all 18 layouts, ratios 0.402 (32 × 4) to 0.973 (8 × 2)",
    log: '2026-11-26-h100-matmul-3/grid-connections/summary.txt',
    holds: [
      '32 batches × 4 streams: cuda-pipe 1.433 ms, PyTorch 3.562 ms: ratio 0.402',
      '8 batches × 2 streams: cuda-pipe 1.409 ms, PyTorch 1.447 ms: ratio 0.973',
      'layouts where cuda-pipe is slower: 0 of 18',
    ],
  },
  {
    page: 'docs/pipelines.md',
    readme: 'below at 17, and at 8 × 2 1.409 against 1.406 ms',
    log: '2026-11-26-h100-matmul-3/grid-connections/summary.txt',
    holds: [
      '8 batches × 2 streams: cuda-pipe 1.409 ms, PyTorch 1.406 ms: ratio 1.002',
      'layouts where cuda-pipe is slower: 1 of 18',
    ],
  },
  {
    page: 'docs/pipelines.md',
    readme: 'lost 16 × 4 in all four rounds, 1.441 against 1.415 ms',
    log: '2026-11-26-h100-matmul-3/grid-default/summary.txt',
    holds: ['16 batches × 4 streams: cuda-pipe 1.441 ms, PyTorch 1.415 ms: ratio 1.018; won 0 of 4 rounds'],
  },
  {
    page: 'docs/toolbox.md',
    readme: "16 chunks over 4 streams took 1.360 ms on an H100, with CUDA's 8 1.448 ms",
    log: '2026-11-26-h100-matmul-3/connections/summary.txt',
    holds: [
      'c1-16x4-r1.json 1.3602 passed',
      'c1-16x4-r2.json 1.3595 passed',
      'c8-16x4-r1.json 1.4503 passed',
      'c8-16x4-r2.json 1.4449 passed',
    ],
  },
  {
    page: 'docs/pipelines.md',
    readme: "each layer alone ran at 1.018 and 0.999 of the native program's TFLOP/s",
    log: '2026-11-26-h100-matmul-2/grid/summary.txt',
    holds: ['ratio 1.018 (within 3%)', 'ratio 0.999 (within 3%)'],
  },
  {
    page: 'docs/measuring.md',
    readme: '1.01 to 1.14× (H2D) and 1.00 to 1.17× (D2H) of the copy alone one way',
    log: '2026-11-23-h200-issues15-16/suite/cupti-vs-alone.txt',
    holds: [
      'CUPTI engine / alone:            min 1.013 median 1.084 max 1.138',
      'CUPTI engine / alone:            min 1.000 median 1.146 max 1.170',
    ],
  },
  {
    page: 'docs/pipelines.md',
    readme: 'tasks start a median 1.006 ms (max 3.121 ms) after their chunk',
    log: '2026-11-24-h200-final/workers/workers.log',
    holds: ["task start after its chunk's D2H median 1.006 ms, max 3.121 ms"],
  },
  {
    page: 'docs/measuring.md',
    readme: '0.28× (1.513 ms → 5.436 ms)',
    log: '2026-11-24-h200-final/workers/workers.log',
    holds: ['with the host stage checksum against without it, 16×4 depth-first: 0.28× (1.513 ms → 5.436 ms)'],
  },
  {
    page: 'docs/toolbox.md',
    readme: '1.513 → 5.436 ms, the CPU stage limits (1 worker: 20.86 ms)',
    log: '2026-11-24-h200-final/workers/workers.log',
    holds: [
      'without the stage 1.513 ms',
      'host checksum after each D2H: 5.436 ms',
      'host checksum after each D2H: 20.863 ms',
    ],
  },
  {
    page: 'README.md',
    readme: '| 128 MiB | 282.8 | 280.5 | −0.8% | 323.0 | 311.9 | −3.4% |',
    log: '2026-11-26-h100x2-rerun/log.txt',
    holds: [
      '134217728     33554432       474.60       282.80       282.80',
      '4 calls of 128 MiB per rank, 0.479 ms each (median rep 1.914 ms): algbw 280.5 GB/s',
    ],
  },
  {
    page: 'README.md',
    readme: '| 512 MiB | 309.9 | 309.3 | −0.2% | 346.4 | 328.1 | −5.3% |',
    log: '2026-11-26-h100x4-issue24/log.txt',
    holds: [
      '536870912    134217728      2324.79       230.93       346.40',
      '1 call of 512 MiB per rank, 2.454 ms each (median rep 2.454 ms): algbw 218.8 GB/s, busbw 328.1 GB/s',
    ],
  },
  {
    page: 'docs/several-gpus.md',
    readme: 'GPU 0 exposed 0.274 of 3.754 ms of communication (7.3%), GPU 1 0.304 of 3.698 ms (8.2%)',
    log: '2026-11-26-h100x2-rerun/log.txt',
    holds: ['GPU 0 3.754 ms communicating, 0.274 ms exposed', 'GPU 1 3.698 ms communicating, 0.304 ms exposed'],
  },
  {
    page: 'docs/development.md',
    readme:
      'At bdd9e74, after the house, trace-format and fast-start merges, it ran 1,950 tests: 1,877 passed, 73 skipped',
    log: '2026-11-28-first-hour/ci-run-bdd9e74.txt',
    holds: [
      '.ci/run at bdd9e74',
      'exported without .git',
      '# tests 1950',
      '# pass 1877',
      '# skipped 73',
      '# fail 0',
      '# duration_ms 137822',
    ],
  },
  {
    page: 'docs/development.md',
    readme: 'the runner took 138 s and the whole `.ci/run` 198.8 s on 2 cores, at a load average of 1.26 before it',
    log: '2026-11-28-first-hour/ci-run-bdd9e74.txt',
    holds: ['2 cores, load before: 1.26', '.ci/run: 198.8 s wall'],
  },
  {
    page: 'docs/development.md',
    readme: 'a copy without `.git` (1.25 to 1.55 s to make, at a load of about 4)',
    log: '2026-11-28-first-hour/ci-run-8c2b98f.txt',
    holds: [
      'git archive HEAD | tar -x: 1.25 s',
      'git archive HEAD | tar -x: 1.30 s',
      'git archive HEAD | tar -x: 1.55 s',
      'load 4.22',
      'load 3.96',
    ],
  },
  {
    page: 'docs/development.md',
    readme: 'a load average of 3.42 to 5.55 before each run, as their logs record',
    log: '2026-11-26-test-speed-4/two-workers/npm-test-a.txt',
    holds: ['load before: 5.55'],
  },
  {
    page: 'docs/development.md',
    readme: 'a load average of 3.42 to 5.55 before each run, as their logs record',
    log: '2026-11-26-test-speed-4/two-workers/npm-test-d.txt',
    holds: ['load before: 3.42'],
  },
  {
    page: 'README.md',
    readme: '(1.1 s, where it rebuilt for 53 s before; `docs/measurements/2026-11-28-first-hour/npx.log`)',
    log: '2026-11-28-first-hour/npx.log',
    holds: ['npx cuda-pipe --version : 1.12'],
  },
  {
    page: 'README.md',
    readme: 'and 1.35 s from a `git archive` of the tree (`docs/measurements/2026-11-28-cli-start-2/npx.log`)',
    log: '2026-11-28-cli-start-2/npx.log',
    holds: ['npx cuda-pipe --version : 1.35 s wall', 'dist/cli/cuda-pipe.js  # unchanged: nothing was built again'],
  },
  {
    page: 'docs/figures.md',
    readme: '`report` 290 (from 470), `compare` 330 (from 450), `schema` 160 (from 190), the floor 90',
    log: '2026-11-28-cli-start-2/start.log',
    holds: ['1: report      510.3', '3: report      316.0', '3: compare     394.5', '3: schema      201.6'],
  },
  {
    page: 'docs/ci-dashboards.md',
    readme: 'about a minute on 2 cores, 57 s in `docs/measurements/2026-11-28-first-hour/npx.log`',
    log: '2026-11-28-first-hour/npx.log',
    holds: ['2 cores', 'npm ci --no-audit --no-fund : 56.8'],
  },
  {
    page: 'docs/ci-dashboards.md',
    readme: '(1.1 s in that log, where it rebuilt for 53 s before)',
    log: '2026-11-28-first-hour/npx-before.log',
    holds: ['npx cuda-pipe --version : 53.39'],
  },
  {
    page: 'README.md',
    readme: 'where it rebuilt for 53 s before',
    log: '2026-11-28-first-hour/npx-before.log',
    holds: ['commit: 4a68361', 'npx cuda-pipe --version : 53.39'],
  },
  {
    page: 'README.md',
    readme: '`run --dry-run`: 0.75 s of CPU against 1.04 s',
    log: '2026-11-26-test-speed-4/cli-start.tsv',
    holds: ['dist/cli/cuda-pipe.js\trun --dry-run\t', 'dist/src/cli/main.js\trun --dry-run\t'],
  },
  {
    page: 'docs/measuring.md',
    readme: '| copy-bound, overlapped 16×4 | −5.9% | 6.75% | `faster` | −6.46% to −5.16% |',
    log: '2026-11-27-verdicts/rejudged.txt',
    holds: [
      'bound/run-copy-bound-1.json\toverlapped:16x4:depth-first:chunk-per-stream\t101/15\tsame\t-5.87%\t+6.75%\t6.0515-6.2358 | 5.7783-5.7910\tfaster\t-5.85% (-6.46% to -5.16%)',
    ],
  },
  {
    page: 'docs/measuring.md',
    readme: '| balanced, H2D + D2H at once | −5.8% | 6.80% | `faster` | −6.38% to −4.68% |',
    log: '2026-11-27-verdicts/rejudged.txt',
    holds: [
      'h200-balanced-16-traced.json\tbidirectional\t147/10\tsame\t-5.83%\t+6.80%\t5.6254-5.8013 | 5.3827-5.4282\tfaster\t-5.53% (-6.38% to -4.68%)',
    ],
  },
  {
    page: 'docs/measuring.md',
    readme: '| async-overlap, kernel sincos alone | +4.8% | 11.26% | `slower` | +3.12% to +6.00% |',
    log: '2026-11-27-verdicts/rejudged.txt',
    holds: [
      'run-async-overlap-1.json\tkernel:sincos\t112/15\tsame\t+4.80%\t+11.26%\t0.0680-0.0726 | 0.0719-0.0730\tslower\t+4.76% (+3.12% to +6.00%)',
    ],
  },
  {
    page: 'docs/measuring.md',
    readme: '| async-overlap, kernel sincos alone (another run) | +0.7% | 13.29% | `noisy` | −1.12% to +2.18% |',
    log: '2026-11-27-verdicts/rejudged.txt',
    holds: [
      'run-async-overlap-2.json\tkernel:sincos\t112/15\tsame\t+0.67%\t+13.29%\t0.0680-0.0726 | 0.0690-0.0724\tnoisy\t+0.64% (-1.12% to +2.18%)',
    ],
  },
  {
    page: 'docs/measuring.md',
    readme: '**0** (60 modes: 34 `same`, 25 `noisy`, 1 `faster`)',
    log: '2026-11-27-verdicts/rejudged.txt',
    holds: [
      'ab-base\tserial\t0 slower, 0 faster, 10 same, 0 noisy\t0 slower, 0 faster, 10 same, 0 noisy',
      'ab-base\th2d\t0 slower, 0 faster, 10 same, 0 noisy\t0 slower, 1 faster, 3 same, 6 noisy',
      'ab-base\td2h\t0 slower, 0 faster, 10 same, 0 noisy\t0 slower, 0 faster, 1 same, 9 noisy',
      'ab-base\tbidirectional\t0 slower, 0 faster, 10 same, 0 noisy\t0 slower, 0 faster, 0 same, 10 noisy',
    ],
  },
  {
    page: 'docs/measuring.md',
    readme: '**10** (serial 10, where the noise rule had called it `same` twice)',
    log: '2026-11-27-verdicts/rejudged.txt',
    holds: ['ab-heavier1\tserial\t8 slower, 0 faster, 2 same, 0 noisy\t10 slower, 0 faster, 0 same, 0 noisy'],
  },
  ...TWO_WORKER_RUNS,
  {
    page: 'docs/development.md',
    readme: 'With four queue processes instead of two, five runs had taken 67 to 90 s',
    log: '2026-11-26-test-speed-4/npm-test-b.txt',
    holds: ['npm test: 89.89 s wall', '# fail 0'],
  },
  {
    page: 'docs/development.md',
    readme: 'With four queue processes instead of two, five runs had taken 67 to 90 s',
    log: '2026-11-26-test-speed-4/npm-test-e.txt',
    holds: ['npm test: 67.11 s wall', '# fail 0'],
  },
];

describe("the README's figures", () => {
  for (const figure of SOURCED) {
    it(`"${figure.readme}" is in ${figure.page} and its figures in ${figure.log}`, () => {
      assert.ok(page(figure.page).includes(figure.readme), `not in ${figure.page}`);
      const text = log(figure.log);
      for (const held of figure.holds) assert.ok(text.includes(held), `${figure.log} lacks "${held}"`);
    });
  }

  it('quotes none of the figures no committed log holds, or an older run gave, in the README or any page it links', () => {
    for (const path of PAGES) {
      const text = page(path);
      for (const stale of [
        '3.943 ms',
        '3 min 44 s',
        '0.6–1.3 ms',
        '1.00 to 1.14×',
        '0.07× (1.507 ms → 21.63 ms)',
        '55 GPU or two-GPU tests',
        '0.981 and 1.005',
        '2.701 against 2.121',
        '1,703 tests',
        '1,818 tests',
        '1,913 tests',
        'nothing else running',
      ]) {
        assert.ok(!text.includes(stale), `${path}: ${stale}`);
      }
    }
  });

  it('the README is at most 350 lines and opens with a run output copied verbatim from the log it names', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    assert.ok(readme.split('\n').length <= 351, `${readme.split('\n').length} lines`);
    const block = /^```\n([\s\S]*?)\n```\n\n\*Copied verbatim from `docs\/measurements\/([^`]+)`/m.exec(readme);
    assert.ok(block, 'no output block naming its log');
    assert.ok(readme.indexOf(block[0]) < readme.indexOf('## Set up'), 'the output comes after the set-up');
    const [, output = '', path = ''] = block;
    assert.ok(log(path).includes(output), `${path} lacks the README's block`);
    assert.match(output, /^speedup over serial: /m);
  });

  it("the README's first screen is what report prints today from the Result it names, not an older build's", () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const block = /^```\n([\s\S]*?)\n```\n\n\*Copied verbatim from /m.exec(readme);
    const run = /\*, the report of the\srun in `(docs\/measurements\/[^`]+)`/.exec(readme);
    assert.ok(block && run, 'no output block naming the run it reports');
    const { code, stdout } = runCli(['report', join(run[1] ?? '', 'balanced.json')]);
    assert.equal(code, 0);
    assert.ok(stdout.includes(block[1] ?? ''), `report prints\n${stdout.slice(0, 1200)}`);
  });

  it('the README links every page the reference material moved to', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const path of PAGES.filter((p) => p !== 'README.md')) assert.ok(readme.includes(`](${path})`), path);
  });

  it('says the 7.77× of the CPU-bound stage was a spin loop that reads no memory, beside a stage that reads its chunk', () => {
    assert.match(
      page('docs/pipelines.md'),
      /\*\*7\.77×\*\*, for the built-in `cost`, a spin loop that reads no memory; the checksum, which reads every byte of its chunk, went 20\.86 → 5\.436 ms \(3\.84×\)/,
    );
    assert.equal((20.863 / 5.436).toFixed(2), '3.84');
  });
});
