import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { destinationOf } from '../../src/cli/write-destination.js';
import { writeOutput } from '../../src/cli/write-file.js';
import { CudaPipeError, UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { cliEntry, runCli } from '../helpers/cli.js';

// What --json, --md, --svg, --html and --trace do with every kind of target: regular files are replaced whole, links
// are followed, devices and FIFOs are written through, and nothing is lost or claimed when a write fails. Device
// nodes and full disks are made inside a private mount namespace on a small tmpfs, never on the machine's own /dev.

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-hostile-out-'));
const traced = join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json');

function refusal(write: () => unknown): CudaPipeError {
  try {
    write();
  } catch (error) {
    assert.ok(error instanceof CudaPipeError, `expected one of our errors, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the write to be refused');
}

describe('output targets that are not plain files', () => {
  it('a symbolic link is followed: its target is replaced and the link stays a link', async () => {
    mkdirSync(join(dir, 'runs'));
    writeFileSync(join(dir, 'runs', 'a.json'), 'old');
    symlinkSync('runs/a.json', join(dir, 'latest.json'));
    await writeOutput(join(dir, 'latest.json'), '{"new":1}\n');
    assert.equal(readlinkSync(join(dir, 'latest.json')), 'runs/a.json');
    assert.equal(readFileSync(join(dir, 'runs', 'a.json'), 'utf8'), '{"new":1}\n');
    assert.deepEqual(readdirSync(join(dir, 'runs')), ['a.json']);
  });

  it('a dangling link creates its target; a chain of links ending in a loop is a usage error', async () => {
    symlinkSync('made-by-write.json', join(dir, 'dangling'));
    await writeOutput(join(dir, 'dangling'), 'x');
    assert.equal(readFileSync(join(dir, 'made-by-write.json'), 'utf8'), 'x');
    symlinkSync('loop-b', join(dir, 'loop-a'));
    symlinkSync('loop-a', join(dir, 'loop-b'));
    const error = refusal(() => writeOutput(join(dir, 'loop-a'), 'x'));
    assert.ok(error instanceof UsageError);
    assert.match(error.message, /loop-a: its symbolic links form a loop/);
  });

  it('keeps the permissions of the file it replaces', async () => {
    const target = join(dir, 'private.json');
    writeFileSync(target, 'old');
    chmodSync(target, 0o600);
    await writeOutput(target, 'new');
    assert.equal(statSync(target).mode & 0o777, 0o600);
  });

  it('a name as long as a folder entry can be still gets a temporary name that fits', async () => {
    const target = join(dir, `${'n'.repeat(250)}.json`);
    await writeOutput(target, 'long');
    assert.equal(readFileSync(target, 'utf8'), 'long');
  });

  it('an empty name, a NUL byte and a folder are refused', () => {
    assert.match(refusal(() => destinationOf('')).message, /^An output file name is empty\.$/);
    assert.match(refusal(() => destinationOf('a\0b')).message, /cannot hold a NUL byte/);
    assert.match(refusal(() => destinationOf(dir)).message, /it is a folder; name a file inside it/);
  });

  it('/dev/stdout and /dev/fd/1 are our stdout, never replaced: the document goes there and the table moves to stderr', () => {
    for (const path of ['/dev/stdout', '/dev/fd/1']) {
      const { code, stdout, stderr } = runCli(['report', traced, '--md', path]);
      assert.equal(code, 0, stderr);
      assert.match(stdout, /^### cuda-pipe · balanced on NVIDIA H200/);
      assert.match(stderr, /speedup/);
      assert.equal(runCli(['report', traced, '--md', path, '--json', '-']).code, 2, `${path} and - are both stdout`);
    }
    assert.equal(lstatSync('/dev/stdout').isSymbolicLink(), true);
  });

  it('/dev/stdout redirected to a file writes into that file, which stays the same file', () => {
    const target = join(dir, 'redirected.md');
    writeFileSync(target, '');
    const before = statSync(target).ino;
    const out = openSync(target, 'w');
    const run = spawnSync(process.execPath, [...cliEntry(), 'report', traced, '--md', '/dev/stdout'], {
      cwd: packageRoot(),
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', out, 'pipe'],
      encoding: 'utf8',
    });
    closeSync(out);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(statSync(target).ino, before);
    assert.match(readFileSync(target, 'utf8'), /^### cuda-pipe · balanced on NVIDIA H200/);
  });

  it('a FIFO is written through to its reader, and one with no reader is an error, not a hang', async (t) => {
    const fifo = join(dir, 'pipe');
    const made = spawnSync('mkfifo', [fifo], { encoding: 'utf8' });
    // A test that returned here passed without testing anything; a skip says so in the report, with mkfifo's words.
    if (made.status !== 0) {
      t.skip(`mkfifo could not make a FIFO: ${made.error?.message ?? made.stderr.trim()}`);
      return;
    }
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    let read = '';
    reader.stdout.on('data', (chunk: Buffer) => {
      read += chunk.toString();
    });
    const closed = new Promise((done) => reader.on('close', done));
    const child = spawn(process.execPath, [...cliEntry(), 'report', traced, '--json', fifo], {
      cwd: packageRoot(),
      stdio: 'ignore',
    });
    const code = await new Promise((done) => child.on('close', done));
    await closed;
    assert.equal(code, 0);
    assert.equal(JSON.parse(read).schema, 'cuda-pipe/result');
    assert.equal(lstatSync(fifo).isFIFO(), true);
    const lonely = runCli(['report', traced, '--json', fifo], {}, { timeoutMs: 20_000, process: true });
    assert.equal(lonely.code, 2);
    assert.match(
      lonely.stderr,
      /^cuda-pipe: Cannot write \S+pipe: no process opened the named pipe for reading within 2 s\./,
    );
  });
});

describe('output flags that clash or would be ignored', () => {
  it('two documents naming one file, directly or through a link, are a usage error before anything is written', () => {
    const target = join(dir, 'same.json');
    symlinkSync('same.json', join(dir, 'alias.json'));
    for (const md of [target, join(dir, 'alias.json')]) {
      const { code, stderr } = runCli(['report', traced, '--json', target, '--md', md]);
      assert.equal(code, 2);
      assert.match(
        stderr,
        /^cuda-pipe: --json and --md both name \S+\.json: the second document would replace the first\./,
      );
    }
    assert.throws(() => statSync(target), /ENOENT/);
  });

  it('run --dry-run refuses output flags it would ignore, and writes nothing', () => {
    const target = join(dir, 'dry.json');
    const { code, stderr } = runCli(['run', '--dry-run', '--json', target, '--timeline']);
    assert.equal(code, 2);
    assert.match(stderr, /^cuda-pipe: --json, --timeline cannot go with --dry-run: a dry run measures nothing/);
    assert.throws(() => statSync(target), /ENOENT/);
  });

  it('run --no-tracing refuses pictures of the traced reps it skips', () => {
    const { code, stderr } = runCli(['run', '--no-tracing', '--svg', join(dir, 't.svg')]);
    assert.equal(code, 2);
    assert.match(stderr, /^cuda-pipe: --svg draws the traced reps, which --no-tracing skips\./);
  });

  it('an empty output name is a usage error', () => {
    const { code, stderr } = runCli(['report', traced, '--json', '']);
    assert.equal(code, 2);
    assert.match(stderr, /^cuda-pipe: An output file name is empty\.\nName a file, or - for stdout\.\n$/);
  });
});

/**
 * Runs `script` as root in a private mount namespace with a tmpfs of `size` at $T; null when that is not permitted
 * here.
 */
function inNamespace(size: string, script: string): { status: number | null; stdout: string; stderr: string } | null {
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', `mount -t tmpfs -o size=${size} tmpfs "$(mktemp -d)"`], {
    encoding: 'utf8',
  });
  if (probe.status !== 0) return null;
  // The paths of node and the CLI hold no spaces here, so $CLI splits into its words.
  const cli = [process.execPath, ...cliEntry()].join(' ');
  const run = spawnSync(
    'unshare',
    [
      '-m',
      'sh',
      '-c',
      `set -u; T=$(mktemp -d); mount -t tmpfs -o size=${size} tmpfs "$T"; cd "$T"; CLI="${cli}"; ${script}`,
    ],
    {
      encoding: 'utf8',
      cwd: packageRoot(),
      env: { ...process.env, NO_COLOR: '1', TRACED: traced },
      timeout: 60_000,
    },
  );
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('device nodes and a full disk, in a private mount namespace', () => {
  const skip =
    spawnSync('unshare', ['-m', 'true']).status === 0
      ? false
      : 'unshare -m is not permitted here (needs root or user namespaces)';

  it('a character device is written through, never replaced; a block device is refused', { skip }, (t) => {
    const run = inNamespace(
      '1m',
      [
        'mknod null c 1 3; mknod disk b 7 0',
        '$CLI report "$TRACED" --json null >/dev/null; echo "null:$?"',
        '[ -c null ] && echo "still a device"',
        '$CLI report "$TRACED" --json disk >/dev/null 2>err; echo "disk:$?"; cat err',
      ].join('; '),
    );
    if (run === null) return t.skip('mounting a tmpfs is not permitted here');
    assert.match(
      run.stdout,
      /null:0\nstill a device\ndisk:2\ncuda-pipe: Cannot write disk: it is a block device, which a report would overwrite\./,
    );
  });

  it('/dev/full-like devices and a full tmpfs are exit 3 naming the errno; the old file stays whole and no temporary is left', {
    skip,
  }, (t) => {
    const run = inNamespace(
      '64k',
      [
        'mknod full c 1 7',
        '$CLI report "$TRACED" --json full >/dev/null 2>err; echo "full:$?"; cat err',
        'echo old > result.json; head -c 40000 /dev/zero > filler',
        '$CLI report "$TRACED" --json result.json >/dev/null 2>err; echo "disk:$?"; cat err; cat result.json; ls -a',
        // The disk is full, so stderr comes here rather than to a file.
        '$CLI report "$TRACED" --json - 2>&1 >out.json; echo "stdout:$?"',
        '$CLI report "$TRACED" 2>&1 >table.txt; echo "table:$?"',
      ].join('; '),
    );
    if (run === null) return t.skip('mounting a tmpfs is not permitted here');
    assert.match(run.stdout, /^full:3\ncuda-pipe: Cannot write full: no space left on the device\.\n/);
    assert.match(
      run.stdout,
      /disk:3\ncuda-pipe: Cannot write result\.json: no space left on the device; the file there, if any, is as it was\.\nFree some space, or write somewhere else\.\nold\n\.\n\.\.\nerr\nfiller\nfull\nresult\.json\n/,
    );
    assert.match(
      run.stdout,
      /cuda-pipe: Cannot write stdout: no space left on the device\.\nFree some space, or write somewhere else\.\nstdout:3\n/,
    );
    // The table, written to stdout as a stream, fails the same way.
    assert.match(run.stdout, /\ncuda-pipe: Cannot write to stdout: no space left on the device\.\ntable:3\n$/);
  });
});
