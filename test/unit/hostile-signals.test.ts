import assert from 'node:assert/strict';
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { cliEntry } from '../helpers/cli.js';

// SIGINT and SIGTERM end every command with 130 (the exit-code table of docs/reference/cli.md), whatever it is doing,
// and an output being written when the signal comes is not left half-written: its temporary file goes and the target
// stays as it was.
// Each test sends a real signal to a real process, and kills it with SIGKILL if it has not ended within 20 s.

const DEADLINE_MS = 20_000;
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-signals-'));
const fixtures = join(packageRoot(), 'test', 'fixtures');
// The large Result is 48 MB: not left in the temporary folder after every run of the suite.
after(() => rmSync(dir, { recursive: true, force: true }));

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

function start(args: readonly string[], stdout: 'ignore' | 'pipe'): ChildProcessByStdio<null, Readable | null, Readable> {
  return spawn(process.execPath, [...cliEntry(), ...args], {
    cwd: packageRoot(),
    stdio: ['ignore', stdout, 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  }) as ChildProcessByStdio<null, Readable | null, Readable>;
}

/** Waits for the child to end, killing it at the deadline so that a process that ignores the signal fails the test. */
function ended(child: ChildProcessByStdio<null, Readable | null, Readable>): Promise<Ended> {
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS);
  return new Promise((done) =>
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      // A stdout the test stopped reading is drained now, so that the pipes close and stderr is read to its end.
      child.stdout?.resume();
      child.on('close', () => done({ code, signal, stderr }));
    }),
  );
}

/** A Result of about 48 MB (its notes), so that writing it again takes many chunks. */
function largeResult(): string {
  const result = JSON.parse(readFileSync(join(fixtures, 'h200-balanced-16-traced.json'), 'utf8')) as { notes: string[] };
  result.notes = Array.from({ length: 48 }, (_, i) => `note ${i} ${'x'.repeat(1 << 20)}`);
  const path = join(dir, 'large.json');
  writeFileSync(path, JSON.stringify(result));
  return path;
}

describe('a signal while a document is being written', () => {
  it('SIGTERM mid-write of a large --json removes the temporary file, keeps the old target and exits 130', { timeout: DEADLINE_MS + 5_000 }, async () => {
    const source = largeResult();
    const folder = mkdtempSync(join(dir, 'out-'));
    const target = join(folder, 'result.json');
    writeFileSync(target, 'the previous result');
    const child = start(['report', source, '--json', target], 'ignore');
    const done = ended(child);
    // The temporary file appears when the write begins; the signal is sent the moment it is seen.
    const watch = setInterval(() => {
      if (readdirSync(folder).some((name) => name.endsWith('.tmp'))) {
        clearInterval(watch);
        child.kill('SIGTERM');
      }
    }, 2);
    const { code, signal, stderr } = await done;
    clearInterval(watch);
    assert.equal(signal, null, `the process died by the signal, with nothing cleaned up\n${stderr}`);
    assert.equal(code, 130, stderr);
    assert.equal(stderr, `cuda-pipe: Interrupted (SIGTERM) while writing ${target}: its temporary file was removed and the file there, if any, is as it was.\n`);
    assert.deepEqual(readdirSync(folder), ['result.json'], 'no temporary file is left beside the target');
    assert.equal(readFileSync(target, 'utf8'), 'the previous result');
  });

  it('SIGTERM while a reader leaves stdout full (--json -) ends the write with 130, not death by signal', { timeout: DEADLINE_MS + 5_000 }, async () => {
    const child = start(['report', join(fixtures, 'h200-graph-launches-host-bound.json'), '--json', '-'], 'pipe');
    const done = ended(child);
    // Read the first bytes, then nothing more: the pipe fills and the write waits for a reader.
    await new Promise<void>((begun) => child.stdout?.once('data', () => begun()));
    child.stdout?.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGTERM');
    const { code, signal, stderr } = await done;
    assert.equal(signal, null, `the process died by the signal\n${stderr}`);
    assert.equal(code, 130, stderr);
    assert.equal(stderr, 'cuda-pipe: Interrupted (SIGTERM) while writing stdout: the reader got part of it.\n');
  });
});

describe('a signal in a command that uses no GPU', () => {
  it('SIGTERM during `run --dry-run` exits 130, as docs/reference/cli.md says, not 143', { timeout: DEADLINE_MS + 5_000 }, async () => {
    // A long plan (--ops over 1,024 chunks) into a pipe nobody reads: the dry run is still delivering it when the signal comes.
    const child = start(['run', '--dry-run', '--ops', '--chunks', '1024', '--streams', '8'], 'pipe');
    const done = ended(child);
    await new Promise<void>((begun) => child.stdout?.once('data', () => begun()));
    child.stdout?.pause();
    child.kill('SIGTERM');
    const { code, signal, stderr } = await done;
    assert.equal(signal, null, `the process died by the signal (exit 143 in a shell)\n${stderr}`);
    assert.equal(code, 130, stderr);
    assert.equal(stderr, 'cuda-pipe: Interrupted (SIGTERM) before the command finished.\n');
  });

  it('SIGINT during `run --dry-run` exits 130 too', { timeout: DEADLINE_MS + 5_000 }, async () => {
    const child = start(['run', '--dry-run', '--ops', '--chunks', '1024', '--streams', '8'], 'pipe');
    const done = ended(child);
    await new Promise<void>((begun) => child.stdout?.once('data', () => begun()));
    child.stdout?.pause();
    child.kill('SIGINT');
    const { code, signal, stderr } = await done;
    assert.equal(signal, null, stderr);
    assert.equal(code, 130, stderr);
    assert.equal(stderr, 'cuda-pipe: Interrupted (SIGINT) before the command finished.\n');
  });
});
