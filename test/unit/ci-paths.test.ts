import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';

// Issue 39: the documented ways to run cuda-pipe in CI and on a GPU runner run as written, and the first
// `npx cuda-pipe` after `npm ci` builds nothing again (npm runs the linked checkout's prepare script a second time).

describe("prepare's check that dist/ holds a build of the sources (scripts/build-fresh.mjs)", () => {
  /** A package root with a source, its compiled file and the CLI's bundle, each file's time in seconds since 2026. */
  function tree(times: Record<string, number>): string {
    const root = mkdtempSync(join(tmpdir(), 'cuda-pipe-fresh-'));
    for (const [file, seconds] of Object.entries(times)) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), '');
      const at = 1_767_225_600 + seconds;
      utimesSync(join(root, file), at, at);
    }
    return root;
  }
  const fresh = (root: string) => spawnSync(process.execPath, ['scripts/build-fresh.mjs', root], { encoding: 'utf8' });
  const built = {
    'src/cli/main.ts': 0,
    'package.json': 0,
    'tsconfig.json': 0,
    'node_modules/.package-lock.json': 0,
    'dist/src/cli/main.js': 5,
    'dist/cli/cuda-pipe.js': 10,
  };

  it('skips the build where the bundle is newer than every source, config and installed package', () => {
    const run = fresh(tree(built));
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /dist\/ holds a build of these sources; not built again/);
  });

  it('builds where the bundle is missing, a source is newer, a source has no compiled file, or npm ci ran since', () => {
    const cases: Array<[Record<string, number>, RegExp]> = [
      [
        Object.fromEntries(Object.entries(built).filter(([file]) => !file.startsWith('dist/cli/'))),
        /dist\/cli\/cuda-pipe\.js is missing/,
      ],
      [{ ...built, 'src/cli/main.ts': 20 }, /src\/cli\/main\.ts is newer than the build/],
      [{ ...built, 'src/report/new.ts': 1 }, /src\/report\/new\.ts has no compiled file in dist\//],
      [
        { ...built, 'node_modules/.package-lock.json': 20 },
        /node_modules\/\.package-lock\.json is newer than the build/,
      ],
      [{ ...built, 'tsconfig.json': 20 }, /tsconfig\.json is newer than the build/],
    ];
    for (const [times, why] of cases) {
      const run = fresh(tree(times));
      assert.equal(run.status, 1, run.stderr);
      assert.match(run.stderr, why);
    }
  });

  it('is what prepare runs, falling back to the build', () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    assert.equal(scripts.prepare, 'node scripts/build-fresh.mjs || npm run build');
  });
});

describe('the CI snippets in the docs', () => {
  const blocks = (path: string) =>
    [...readFileSync(path, 'utf8').matchAll(/```ya?ml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const snippets = [...blocks('docs/ci-dashboards.md'), ...blocks('docs/measuring.md')];
  /** Each cuda-pipe command line a snippet runs: its command and its flags. */
  const commandLines = (block: string) =>
    [...block.matchAll(/(?:npx |\/bin\/)cuda-pipe (\w+)([^\n#]*)/g)].map(([, command, rest]) => ({
      command: command ?? '',
      flags: [...(rest ?? '').matchAll(/(--[a-z-]+)/g)].map((f) => f[1]),
    }));

  it('install once before running cuda-pipe, and never build again after npm ci', () => {
    assert.ok(snippets.length >= 4, `${snippets.length} snippets`);
    for (const block of snippets.filter((b) => /cuda-pipe (run|ab|compare)|perf-regression/.test(b))) {
      const install = block.search(/npm ci/);
      assert.ok(install >= 0, `no npm ci before cuda-pipe runs:\n${block}`);
      assert.ok(install < block.search(/(npx |bin\/)cuda-pipe|perf-regression/), block);
      assert.doesNotMatch(block, /npm run build/, 'npm ci has built it');
    }
  });

  it("use only flags each command takes, the perf gate's included", () => {
    const lines = snippets.flatMap(commandLines);
    assert.ok(lines.some((l) => l.flags.includes('--junit')));
    for (const { command, flags } of lines) {
      const help = runCli([command, '--help']).stdout;
      for (const flag of flags) assert.match(help, new RegExp(`^ {2}${flag}\\b`, 'm'), `${command} ${flag}`);
    }
    const gate = spawnSync('bash', ['scripts/perf-regression', '--help'], { encoding: 'utf8' }).stdout;
    for (const block of snippets) {
      for (const [, rest] of block.matchAll(/perf-regression([^\n#]*)/g)) {
        for (const [flag] of (rest ?? '').matchAll(/--[a-z-]+/g))
          assert.ok(gate.includes(flag), `perf-regression ${flag}`);
      }
    }
  });
});
