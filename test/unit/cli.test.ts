import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';

const noGpu = gpuSkipReason() !== null;

describe('the cuda-pipe command line', () => {
  it('prints the package version', () => {
    const { code, stdout } = runCli(['--version']);
    assert.equal(code, 0);
    assert.equal(stdout.trim(), JSON.parse(readFileSync('package.json', 'utf8')).version);
  });

  it('lists every command with one line each, and no other', () => {
    const { code, stdout } = runCli(['--help']);
    assert.equal(code, 0);
    const section = stdout.slice(stdout.indexOf('Commands:')).split('\n\n')[0] ?? '';
    const commands = [...section.matchAll(/^  (\w+) /gm)].map((m) => m[1]);
    assert.deepEqual(commands, [
      'run',
      'sweep',
      'probe',
      'kernels',
      'schema',
      'report',
      'timeline',
      'compare',
      'ab',
      'merge',
      'analyze',
      'overhead',
      'help',
    ]);
  });

  it('blames a bad flag value on the flag, not on the config line it overrides', () => {
    const { code, stderr } = runCli(['run', '--dry-run', '--chunks', '999999999']);
    assert.equal(code, 2);
    assert.match(
      stderr,
      /^cuda-pipe: --chunks 999999999: 999999999 chunks is more than the buffers' 67108864 elements\./,
    );
    assert.doesNotMatch(stderr, /balanced\.yaml/);
  });

  it('rejects a malformed number for any numeric flag through one parser', () => {
    for (const [flag, value] of [
      ['--chunks', '1.5'],
      ['--warmup', '-1'],
      ['--max-noise', '0'],
      ['--reps', 'x'],
    ]) {
      const { code, stderr } = runCli(['run', '--dry-run', flag as string, value as string]);
      assert.equal(code, 2, `${flag} ${value}`);
      assert.match(
        stderr,
        new RegExp(
          `option '${flag} <[^>]+>' argument '${value}' is invalid\\. expected (a whole number|a number) (≥|above) \\d`,
        ),
        stderr,
      );
    }
  });

  it('schema --result prints the JSON Schema of the Result, version 2', () => {
    const { code, stdout } = runCli(['schema', '--result']);
    assert.equal(code, 0);
    const schema = JSON.parse(stdout);
    assert.match(schema.title, /version 2/);
    assert.deepEqual(schema.properties.version, { type: 'number', const: 2 });
    for (const key of ['run', 'devices', 'modes', 'summary', 'timeline']) assert.ok(key in schema.properties, key);
  });

  it('exits 2 on an unknown flag, naming it', () => {
    const { code, stderr } = runCli(['run', '--chunkz', '4']);
    assert.equal(code, 2);
    assert.match(stderr, /unknown option '--chunkz'/);
  });

  it('probe exits 3 with one clear paragraph and no stack trace where there is no GPU', {
    skip: noGpu ? false : 'a GPU is present',
  }, () => {
    const { code, stdout, stderr } = runCli(['probe']);
    assert.equal(code, 3);
    assert.equal(stdout, '');
    assert.match(stderr, /^cuda-pipe: No CUDA (driver|device)/);
    assert.doesNotMatch(stderr, /\n\s+at /);
    assert.ok(stderr.trim().split('\n').length <= 3, stderr);
  });

  it('shows the stack only with --verbose', { skip: noGpu ? false : 'a GPU is present' }, () => {
    assert.match(runCli(['--verbose', 'probe']).stderr, /\n\s+at /);
  });

  it('run --dry-run prints the built-in balanced plan without a GPU', () => {
    const { code, stdout } = runCli(['run', '--dry-run', '--chunks', '8', '--ops']);
    assert.equal(code, 0);
    assert.match(stdout, /Plan for balanced/);
    assert.match(stdout, /layout: 8 chunks of 8388608 elements, 4 streams, depth-first/);
    assert.match(stdout, /mode bidirectional: H2D and D2H at once/);
    assert.match(stdout, /s1 +kernel fma \(fma_loop\), chunk 1 of 8 \(elements 8388608 to 16777215\)/);
  });

  it('run exits 2 naming file, line and column of a bad config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-cli-'));
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, 'buffers:\n  x: { type: float32, count: 10, role: in, colour: red }\nkernels: []\n');
    const { code, stderr } = runCli(['run', path, '--dry-run']);
    assert.equal(code, 2);
    assert.match(stderr, new RegExp(`${path.replace(/[.]/g, '\\.')}:2:\\d+: unknown field "buffers\\.x\\.colour"`));
    assert.doesNotMatch(stderr, /\n\s+at /);
  });

  it('run exits 2 for a missing config file', () => {
    const { code, stderr } = runCli(['run', '/no/such/config.yaml']);
    assert.equal(code, 2);
    assert.match(stderr, /Cannot read config \/no\/such\/config\.yaml: no such file\./);
  });

  it('schema prints a JSON Schema that describes buffers, kernels and the pipeline', () => {
    const { code, stdout } = runCli(['schema']);
    assert.equal(code, 0);
    const schema = JSON.parse(stdout);
    assert.equal(schema.type, 'object');
    assert.deepEqual(
      Object.keys(schema.properties)
        .filter((k) => ['buffers', 'kernels', 'pipeline', 'repetitions'].includes(k))
        .sort(),
      ['buffers', 'kernels', 'pipeline', 'repetitions'],
    );
    assert.equal(schema.additionalProperties, false);
  });

  it('every built-in config plans without a GPU', () => {
    for (const name of ['balanced', 'compute-bound', 'copy-bound', 'async-overlap', 'multi-kernel']) {
      const { code, stderr } = runCli(['run', join('configs', `${name}.yaml`), '--dry-run']);
      assert.equal(code, 0, `${name}: ${stderr}`);
    }
  });

  it('kernels --check compiles every shipped kernel with the real NVRTC', { skip: nvrtcSkipReason() ?? false }, () => {
    const { code, stdout } = runCli(['kernels', '--check']);
    assert.equal(code, 0, stdout);
    assert.match(stdout, /fma_loop\(const float\* __restrict__ in/);
    assert.match(stdout, /(\d+) of \1 sources compiled/);
  });
});
