import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';

// Most tests run their command lines in a worker thread of their own process (test/helpers/cli.ts). That is only
// worth its speed if a run there is the run a user gets: the same exit code, stdout and stderr as in a process.

const traced = join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json');
const commandLines: ReadonlyArray<readonly string[]> = [
  ['--help'],
  ['report', traced],
  ['report', traced, '--json', '-', '--md', join(packageRoot(), 'no-such-folder', 'r.md')],
  ['compare', traced, traced, '--json', '-'],
  ['run', '--streams', '0'],
  ['analyze', join(packageRoot(), 'test', 'fixtures', 'analyze', 'host-sync.json'), '--ab'],
  // --ab's sides are told apart by where -- stands on the command line, which a run in the thread must see too.
  [
    'analyze',
    '--ab',
    join(packageRoot(), 'test', 'fixtures', 'analyze', 'host-sync.json'),
    '--',
    join(packageRoot(), 'test', 'fixtures', 'analyze', 'copy-overlapped.json'),
  ],
];

describe('a command line run in the worker thread', () => {
  for (const args of commandLines) {
    it(`gives what a process of its own gives: cuda-pipe ${args.map((a) => a.replace(packageRoot(), '.')).join(' ')}`, {
      timeout: 60_000,
    }, () => {
      const inThread = runCli(args, { COLUMNS: '100' });
      const inProcess = runCli(args, { COLUMNS: '100' }, { process: true });
      assert.equal(inThread.code, inProcess.code, inProcess.stderr);
      assert.equal(inThread.stdout, inProcess.stdout);
      assert.equal(inThread.stderr, inProcess.stderr);
    });
  }
});
