import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CommanderError } from 'commander';
import { exitCodeFor } from '../../src/cli/exit-code.js';
import { COMMAND_HELP } from '../../src/cli/help-text.js';
import { DeviceFailure, EXIT_CODES, UsageError } from '../../src/errors.js';
import { runCli } from '../helpers/cli.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

function mapped(error: unknown, verbose = false): { code: number; text: string } {
  let text = '';
  const code = exitCodeFor(error, verbose, (chunk) => { text += chunk; });
  return { code, text };
}

describe('exit codes', () => {
  it('an internal bug exits 70, apart from CUDA failures (4), with the whole stack', () => {
    const { code, text } = mapped(new TypeError('x is undefined'));
    assert.equal(code, 70);
    assert.match(text, /^cuda-pipe: internal error \(please report it\): TypeError: x is undefined\n\s+at /);
    assert.equal(mapped(new DeviceFailure('cudaMalloc failed')).code, 4);
  });

  it('a usage error exits 2 with its message and hint, and the stack only with --verbose', () => {
    const error = new UsageError('bad thing', { hint: 'do this' });
    assert.deepEqual(mapped(error), { code: 2, text: 'cuda-pipe: bad thing\ndo this\n' });
    assert.match(mapped(error, true).text, /\n\s+at /);
  });

  it('help and version end with 0, other commander errors with 2', () => {
    assert.equal(mapped(new CommanderError(0, 'commander.helpDisplayed', '')).code, 0);
    assert.equal(mapped(new CommanderError(1, 'commander.unknownOption', '')).code, 2);
  });

  it('the README\'s table lists every exit code', async () => {
    const { readFileSync } = await import('node:fs');
    const readme = readFileSync('README.md', 'utf8');
    for (const [code] of EXIT_CODES) assert.match(readme, new RegExp(`^\\| ${code} \\| `, 'm'), `exit ${code}`);
  });
});

describe('help', () => {
  it('the top level lists exit codes and environment variables', () => {
    const { code, stdout } = runCli(['--help']);
    assert.equal(code, 0);
    assert.match(stdout, /Exit codes:\n\s+0  success\n/);
    assert.match(stdout, /^\s+70  internal error/m);
    for (const variable of ['CUDA_PIPE_CUDART', 'CUDA_PIPE_NVRTC', 'CUDA_PATH, CUDA_HOME', 'CUDA_PIPE_CACHE_DIR', 'NO_COLOR']) {
      assert.match(stdout, new RegExp(`^  ${variable} `, 'm'), variable);
    }
  });

  it('every command has examples, and a command\'s --help shows them', () => {
    const listing = runCli(['--help']).stdout.split('Commands:')[1]?.split('Exit codes:')[0] ?? '';
    const commands = [...listing.matchAll(/^  (\w+) /gm)].map((m) => m[1]).filter((c) => c !== 'help');
    assert.ok(commands.length >= 7);
    for (const command of commands) assert.match(COMMAND_HELP[command as keyof typeof COMMAND_HELP] ?? '', new RegExp(`Examples:\\n  \\$ cuda-pipe ${command}`), command);
    const { code, stdout } = runCli(['kernels', '--help']);
    assert.equal(code, 0);
    assert.match(stdout, /Examples:\n  \$ cuda-pipe kernels [\s\S]*\n  \$ cuda-pipe kernels --check my_kernel\.cu --arch sm_90/);
  });
});

describe('kernels --check on a given source', { skip: nvrtcSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-check-'));

  it('compiles a good source without a GPU', () => {
    const path = join(dir, 'good.cu');
    writeFileSync(path, 'extern "C" __global__ void twice(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }\n');
    const { code, stdout } = runCli(['kernels', '--check', path, '--arch', 'sm_80']);
    assert.equal(code, 0, stdout);
    assert.match(stdout, /twice\(float \*x, int n\)/);
    assert.match(stdout, /for sm_80 \(--arch\)/);
    assert.match(stdout, /1 of 1 sources compiled/);
  });

  it('exits 2 on a syntax error, with NVRTC\'s log naming file and line', () => {
    const path = join(dir, 'broken.cu');
    writeFileSync(path, 'extern "C" __global__ void broken(float *x) {\n  x[0] = undefined_name;\n}\n');
    const { code, stdout } = runCli(['kernels', '--check', path]);
    assert.equal(code, 2);
    assert.match(stdout, new RegExp(`FAILED  ${path.replace(/[.]/g, '\\.')}:\\n\\s+${path.replace(/[.]/g, '\\.')}\\(2\\): error: identifier "undefined_name" is undefined`));
    assert.match(stdout, /0 of 1 sources compiled/);
  });

  it('exits 2 for a source that is missing or a folder', () => {
    const missing = runCli(['kernels', '--check', join(dir, 'missing.cu')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /Cannot read kernel source \S+missing\.cu: no such file\./);
    assert.match(runCli(['kernels', '--check', dir]).stderr, /is a folder, not a file/);
  });
});
