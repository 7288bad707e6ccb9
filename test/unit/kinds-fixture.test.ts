import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

// A kind is one folder and one row of the list (src/kinds/list.ts). The echo kind (test/fixtures/kinds/echo/)
// exists only in tests: ../fixtures/kinds/with-echo.ts adds its import and its row to the list as it loads, and
// with it the core reaches the kind through the list alone, and every test that reads the list passes unchanged.

const compiled = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const WITH_ECHO = compiled('../fixtures/kinds/with-echo.js');
const DIST = compiled('../../');

/** Runs node with the echo kind in the list, as a run of its own (not a child of this test's runner). */
function withEcho(args: readonly string[], timeout: number) {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  return spawnSync(process.execPath, ['--import', WITH_ECHO, ...args], {
    encoding: 'utf8',
    timeout,
    cwd: process.cwd(),
    env,
  });
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : sources(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The tests that read the list: those that import it, and those that redraw recorded Results (every picture's
 * legend, engine rows and labels come from the list). This file is left out: it runs them.
 */
const REDRAWN = ['recorded-results', 'model-snapshot', 'exports', 'planner', 'kind-names'];
const listReaders = [...sources('src'), ...sources('test')]
  .filter((file) => !file.endsWith('kinds-fixture.test.ts'))
  .filter((file) => {
    const text = readFileSync(file, 'utf8');
    const name =
      file
        .split('/')
        .pop()
        ?.replace(/\.test\.ts$/, '') ?? '';
    return (
      text.includes("kinds/index.js'") ||
      (file.startsWith('src/kinds/') && text.includes("from '../index.js'")) ||
      REDRAWN.includes(name)
    );
  })
  .map((file) => join(DIST, relative('.', file)).replace(/\.ts$/, '.js'));

describe('a kind is one folder and one row of the list', () => {
  it('reaches the echo fixture kind through the list alone: planned ops described, issued through its runtime, recorded', {
    timeout: 60_000,
  }, () => {
    const run = withEcho([compiled('../fixtures/kinds/echo/through-the-list.js')], 50_000);
    assert.equal(run.status, 0, run.stderr);
    const seen = JSON.parse(run.stdout);
    assert.deepEqual(seen.stages, ['h2d', 'kernel', 'gemm', 'matmul', 'collective', 'd2h', 'host', 'peer', 'echo']);
    assert.equal(seen.stage, 'echo');
    assert.equal(seen.described, 'echo of "y", chunk 2');
    assert.deepEqual(seen.timeline, { buffer: 'y', kernel: null, bytes: 64 });
    assert.deepEqual(seen.names, ['echo y']);
    assert.equal(seen.status, 0);
    assert.deepEqual(seen.echoed, ['y on device 0']);
    assert.deepEqual(seen.notes, ['echo: 1 ops over 1 schedules']);
    assert.ok(seen.environment.includes('CUDA_PIPE_ECHO'), seen.environment.join(', '));
    assert.equal(seen.engines.at(-1), 'echo');
  });

  it('passes every test that reads the list with the echo kind in it, unchanged', { timeout: 900_000 }, () => {
    assert.ok(listReaders.length >= 10, listReaders.join('\n'));
    const run = withEcho(['--test', '--test-reporter=dot', ...listReaders], 880_000);
    assert.equal(run.status, 0, `${run.stdout.slice(-4000)}\n${run.stderr.slice(-4000)}`);
  });
});
