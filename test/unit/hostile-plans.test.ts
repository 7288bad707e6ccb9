import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkSweepSize } from '../../src/cli/sweep.js';
import { parseConfigText } from '../../src/config/load.js';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';
import { usageRejection } from '../helpers/rejection.js';

// Plans that would read or write out of bounds on a GPU, store values their type cannot hold, or mean nothing: each
// is refused on the CPU with exit 2, naming the field, before anything is opened.

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-hostile-plans-'));

const rejection = usageRejection;

const parse = (text: string) => () => parseConfigText(text, '/cfg/plan.yaml');

describe('buffer init values outside their element type', () => {
  const buffer = (type: string, init: string) =>
    `buffers:\n  x: { type: ${type}, count: 1024, role: inout, init: ${init} }\nkernels:\n  - { source: tiny.cu, entry: bump, args: [{ buffer: x }, { chunk: elements }] }\n`;

  it('refuses uint8 300, uint8 1.5 and float32 1e39, naming the field', () => {
    const cases = [
      [
        'uint8',
        '{ kind: constant, value: 300 }',
        /^\/cfg\/plan\.yaml:2:\d+: buffer "x" holds uint8: init value 300 is outside uint8's range, 0 to 255\.$/,
      ],
      [
        'uint8',
        '{ kind: constant, value: 1.5 }',
        /holds uint8: init value 1\.5 is not a whole number, which uint8 holds\.$/,
      ],
      [
        'float32',
        '{ kind: constant, value: 1e39 }',
        /holds float32: init value 1e\+39 is beyond the largest float32, 3\.4028234663852886e\+38, and would become infinity\.$/,
      ],
      [
        'float16',
        '{ kind: ramp, start: 0, step: 100 }',
        /init step the ramp's last element, 0 \+ 1023 × 100: 102300 is beyond the largest float16, 65504/,
      ],
      ['int32', '{ kind: ramp, start: 0, step: 0.5 }', /holds int32: init step 0\.5 is not a whole number/],
    ] as const;
    for (const [type, init, message] of cases)
      assert.match(rejection(parse(buffer(type, init))).message, message, `${type} ${init}`);
  });

  it('still takes values that fit, and a whole-number ramp that wraps an integer type', () => {
    for (const [type, init] of [
      ['uint8', '{ kind: constant, value: 255 }'],
      ['float32', '{ kind: constant, value: -3.4e38 }'],
      ['uint8', '{ kind: ramp, start: 0, step: 1 }'],
      ['float16', '{ kind: ramp, start: 0, step: 1 }'],
    ] as const) {
      assert.equal(parseConfigText(buffer(type, init), '/cfg/plan.yaml').config.buffers[0]?.type, type);
    }
  });
});

describe('plans that mean nothing', () => {
  it('refuses a loader with no in buffer to fill', () => {
    const text =
      'buffers:\n  x: { type: float32, count: 1024, role: scratch }\n  y: { type: float32, count: 1024, role: out }\n' +
      'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n' +
      'host: { before: { decode: { msPerMiB: 1 } } }\n';
    const error = rejection(parse(text));
    assert.match(
      error.message,
      /^\/cfg\/plan\.yaml:\d+:\d+: a loader \(before\) fills each chunk of the in and inout buffers before its H2D, and this config has none\.$/,
    );
  });

  it('run --devices 1,1 is refused as a config listing a device twice is', () => {
    const run = runCli(['run', '--dry-run', '--devices', '1,1'], {}, { timeoutMs: 20_000 });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /device 1 is listed twice in "1,1"; list each device once/);
  });
});

describe('sweeps whose lists grow without bound', () => {
  const axes = { streams: [1], chunks: [4], orders: ['depth-first' as const], sets: [] };

  it('refuses a --set list of 8,000 values and --chunks of 2,000 before checking any setting', () => {
    const started = performance.now();
    const values = Array.from({ length: 8000 }, (_, i) => i + 1);
    assert.match(
      rejection(() => checkSweepSize({ ...axes, sets: [{ path: 'pipeline.chunks', values }] })).message,
      /^--set pipeline\.chunks lists 8000 values; a sweep axis lists at most 64\.$/,
    );
    assert.match(
      rejection(() => checkSweepSize({ ...axes, chunks: Array.from({ length: 2000 }, (_, i) => i + 1) })).message,
      /^--chunks lists 2000 values/,
    );
    const square = Array.from({ length: 20 }, (_, i) => i + 1);
    assert.match(
      rejection(() =>
        checkSweepSize({
          ...axes,
          sets: [
            { path: 'pipeline.chunks', values: square },
            { path: 'pipeline.streams', values: square },
          ],
        }),
      ).message,
      /the --set lists make 400 settings \(20 × 20\); a sweep measures at most 256/,
    );
    assert.ok(performance.now() - started < 1000);
  });

  it('the CLI exits 2 at once for sweep --chunks 1..2000, and a config whose sweep lists 100 values', () => {
    const chunks = Array.from({ length: 2000 }, (_, i) => i + 1).join(',');
    const run = runCli(['sweep', '--chunks', chunks, '--streams', '1'], {}, { timeoutMs: 20_000 });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /--chunks lists 2000 values; a sweep axis lists at most 64/);
    const config = join(dir, 'sweep.yaml');
    const balanced = readFileSync(join(packageRoot(), 'configs', 'balanced.yaml'), 'utf8').replace(
      /\nsweep:[\s\S]*$/,
      '\n',
    );
    writeFileSync(
      config,
      `${balanced.replace('source: scale.cu', `source: ${join(packageRoot(), 'kernels', 'scale.cu')}`)}sweep:\n  streams: [${Array.from({ length: 100 }, (_, i) => i + 1).join(', ')}]\n`,
    );
    const fromConfig = runCli(['sweep', config], {}, { timeoutMs: 20_000 });
    assert.equal(fromConfig.code, 2, fromConfig.stderr);
    assert.match(fromConfig.stderr, /sweep\.streams.*a sweep axis lists at most 64 values/);
  });
});

describe('ab outputs', () => {
  it('refuses --json x --md x and two documents to stdout before the GPU check', () => {
    const balanced = join(packageRoot(), 'configs', 'balanced.yaml');
    const same = join(dir, 'ab.out');
    const clash = runCli(['ab', balanced, balanced, '--json', same, '--md', same], {}, { timeoutMs: 20_000 });
    assert.equal(clash.code, 2, clash.stderr);
    assert.match(clash.stderr, /--json and --md both name \S+ab\.out: the second document would replace the first/);
    const stdout = runCli(['ab', balanced, balanced, '--json', '-', '--md', '-'], {}, { timeoutMs: 20_000 });
    assert.equal(stdout.code, 2, stdout.stderr);
    assert.match(stdout.stderr, /Only one document can go to stdout \(-\); --json and --md ask to/);
  });
});
