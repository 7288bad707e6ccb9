import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CommanderError } from 'commander';
import { exitCodeFor } from '../../src/cli/exit-code.js';
import { COMMAND_EXAMPLES, type CommandName, commandHelp } from '../../src/cli/help-text.js';
import { parseConfigText } from '../../src/config/load.js';
import { DeviceFailure, EXIT_CODES, UsageError } from '../../src/errors.js';
import { RepGuard } from '../../src/measure/guard.js';
import { runCli } from '../helpers/cli.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

function mapped(error: unknown, verbose = false): { code: number; text: string } {
  let text = '';
  const code = exitCodeFor(error, verbose, (chunk) => {
    text += chunk;
  });
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

  // The table moved from the README to docs/reference/cli.md (issue 26); the README names every code and links it.
  it("the reference's table lists every exit code, and the README names each and links the table", async () => {
    const { readFileSync } = await import('node:fs');
    const reference = readFileSync('docs/reference/cli.md', 'utf8');
    for (const [code] of EXIT_CODES) assert.match(reference, new RegExp(`^\\| ${code} \\| `, 'm'), `exit ${code}`);
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.split('## Exit codes\n')[1]?.split('\n## ')[0] ?? '';
    for (const [code] of EXIT_CODES) assert.match(section, new RegExp(`(^|[ (])${code} `, 'm'), `exit ${code}`);
    assert.ok(section.includes('](docs/reference/cli.md#exit-codes)'));
  });
});

describe('help', () => {
  it('the top level lists exit codes and environment variables', () => {
    const { code, stdout } = runCli(['--help']);
    assert.equal(code, 0);
    assert.match(stdout, /Exit codes:\n\s+0  success\n/);
    assert.match(stdout, /^\s+70  internal error/m);
    for (const variable of [
      'CUDA_PIPE_CUDART',
      'CUDA_PIPE_NVRTC',
      'CUDA_PATH, CUDA_HOME',
      'CUDA_PIPE_CACHE_DIR',
      'NO_COLOR',
    ]) {
      assert.match(stdout, new RegExp(`^  ${variable} `, 'm'), variable);
    }
  });

  it("every command has examples, and a command's --help shows them", () => {
    const listing = runCli(['--help']).stdout.split('Commands:')[1]?.split('Exit codes:')[0] ?? '';
    const commands = [...listing.matchAll(/^  (\w+) /gm)].map((m) => m[1]).filter((c) => c !== 'help');
    assert.ok(commands.length >= 7);
    for (const command of commands) {
      assert.ok(command && command in COMMAND_EXAMPLES, command);
      assert.match(commandHelp(command as CommandName), new RegExp(`Examples:\\n  \\$ cuda-pipe ${command}`), command);
    }
    const { code, stdout } = runCli(['kernels', '--help']);
    assert.equal(code, 0);
    assert.match(
      stdout,
      /Examples:\n  \$ cuda-pipe kernels [\s\S]*\n  \$ cuda-pipe kernels --check my_kernel\.cu --arch sm_90/,
    );
  });
});

describe('kernels --check on a given source', { skip: nvrtcSkipReason() ?? false }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-check-'));

  it('compiles a good source without a GPU', () => {
    const path = join(dir, 'good.cu');
    writeFileSync(
      path,
      'extern "C" __global__ void twice(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }\n',
    );
    const { code, stdout } = runCli(['kernels', '--check', path, '--arch', 'sm_80']);
    assert.equal(code, 0, stdout);
    assert.match(stdout, /twice\(float \*x, int n\)/);
    assert.match(stdout, /for sm_80 \(--arch\)/);
    assert.match(stdout, /1 of 1 sources compiled/);
  });

  it("exits 2 on a syntax error, with NVRTC's log naming file and line", () => {
    const path = join(dir, 'broken.cu');
    writeFileSync(path, 'extern "C" __global__ void broken(float *x) {\n  x[0] = undefined_name;\n}\n');
    const { code, stdout, stderr } = runCli(['kernels', '--check', path]);
    assert.equal(code, 2);
    assert.match(
      stderr,
      new RegExp(
        `^cuda-pipe: 1 of 1 kernel sources did not compile with NVRTC [\\d.]+ for sm_\\d+: ${path.replace(/[.]/g, '\\.')} ` +
          '\\(first error: \\S+\\(2\\): error: identifier "undefined_name" is undefined\\)\\.\\nNVRTC\'s log for each is above',
      ),
    );
    assert.match(
      stdout,
      new RegExp(
        `FAILED  ${path.replace(/[.]/g, '\\.')}:\\n\\s+${path.replace(/[.]/g, '\\.')}\\(2\\): error: identifier "undefined_name" is undefined`,
      ),
    );
    assert.match(stdout, /0 of 1 sources compiled/);
  });

  it('exits 2 for a source that is missing or a folder', () => {
    const missing = runCli(['kernels', '--check', join(dir, 'missing.cu')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /Cannot read kernel source \S+missing\.cu: no such file\./);
    assert.match(runCli(['kernels', '--check', dir]).stderr, /is a folder, not a file/);
  });
});

describe('flags whose value would be ignored or misread', () => {
  it('--timeout beyond what a timer can wait is refused, and the guard never asks a timer for more', () => {
    const { code, stderr } = runCli(['run', '--dry-run', '--timeout', '2147484']);
    assert.equal(code, 2);
    assert.match(
      stderr,
      /option '--timeout <seconds>' argument '2147484' is invalid\. expected at most 2147483 seconds/,
    );
    assert.equal(runCli(['run', '--dry-run', '--timeout', '2147483']).code, 0);
    assert.equal(new RepGuard({ timeoutMs: 1e12 }).deadlineMs('any'), 2 ** 31 - 1);
  });

  it('an empty or misspelt --arch is refused, not ignored, and --arch without --check is refused', () => {
    for (const args of [
      ['run', '--dry-run', '--arch', ''],
      ['kernels', '--check', '--arch', ''],
      ['kernels', '--check', '--arch', '90'],
    ]) {
      const { code, stderr } = runCli(args);
      assert.equal(code, 2, args.join(' '));
      assert.match(
        stderr,
        /option '--arch <sm_XX>' argument '.*' is invalid\. expected an architecture such as sm_90/,
        args.join(' '),
      );
    }
    const listing = runCli(['kernels', '--arch', 'sm_90']);
    assert.equal(listing.code, 2);
    assert.equal(listing.stderr, 'cuda-pipe: --arch only applies with --check: listing kernels compiles nothing.\n');
  });

  it('a legacy-default op on streams it cannot serialise is refused, naming the stream kind', () => {
    const config = (pipeline: string) => () =>
      parseConfigText(
        `buffers:\n  x: { type: float32, count: 64, role: inout }\n` +
          `kernels:\n  - { source: tiny.cu, entry: bump, args: [{ buffer: x }, { chunk: elements }] }\npipeline: ${pipeline}\n`,
        '/cfg/legacy.yaml',
      );
    assert.throws(
      config('{ chunks: 4, legacyDefaultOp: { chunk: 1 } }'),
      /^UsageError: \/cfg\/legacy\.yaml:\d+:\d+: an op on the legacy default stream serialises only blocking streams, and these are non-blocking \(the default\), so it would show nothing\.$/m,
    );
    assert.throws(
      config('{ chunks: 4, streamKind: per-thread-default, legacyDefaultOp: { chunk: 1 } }'),
      /and these are per-thread-default, so/,
    );
    assert.throws(
      config('{ chunks: 4, streamKind: blocking, topology: stage-per-stream, legacyDefaultOp: { chunk: 1 } }'),
      /only the chunk-per-stream topology has/,
    );
    assert.equal(
      config('{ chunks: 4, streamKind: blocking, legacyDefaultOp: { chunk: 1 } }')().config.pipeline.defaultStreamOps[0]
        ?.chunk,
      1,
    );
  });
});

describe('NVRTC options in a config', { skip: nvrtcSkipReason() ?? false }, () => {
  it('an option NVRTC does not know is a config error (exit 2), not a device failure (4)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-options-'));
    const path = join(dir, 'bad-option.yaml');
    writeFileSync(
      path,
      'buffers:\n  x: { type: float32, count: 64, role: inout }\n' +
        'kernels:\n  - { source: tiny.cu, entry: bump, options: [--no-such-option], args: [{ buffer: x }, { chunk: elements }] }\n',
    );
    const { code, stderr } = runCli(['run', '--dry-run', path], { CUDA_PIPE_CACHE_DIR: join(dir, 'cache') });
    assert.equal(code, 2);
    assert.match(
      stderr,
      /^cuda-pipe: NVRTC [\d.]+ refused the options for \S+tiny\.cu \(--no-such-option\): nvrtc: error: unrecognized option --no-such-option/,
    );
  });
});
