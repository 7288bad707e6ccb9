import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { UsageError } from '../../src/errors.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { describeScalarRange, scalarHint, scalarProblem } from '../../src/kernels/scalars.js';

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-scalars-'));
const PARAM_TYPES: Record<string, string> = {
  int8: 'signed char',
  uint8: 'unsigned char',
  int16: 'short',
  uint16: 'unsigned short',
  int32: 'int',
  uint32: 'unsigned int',
  int64: 'long long',
  uint64: 'unsigned long long',
  float32: 'float',
  float64: 'double',
};
for (const [type, spelling] of Object.entries(PARAM_TYPES)) {
  writeFileSync(join(dir, `${type}.cu`), `extern "C" __global__ void k(float *x, ${spelling} v) {}\n`);
}

/** Resolves a one-kernel config whose second argument is `arg`, against a kernel whose parameter is `paramType`. */
function resolveWith(paramType: string, arg: string) {
  const text =
    `buffers:\n  x: { type: float32, count: 100, role: inout }\n` +
    `kernels:\n  - source: ${paramType}.cu\n    entry: k\n    args: [{ buffer: x }, ${arg}]\npipeline: { chunks: 2 }\n`;
  const { config, locate } = parseConfigText(text, join(dir, 'cfg.yaml'));
  return resolveKernels(config, locate);
}

function rejection(paramType: string, arg: string): UsageError {
  try {
    resolveWith(paramType, arg);
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
    return error;
  }
  assert.fail(`expected ${arg} to be rejected for a ${paramType} parameter`);
}

describe("scalar kernel arguments are checked against the parameter's type", () => {
  it('refuses a fraction for an int, naming file:line:col, argument and range, with a whole-number hint', () => {
    const error = rejection('int32', '{ int32: 1.5 }');
    assert.match(
      error.message,
      /cfg\.yaml:6:\d+: kernel "k" \(k\(float \*x, int v\)\), argument 2 \(int v\) is int32, which takes whole numbers from -2147483648 to 2147483647; 1\.5 is not a whole number\./,
    );
    assert.match(error.hint ?? '', /\{ int32: 2 \}/);
    assert.match(error.hint ?? '', /declare the kernel's parameter as float or double/);
  });

  it('refuses 2^40 for an int instead of passing 0, and suggests a 64-bit parameter', () => {
    const error = rejection('int32', '{ int32: 1099511627776 }');
    assert.match(error.message, /1099511627776 is outside the range of int32/);
    assert.match(error.hint ?? '', /long long and pass \{ int64: 1099511627776 \}/);
  });

  it('checks the range of every integer width, at both ends', () => {
    const limits: Array<[string, string, string]> = [
      ['int8', '-128', '127'],
      ['uint8', '0', '255'],
      ['int16', '-32768', '32767'],
      ['uint16', '0', '65535'],
      ['int32', '-2147483648', '2147483647'],
      ['uint32', '0', '4294967295'],
    ];
    for (const [type, min, max] of limits) {
      assert.doesNotThrow(() => resolveWith(type, `{ ${type}: ${min} }`), `${type} ${min}`);
      assert.doesNotThrow(() => resolveWith(type, `{ ${type}: ${max} }`), `${type} ${max}`);
      assert.match(
        rejection(type, `{ ${type}: ${BigInt(max) + 1n} }`).message,
        new RegExp(`outside the range of ${type}`),
      );
      assert.match(rejection(type, `{ ${type}: ${BigInt(min) - 1n} }`).message, new RegExp(`from ${min} to ${max}`));
    }
  });

  it('takes 64-bit values as strings, to the last digit, and checks their range', () => {
    const [kernel] = resolveWith('uint64', '{ uint64: "18446744073709551615" }');
    assert.deepEqual(kernel?.args[1], { kind: 'scalar', type: 'uint64', value: 18446744073709551615n });
    assert.doesNotThrow(() => resolveWith('int64', '{ int64: "-9223372036854775808" }'));
    assert.match(
      rejection('int64', '{ int64: "9223372036854775808" }').message,
      /9223372036854775808 is outside the range of int64/,
    );
    assert.match(
      rejection('uint64', '{ uint64: "-1" }').message,
      /whole numbers from 0 to 18446744073709551615; -1 is outside/,
    );
  });

  it('refuses a 64-bit YAML number beyond 2^53, whose digits are already lost, and says to quote it', () => {
    const error = rejection('int64', '{ int64: 9007199254740993 }');
    assert.match(error.message, /is beyond 2\^53, where a YAML number has already lost digits/);
    assert.match(error.hint ?? '', /as a string.*\{ int64: "9007199254740992" \}/);
  });

  it('refuses float32 values that would become infinity or 0, and suggests a double', () => {
    assert.match(
      rejection('float32', '{ float32: 1e39 }').message,
      /1e\+39 is beyond the largest float32 and would become infinity/,
    );
    assert.match(rejection('float32', '{ float32: 1e-50 }').message, /too close to 0 for float32/);
    assert.match(rejection('float32', '{ float32: 1e39 }').hint ?? '', /as double and pass \{ float64: 1e\+39 \}/);
    assert.doesNotThrow(() => resolveWith('float32', '{ float32: 3.4028234663852886e38 }'));
    assert.doesNotThrow(() => resolveWith('float64', '{ float64: 1e300 }'));
  });

  it('refuses infinities and NaN in the config, naming the field', () => {
    assert.throws(
      () => resolveWith('float64', '{ float64: .inf }'),
      /args\[1\]: float64 needs a finite number, got Infinity/,
    );
    assert.throws(
      () => resolveWith('float32', '{ float32: .nan }'),
      /args\[1\]: float32 needs a finite number, got NaN/,
    );
  });

  it('hints a whole number, not the fraction, when a float is given for an int parameter', () => {
    const error = rejection('int32', '{ float32: 1.5 }');
    assert.match(error.message, /is int32, but the config gives a float32/);
    assert.doesNotMatch(error.hint ?? '', /\{ int32: 1\.5 \}/);
    assert.match(error.hint ?? '', /\{ int32: 2 \}/);
  });

  it('hints the same value under the right type when it fits', () => {
    assert.equal(rejection('float32', '{ int32: 3 }').hint, 'Write it as { float32: 3 }.');
  });
});

describe('scalar ranges as pure functions', () => {
  it("describes each type's range in words", () => {
    assert.equal(describeScalarRange('uint8'), 'whole numbers from 0 to 255');
    assert.match(
      describeScalarRange('float32'),
      /^finite numbers from -3\.4028234663852886e\+38 to 3\.4028234663852886e\+38/,
    );
  });

  it('accepts in-range values and explains the rest', () => {
    assert.equal(scalarProblem('int8', -128), null);
    assert.equal(scalarProblem('uint64', 2n ** 64n - 1n), null);
    assert.equal(scalarProblem('int32', Number.NaN), 'NaN is not a finite number');
    assert.equal(scalarProblem('uint32', -1), '-1 is outside the range of uint32');
    assert.match(scalarHint('int32', 2n ** 70n), /no integer parameter holds it/);
  });
});
