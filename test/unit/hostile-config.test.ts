import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sweepConfig } from '../../src/api/sweep.js';
import { loadConfigFile, parseConfigText } from '../../src/config/load.js';
import { withSettings } from '../../src/config/settings.js';
import { findExcessiveNesting } from '../../src/config/nesting.js';
import { UsageError } from '../../src/errors.js';
import { readKernelSource } from '../../src/kernels/catalog.js';
import { packageRoot } from '../../src/paths.js';
import { cliEntry, runCli } from '../helpers/cli.js';
import { cpuTimed } from '../helpers/cpu-time.js';
import { usageRejection } from '../helpers/rejection.js';

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-hostile-'));

const rejection = usageRejection;

const parse = (text: string) => () => parseConfigText(text, '/cfg/hostile.yaml');

// Bounds are loose because the test machine may be shared; what they catch is quadratic work, which at these sizes
// takes minutes of CPU.
function timed<T>(limitMs: number, work: () => T): T {
  const { value, ms } = cpuTimed(work);
  assert.ok(ms < limitMs, `took ${ms.toFixed(0)} ms of CPU, more than ${limitMs} ms`);
  return value;
}

function writeTemp(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('hostile YAML', () => {
  it('refuses deep flow nesting at its place, before the parser overflows its stack', () => {
    const error = timed(8000, () => rejection(parse('x: ' + '['.repeat(400_000) + ']'.repeat(400_000))));
    assert.match(error.message, /^\/cfg\/hostile\.yaml:1:\d+: the YAML nests more than 64 levels deep/);
  });

  it('refuses deep block nesting by indentation, by "- - -" and by "a: a: a:"', () => {
    const indented = Array.from({ length: 1000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n');
    assert.match(rejection(parse(indented)).message, /hostile\.yaml:64:\d+: the YAML nests more than 64 levels/);
    assert.match(timed(8000, () => rejection(parse('- '.repeat(300_000) + '1'))).message, /nests more than 64 levels/);
    assert.match(timed(8000, () => rejection(parse('a: '.repeat(300_000) + '1'))).message, /nests more than 64 levels/);
  });

  it('ignores brackets and colons inside quoted strings, comments and block scalars', () => {
    const text = `description: |\n  ${'[{'.repeat(100)}\n  ${'a: '.repeat(100)}\nname: "${'['.repeat(100)}" # ${'['.repeat(100)}\n`;
    assert.equal(findExcessiveNesting(text), null);
  });

  it('refuses "billion laughs" alias expansion', () => {
    const levels = 'abcdefghi'.split('');
    const text =
      `a: &a ["x","x","x","x","x","x","x","x","x"]\n` +
      levels
        .slice(1)
        .map((name, i) => `${name}: &${name} [${Array(9).fill(`*${levels[i]}`).join(',')}]`)
        .join('\n') +
      '\n';
    const error = timed(8000, () => rejection(parse(text)));
    assert.match(error.message, /the YAML expands to more than 1000000 values with its aliases \(\*name\) expanded/);
    assert.match(error.hint ?? '', /fewer aliases/);
  });

  it('says an empty file, or one with only comments, is empty', () => {
    assert.match(rejection(parse('')).message, /^\/cfg\/hostile\.yaml: the config file is empty\./);
    assert.match(rejection(parse('# just a comment\n\n')).message, /the config file is empty/);
    assert.match(rejection(parse('~\n')).message, /the config file is empty/);
  });

  it('names a key given twice in one map', () => {
    assert.match(
      rejection(parse('buffers: {}\nkernels: []\nbuffers: {}\n')).message,
      /hostile\.yaml:3:1: YAML syntax error: the key "buffers" appears twice/,
    );
  });

  it("checks 100 000 keys in about linear time (the parser's own duplicate check takes a minute)", () => {
    const text = 'buffers:\n' + Array.from({ length: 100_000 }, (_, i) => `  b${i}: 1`).join('\n') + '\nkernels: []\n';
    const error = timed(15_000, () => rejection(parse(text)));
    assert.match(error.message, /buffers\.b0: Invalid input: expected object, received number/);
  });

  it('lists a few of many unknown fields rather than all of them', () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `k${i}: 1`).join('\n');
    const error = timed(15_000, () => rejection(parse(text)));
    assert.match(error.message, /unknown field "k4"\n\(and 19995 more unknown fields\)/);
  });
});

describe('config and kernel files that are not regular files', () => {
  it('refuses a device such as /dev/zero without reading it', () => {
    assert.match(
      rejection(() => loadConfigFile('/dev/zero')).message,
      /^Cannot read config \/dev\/zero: is a device, not a regular file\./,
    );
    assert.match(
      rejection(() => readKernelSource('/dev/zero')).message,
      /^Cannot read kernel source \/dev\/zero: is a device/,
    );
  });

  it('refuses a FIFO without waiting for a writer', () => {
    const fifo = join(dir, 'pipe.yaml');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    // Waiting for a writer costs no CPU, so this bound is on the clock.
    const started = performance.now();
    assert.match(rejection(() => loadConfigFile(fifo)).message, /is a named pipe \(FIFO\), not a regular file/);
    assert.ok(performance.now() - started < 8000, 'waited for a writer');
    assert.match(rejection(() => readKernelSource(fifo)).message, /kernel source .*is a named pipe/);
  });

  it('says a folder is a folder', () => {
    const folder = join(dir, 'folder.yaml');
    mkdirSync(folder);
    assert.match(rejection(() => loadConfigFile(folder)).message, /folder\.yaml: is a folder, not a file\./);
  });

  it('refuses a config above 1 MiB and a kernel source above 4 MiB', () => {
    const config = writeTemp('big.yaml', '#'.repeat(1024 * 1024 + 1));
    assert.match(
      rejection(() => loadConfigFile(config)).message,
      /it is 1048577 bytes, more than the 1 MiB a config may be/,
    );
    const kernel = writeTemp('big.cu', '/'.repeat(4 * 1024 * 1024 + 1));
    assert.match(rejection(() => readKernelSource(kernel)).message, /more than the 4 MiB a kernel source may be/);
  });

  it('names a kernel source that is a folder, from a config', () => {
    mkdirSync(join(dir, 'kernel-folder.cu'));
    const config = writeTemp(
      'folder-kernel.yaml',
      `buffers:\n  x: { type: float32, count: 16, role: inout }\nkernels:\n  - { source: kernel-folder.cu, entry: k, args: [{ buffer: x }] }\npipeline: { chunks: 2 }\n`,
    );
    const { code, stderr } = runCli(['run', '--dry-run', config], {}, { timeoutMs: 20_000 });
    assert.equal(code, 2);
    assert.match(stderr, /^cuda-pipe: Cannot read kernel source \S+kernel-folder\.cu: is a folder, not a file\./);
  });

  it('the CLI exits 2 for a FIFO config and does not hang', () => {
    const fifo = join(dir, 'cli-pipe.yaml');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const { code, stderr } = runCli(['run', '--dry-run', fifo], {}, { timeoutMs: 20_000, process: true });
    assert.equal(code, 2);
    assert.match(stderr, /is a named pipe \(FIFO\)/);
    assert.doesNotMatch(stderr, /\n\s+at /);
  });
});

describe('config files the user cannot read', () => {
  // CI and the GPU hosts run as root, which reads every file, so as root the CLI is run as nobody through setpriv
  // (util-linux); only where setpriv is missing does the test skip, saying so.
  const root = process.getuid?.() === 0;
  const setpriv = root ? spawnSync('setpriv', ['--version']).status === 0 : false;
  it('says "permission denied" rather than EACCES', {
    skip: root && !setpriv ? 'running as root, and setpriv (util-linux) is missing to drop privileges' : false,
  }, () => {
    const locked = mkdtempSync(join(tmpdir(), 'cuda-pipe-locked-'));
    chmodSync(locked, 0o711);
    const path = join(locked, 'locked.yaml');
    writeFileSync(path, 'name: x\n');
    chmodSync(path, 0o000);
    if (!root) {
      assert.match(rejection(() => loadConfigFile(path)).message, /locked\.yaml: permission denied\./);
      return;
    }
    const nobody = ['--reuid=65534', '--regid=65534', '--clear-groups'];
    const run = spawnSync('setpriv', [...nobody, process.execPath, ...cliEntry(), 'run', '--dry-run', path], {
      cwd: packageRoot(),
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', HOME: locked },
      timeout: 60_000,
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /locked\.yaml: permission denied\./);
    assert.doesNotMatch(run.stderr, /EACCES/);
  });
});

describe('kernel sources that are not text', () => {
  it('refuses a NUL byte, which NVRTC would take for the end of the source', () => {
    const path = writeTemp(
      'nul.cu',
      'extern "C" __global__ void k(float *x) {}\n\0extern "C" __global__ void j(float *x) {}\n',
    );
    assert.match(
      rejection(() => readKernelSource(path)).message,
      /^Cannot read kernel source \S+nul\.cu: it holds a NUL byte at line 2, so it is not CUDA source text\.$/,
    );
  });
});

describe('config paths of --set and sweep.set', () => {
  const loaded = parseConfigText(
    `buffers:
  x: { type: float32, count: 1024, role: in }
  y: { type: float32, count: 1024, role: out }
kernels:
  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }
`,
    '/cfg/paths.yaml',
  );

  it("refuses any path outside the schema's fields, before it reaches Object.prototype", () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    for (const path of [
      '__proto__.x',
      'constructor',
      'constructor.prototype.x',
      'hasOwnProperty',
      'toString',
      'valueOf',
      'pipeline.__proto__.chunks',
      'buffers.__proto__.size',
      'buffers.constructor.count',
      'buffers.toString',
      'buffers.x.valueOf',
      'kernels[0].args[3].toString',
      'sweep.set.__proto__',
    ]) {
      const error = rejection(() => withSettings(loaded, [{ path, value: 1 }]));
      assert.match(
        error.message,
        new RegExp(
          `^sweep setting ${path.replace(/[.[\]]/g, '\\$&')}=1: "${path.replace(/[.[\]]/g, '\\$&')}" is not a config path: .* has no field "`,
        ),
        path,
      );
    }
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), before);
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });

  it('names the fields there are where a path goes wrong', () => {
    const error = rejection(() => withSettings(loaded, [{ path: 'pipeline.chunk', value: 4 }]));
    assert.match(error.message, /"pipeline\.chunk" is not a config path: pipeline has no field "chunk"/);
    assert.match(error.hint ?? '', /Fields of pipeline: chunks, streams, order/);
    assert.match(
      rejection(() => withSettings(loaded, [{ path: 'kernels.block', value: 4 }])).hint ?? '',
      /kernels is a list: write kernels\[0\]/,
    );
    assert.match(
      rejection(() => withSettings(loaded, [{ path: 'pipeline[0]', value: 4 }])).message,
      /pipeline is not a list/,
    );
  });

  it('still sets fields of the schema, in maps the user names and in lists', () => {
    assert.equal(
      withSettings(loaded, [
        { path: 'buffers.x.count', value: 2048 },
        { path: 'buffers.y.count', value: 2048 },
      ]).config.elements,
      2048,
    );
    assert.equal(withSettings(loaded, [{ path: 'kernels[0].block', value: 128 }]).config.kernels[0]?.block, 128);
    assert.equal(withSettings(loaded, [{ path: 'repetitions.maxTime', value: 1 }]).config.repetitions.maxTime, 1);
  });

  it('a sweep checks every value of every axis before it measures anything', async () => {
    const axes = {
      streams: [2],
      chunks: [4],
      orders: ['depth-first' as const],
      sets: [{ path: 'kernels[0].args[3].float32', values: [2, 1e39] }],
    };
    // Without the check up front, the first setting would reach the GPU first (exit 3 here, minutes on a GPU).
    await assert.rejects(
      sweepConfig(loaded, axes, { verify: true, gate: false, wait: 'poll', budgetMs: 1000, exhaustive: false }),
      (error: unknown) => {
        assert.ok(error instanceof UsageError, String(error));
        assert.match(
          error.message,
          /sweep setting kernels\[0\]\.args\[3\]\.float32=1e\+39: kernel "scale" .* is float32, which takes finite numbers/,
        );
        return true;
      },
    );
    const badPath = {
      ...axes,
      sets: [
        { path: 'pipeline.chunks', values: [4] },
        { path: 'constructor', values: [1] },
      ],
    };
    await assert.rejects(
      sweepConfig(loaded, badPath, { verify: true, gate: false, wait: 'poll', budgetMs: 1000, exhaustive: false }),
      UsageError,
    );
  });

  it('the CLI exits 2 with one paragraph for --set __proto__.x', () => {
    const { code, stderr } = runCli(['sweep', '--set', '__proto__.polluted=1', '--streams', '1', '--chunks', '2']);
    assert.equal(code, 2);
    assert.match(
      stderr,
      /^cuda-pipe: sweep setting __proto__\.polluted=1: "__proto__\.polluted" is not a config path: the config has no field "__proto__"\.\n/,
    );
    assert.doesNotMatch(stderr, /internal error|\n\s+at /);
  });
});
