import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { runCli } from '../helpers/cli.js';

// Issue 38's inputs that were accepted and should not be, each refused with exit 2 saying what was wrong. (The merge
// of a rank twice is merge.test.ts's, ab's connections connections.test.ts's, `analyze X X` analyze-launch.test.ts's.)

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-accepted-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, content: string) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

describe('device values that no device has, quoting what was typed', () => {
  const cases: [string[], RegExp][] = [
    [
      ['--devices', '1e9'],
      /argument '1e9' is invalid\. expected a device index \(0 to 2147483647, in digits\).*got "1e9"\./,
    ],
    [
      ['--device', '2147483648'],
      /argument '2147483648' is invalid\. expected a device index, a whole number from 0 to 2147483647 in digits, got "2147483648"\./,
    ],
    [['--devices', '99999999999999999999'], /got "99999999999999999999"\./],
    [['--device', '0x1'], /got "0x1"\./],
  ];
  for (const [flags, message] of cases) {
    it(`run --dry-run ${flags.join(' ')}`, () => {
      const { code, stdout, stderr } = runCli(['run', '--dry-run', ...flags]);
      assert.equal(code, 2, stdout);
      assert.match(stderr, message);
      assert.doesNotMatch(stderr, /100000000000000000000/);
    });
  }

  it('a config naming a device past a C int', () => {
    const config = readFileSync(join(packageRoot(), 'configs', 'balanced.yaml'), 'utf8').replace(
      'source: ',
      `source: ${join(packageRoot(), 'kernels')}/`,
    );
    const { code, stderr } = runCli(['run', '--dry-run', write('device.yaml', `${config}\ndevice: 4294967296\n`)]);
    assert.equal(code, 2);
    assert.match(stderr, /device\.yaml:\d+:1: device: Too big: expected number to be <=2147483647/);
  });
});

describe('trace fields past what they can be', () => {
  const kernel = (args: Record<string, unknown>) => ({
    ph: 'X',
    cat: 'kernel',
    name: 'k',
    pid: 0,
    tid: 1,
    ts: 10,
    dur: 5,
    args: { stream: 7, ...args },
  });
  it('a Kineto args.device of 1e300 is refused as -3 is, not printed as GPU 1e+300', () => {
    const path = write('device.json', JSON.stringify({ schemaVersion: 1, traceEvents: [kernel({ device: 1e300 })] }));
    const { code, stdout, stderr } = runCli(['analyze', path]);
    assert.equal(code, 2, stdout);
    assert.match(
      stderr,
      /traceEvents\[0\] \(kernel "k"\) has device 1e\+300, not a device index \(a whole number from 0 to 2147483647\)/,
    );
    assert.doesNotMatch(stdout, /GPU 1e\+300/);
  });

  it('a run --trace copy of -1e300 bytes is refused, as the Kineto and Nsight readers refuse one', () => {
    const events = [
      { ph: 'M', name: 'thread_name', pid: 1, tid: 1, args: { name: 'stream s0' } },
      { ph: 'X', cat: 'h2d', name: 'H2D input chunk 0', pid: 1, tid: 1, ts: 0, dur: 10, args: { bytes: -1e300 } },
    ];
    const path = write('own.json', JSON.stringify({ traceEvents: events, otherData: { tool: 'cuda-pipe 0.1.0' } }));
    const { code, stderr } = runCli(['analyze', path]);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /traceEvents\[1\] \(h2d "H2D input chunk 0"\) has args\.bytes -1e\+300, not a count of bytes/);
  });
});

describe('a config or flags that ask for two things at once', () => {
  it('a kernels entry with gemm: and matmul: names the clash, not "did you mean matmul"', () => {
    const gemm = readFileSync(join(packageRoot(), 'configs', 'gemm.yaml'), 'utf8');
    const both = gemm.replace(
      /^( {4}gemm: \{[^\n]*\})$/m,
      '$1\n    matmul: { a: a, b: b, c: c, n: 4096, k: 4096, dtype: bf16 }',
    );
    assert.notEqual(both, gemm);
    const { code, stderr } = runCli(['run', '--dry-run', write('both.yaml', both)]);
    assert.equal(code, 2);
    assert.match(
      stderr,
      /unknown field "kernels\[0\]\.matmul"; "matmul" is a field of another form of this entry than its other fields: an entry takes one form/,
    );
    assert.doesNotMatch(stderr, /did you mean "matmul"/);
  });

  it('schema --analysis --result is refused, not one of them printed', () => {
    const { code, stdout, stderr } = runCli(['schema', '--analysis', '--result']);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, /--result and --analysis each print one JSON Schema; give one of them\./);
  });
});
