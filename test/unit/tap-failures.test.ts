import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

// npm test prints the failed tests again at its end (scripts/test.mjs), because CI keeps only a log's last lines.

/** What scripts/tap-failures.mjs prints for a TAP log of these lines. */
function failuresOf(lines: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-tap-'));
  const file = join(dir, 'log.tap');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const run = spawnSync(process.execPath, ['scripts/tap-failures.mjs', file], { encoding: 'utf8', timeout: 10_000 });
  rmSync(dir, { recursive: true });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

const passing = ['    # Subtest: passes', '    ok 1 - passes', '      ---', '      duration_ms: 1', '      ...'];

describe('the failed tests npm test prints at its end', () => {
  it('names a failed test by its file and suites, with its error, and not the suites that failed through it', () => {
    const log = [
      'TAP version 13',
      '# Subtest: unit/a.test.js',
      '    # Subtest: the suite',
      ...passing.map((line) => `    ${line}`),
      '        # Subtest: breaks',
      '        not ok 2 - breaks',
      '          ---',
      "          failureType: 'testCodeFailure'",
      "          error: 'Expected values to be strictly equal'",
      '          ...',
      '    not ok 1 - the suite',
      '      ---',
      "      failureType: 'subtestsFailed'",
      '      ...',
      'not ok 1 - unit/a.test.js',
      '  ---',
      "  failureType: 'subtestsFailed'",
      '  ...',
      '# Subtest: unit/b.test.js',
      '    # Subtest: the other suite',
      ...passing.map((line) => `    ${line}`),
      '    ok 1 - the other suite',
      'ok 2 - unit/b.test.js',
    ];
    assert.equal(
      failuresOf(log),
      [
        '# not ok: unit/a.test.js > the suite > breaks',
        "  failureType: 'testCodeFailure'",
        "  error: 'Expected values to be strictly equal'",
        '',
      ].join('\n'),
    );
  });

  it('names a file that failed before any test in it ran, and cuts a long error at 40 lines', () => {
    const stack = Array.from({ length: 45 }, (_, i) => `    at frame ${i}`);
    const log = [
      '# Subtest: unit/crashed.test.js',
      'not ok 1 - unit/crashed.test.js',
      '  ---',
      "  failureType: 'testCodeFailure'",
      '  stack: |-',
      ...stack.map((line) => `  ${line}`),
      '  ...',
    ];
    const printed = failuresOf(log).trimEnd().split('\n');
    assert.equal(printed[0], '# not ok: unit/crashed.test.js');
    assert.deepEqual(printed.slice(1, 3), ["  failureType: 'testCodeFailure'", '  stack: |-']);
    assert.equal(printed.length, 1 + 40 + 1);
    assert.equal(printed.at(-2), '      at frame 37');
    assert.equal(printed.at(-1), '  (7 more lines)');
  });

  it('says so where no test failed', () => {
    assert.equal(failuresOf(['# Subtest: unit/b.test.js', ...passing, 'ok 1 - unit/b.test.js']), 'no test failed\n');
  });
});
