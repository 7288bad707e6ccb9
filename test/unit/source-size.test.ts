import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';

// Issue 28 asked that no source file grow past 400 lines: a file that long has become a hub, and is split by what
// it does. Tests beside the kinds are left out (they are tests, not sources).

const LIMIT = 400;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('the sources', () => {
  it(`are each at most ${LIMIT} lines`, () => {
    const root = packageRoot();
    const long = sources(join(root, 'src'))
      .map((file) => ({ file: relative(root, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > LIMIT);
    assert.deepEqual(long, []);
  });

  it('would name a file over the limit (the scan reads the kinds and the core alike)', () => {
    const root = packageRoot();
    const counted = sources(join(root, 'src')).map((file) => relative(root, file));
    assert.ok(
      counted.includes(join('src', 'kinds', 'api', 'run.ts')) && counted.includes(join('src', 'exec', 'issue.ts')),
    );
  });
});
