import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { loadResults } from '../../src/result/load.js';
import { runCli } from '../helpers/cli.js';

// A Result read back must be one a run could have written: the schema checks its shape, load.ts (validate.ts) its
// numbers and how its parts refer to each other. Each broken file is exit 2 naming the field, never a drawing or a
// comparison of nonsense.

const fixtures = join(packageRoot(), 'test', 'fixtures');
const traced = join(fixtures, 'h200-balanced-16-traced.json');
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-hostile-results-'));

// Edited as the plain JSON it is on disk, before any schema gives it a type.
// biome-ignore lint/suspicious/noExplicitAny: the tests reach into any field of the file as hostile input would.
type Json = Record<string, any>;

/** The traced fixture with one change, saved under `name`. */
function broken(name: string, change: (result: Json) => void): string {
  const result = JSON.parse(readFileSync(traced, 'utf8')) as Json;
  change(result);
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(result));
  return path;
}

function refusal(path: string): string {
  try {
    loadResults(path);
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
    return error.message;
  }
  assert.fail(`${path} was accepted`);
}

const CASES: ReadonlyArray<[string, (r: Json) => void, RegExp]> = [
  [
    'negative-median',
    (r) => {
      r.modes[1].stats.median = -0.5;
    },
    /modes\[1\]\.stats\.median: a time must be positive, got -0\.5/,
  ],
  [
    'zero-median',
    (r) => {
      r.modes[0].stats.median = 0;
    },
    /modes\[0\]\.stats\.median: a time must be positive, got 0/,
  ],
  [
    'no-modes',
    (r) => {
      r.modes = [];
    },
    /: modes: a Result with no modes measured nothing/,
  ],
  [
    'op-ends-first',
    (r) => {
      r.timeline.reps[0].ops[2].endMs = r.timeline.reps[0].ops[2].startMs - 1;
    },
    /timeline\.reps\[0\]\.ops\[2\]\.endMs: the op ends at \S+ ms, before it starts/,
  ],
  [
    'op-before-rep',
    (r) => {
      r.timeline.reps[0].ops[0].startMs = -3;
    },
    /timeline\.reps\[0\]\.ops\[0\]\.startMs: an op cannot start before its rep, got -3/,
  ],
  [
    'zero-rep',
    (r) => {
      r.timeline.reps[0].totalMs = 0;
    },
    /timeline\.reps\[0\]\.totalMs: a traced rep's time must be positive/,
  ],
  [
    'sample-zero',
    (r) => {
      r.modes[2].samplesMs[3] = 0;
    },
    /modes\[2\]\.samplesMs\[3\]: a rep's GPU time must be positive, got 0/,
  ],
  [
    'no-samples',
    (r) => {
      r.modes[0].samplesMs = [];
    },
    /modes\[0\]\.samplesMs: a measured mode has at least one timed rep/,
  ],
  [
    'n-disagrees',
    (r) => {
      r.modes[0].stats.n += 1;
    },
    /modes\[0\]\.stats\.n: the statistics count \d+ samples, the mode holds \d+/,
  ],
  [
    'median-outside',
    (r) => {
      r.modes[0].stats.median = r.modes[0].stats.max * 2;
    },
    /modes\[0\]\.stats\.median: the median \S+ is not between min/,
  ],
  [
    'speedup-zero',
    (r) => {
      r.summary.speedup = 0;
    },
    /summary\.speedup: a speedup must be positive, got 0/,
  ],
  [
    'headline-missing',
    (r) => {
      r.summary.mode = 'overlapped:no-such';
    },
    /summary\.mode: the headline names mode "overlapped:no-such", which the Result does not hold/,
  ],
  [
    'device-missing',
    (r) => {
      r.modes[0].device = 7;
    },
    /modes\[0\]\.device: device 7 is not among the Result's devices \(0\)/,
  ],
  [
    'twice',
    (r) => {
      r.modes.push(r.modes[0]);
    },
    /modes\[\d+\]\.id: mode "serial" appears twice/,
  ],
  [
    'passed-with-mismatches',
    (r) => {
      r.verification.mismatches = [
        {
          buffer: 'output',
          mode: r.summary.mode,
          index: 0,
          expected: '0x1',
          actual: '0x2',
          differing: 1,
          unwritten: false,
        },
      ];
    },
    /verification\.mismatches: verification passed, yet 1 mismatches are listed/,
  ],
  [
    'failed-over-nothing',
    (r) => {
      r.verification.status = 'failed';
    },
    /verification\.mismatches: verification failed, yet no mismatch is listed/,
  ],
];

describe('Results read back are checked beyond their schema', () => {
  for (const [name, change, message] of CASES) {
    it(`refuses ${name.replace(/-/g, ' ')}, naming the field`, () => {
      const path = broken(name, change);
      const text = refusal(path);
      assert.ok(text.startsWith(`${path}: `), text);
      assert.match(text, message);
    });
  }

  it('refuses 1e999, which JSON reads as Infinity', () => {
    const path = join(dir, 'infinite.json');
    writeFileSync(path, readFileSync(traced, 'utf8').replace(/"median": [0-9.e-]+/, '"median": 1e999'));
    assert.match(refusal(path), /modes\[0\]\.stats\.median: not a valid version 2 result: .*Infinity/);
  });

  it('accepts every recorded Result and baseline', () => {
    const baselines = join(packageRoot(), 'baselines');
    const files = [
      ...readdirSync(fixtures)
        .filter((f) => f.endsWith('.json') && !f.includes('probe'))
        .map((f) => join(fixtures, f)),
      ...readdirSync(baselines, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.json'))
        .map((f) => join(baselines, f)),
    ];
    for (const file of files) assert.ok(loadResults(file).length > 0, file);
  });

  it('compare, report and timeline exit 2 on such a file, with one paragraph and no trace of +Infinity', () => {
    const zero = broken('zero-baseline', (r) => {
      r.modes[0].stats.median = 0;
    });
    const backwards = broken('backwards-op', (r) => {
      r.timeline.reps[0].ops[0].endMs = -1;
    });
    for (const args of [
      ['compare', zero, traced],
      ['report', zero],
      ['timeline', backwards],
    ]) {
      const { code, stdout, stderr } = runCli(args);
      assert.equal(code, 2, args.join(' '));
      assert.equal(stdout, '');
      assert.match(
        stderr,
        /^cuda-pipe: \S+\.json: \S+: .*; this is not a Result cuda-pipe wrote, or it was changed since\.\n[^\n]+\n$/,
      );
      assert.doesNotMatch(stderr, /Infinity|    at /);
    }
  });
});
