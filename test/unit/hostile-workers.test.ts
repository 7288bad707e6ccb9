import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { WorkerPool } from '../../src/kinds/host/workers/pool.js';
import { cliEntry, runCli } from '../helpers/cli.js';

// A host stage's ES module is the user's code, loaded in every worker: it gets a config's rules (a regular file, a
// size limit), a load deadline, and exit 2 naming it for whatever it does while it loads. Each case has a deadline
// of its own, so a module that hangs fails the test in seconds.

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-hostile-workers-'));

function module(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** configs/host-stage.yaml with its stage's function from `after` (YAML), on 2 workers. */
function config(name: string, after: string): string {
  const text = readFileSync(join(packageRoot(), 'configs', 'host-stage.yaml'), 'utf8')
    .replace('after: checksum', `after: ${after}\n  workers: 2`)
    .replace('source: scale.cu', `source: ${join(packageRoot(), 'kernels', 'scale.cu')}`);
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function openRejection(path: string, loadTimeoutMs?: number): Promise<UsageError> {
  const started = performance.now();
  try {
    await WorkerPool.open({
      workers: 2,
      functions: { after: { kind: 'module', path, export: 'run' } },
      ...(loadTimeoutMs ? { loadTimeoutMs } : {}),
    });
  } catch (error) {
    assert.ok(
      error instanceof UsageError,
      `expected a UsageError, got ${error instanceof Error ? error.stack : String(error)}`,
    );
    assert.ok(performance.now() - started < 10_000, 'the pool took more than 10 s to give up');
    return error;
  }
  assert.fail('expected the module to be refused');
}

describe('host stage modules that are not regular files', () => {
  it('--dry-run refuses a module that does not exist, a FIFO, /dev/zero and one above 16 MiB, naming it', () => {
    const fifo = join(dir, 'pipe.mjs');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const big = module('big.mjs', `// ${'x'.repeat(16 * 1024 * 1024)}\n`);
    const cases = [
      [join(dir, 'absent.mjs'), /Cannot read module \S+absent\.mjs: no such file\./],
      [fifo, /Cannot read module \S+pipe\.mjs: is a named pipe \(FIFO\), not a regular file\./],
      ['/dev/zero', /Cannot read module \/dev\/zero: is a device, not a regular file\./],
      [big, /big\.mjs: it is 16777220 bytes, more than the 16 MiB a module may be\./],
    ] as const;
    for (const [path, message] of cases) {
      // A FIFO gets a process of its own: were it ever opened, only killing a process would end the wait.
      const run = runCli(
        ['run', '--dry-run', config('dry.yaml', `{ module: ${path}, export: run }`)],
        {},
        { timeoutMs: 20_000, process: path === fifo },
      );
      assert.equal(run.code, 2, `${path}: ${run.stderr}`);
      assert.match(run.stderr, /^cuda-pipe: host stage function 'after': /);
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, /\n\s+at /);
    }
  });

  it('the pool refuses a FIFO before a worker imports it', { timeout: 15_000 }, async () => {
    const fifo = join(dir, 'pool-pipe.mjs');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    assert.match(
      (await openRejection(fifo)).message,
      /^host stage function 'after': Cannot read module \S+pool-pipe\.mjs: is a named pipe \(FIFO\)/,
    );
  });
});

describe('host stage modules that misbehave while they load', () => {
  it('process.exit(7) at load is exit 2 naming the module and the code', { timeout: 15_000 }, async () => {
    const error = await openRejection(module('exits.mjs', 'process.exit(7);\nexport const run = () => 0;\n'));
    assert.match(
      error.message,
      /^host stage function 'after': module \S+exits\.mjs ended worker \d while it loaded \(exit code 7\): its top-level code calls process\.exit\(7\)\.$/,
    );
  });

  it('an await that never settles at load is exit 2 naming the module', { timeout: 15_000 }, async () => {
    const error = await openRejection(
      module('awaits.mjs', 'await new Promise(() => {});\nexport const run = () => 0;\n'),
    );
    assert.match(
      error.message,
      /module \S+awaits\.mjs ended worker \d while it loaded \(exit code 13\): its top-level code awaits something that never settles/,
    );
  });

  it('a loop at load passes the load deadline: the workers are ended and the module named', {
    timeout: 15_000,
  }, async () => {
    // 3 s, not 1 s: the workers must get past their own imports before the deadline, and with test files run at once
    // on a busy machine that took over 1 s ("the host stage's workers did not start within 1 s").
    const error = await openRejection(module('spins.mjs', 'while (true) {}\nexport const run = () => 0;\n'), 3000);
    assert.match(
      error.message,
      /^host stage function 'after': module \S+spins\.mjs did not load in worker \d within 3 s: its top-level code is still running/,
    );
  });

  it("a module's console output goes to stderr, never into the document on stdout", () => {
    const path = module(
      'chatty.mjs',
      'console.log("CHATTY-LOG"); console.info("CHATTY-INFO"); process.stdout.write("CHATTY-WRITE\\n");\nexport const run = () => 0;\n',
    );
    const run = runCli(
      ['run', '--json', '-', config('chatty.yaml', `{ module: ${path}, export: run }`)],
      {},
      { timeoutMs: 30_000 },
    );
    assert.equal(run.code, 3, run.stderr);
    assert.doesNotMatch(run.stdout, /CHATTY/);
    assert.match(run.stderr, /CHATTY-LOG\n/);
    assert.match(run.stderr, /CHATTY-WRITE\n/);
  });

  it('SIGTERM ends a run whose module spins at load, with 130', { timeout: 30_000 }, async () => {
    const path = module('spin-signal.mjs', 'console.error("SPINNING"); while (true) {}\nexport const run = () => 0;\n');
    const child = spawn(
      process.execPath,
      [...cliEntry(), 'run', config('spin.yaml', `{ module: ${path}, export: run }`)],
      {
        cwd: packageRoot(),
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NO_COLOR: '1' },
      },
    );
    let stderr = '';
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await new Promise<void>((spinning) =>
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('SPINNING')) spinning();
      }),
    );
    const sent = performance.now();
    child.kill('SIGTERM');
    const [code, signal] = await new Promise<[number | null, string | null]>((ended) =>
      child.on('exit', (c, s) => ended([c, s])),
    );
    clearTimeout(killer);
    assert.equal(signal, null, `killed: the process did not end on SIGTERM\n${stderr}`);
    assert.equal(code, 130, stderr);
    assert.ok(performance.now() - sent < 10_000, 'SIGTERM took more than 10 s to end the run');
    assert.match(stderr, /interrupted/i);
  });
});
