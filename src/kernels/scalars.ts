import type { ScalarType } from '../cuda/types.js';

// koffi converts a JS number to the parameter's C type the way C does: 1.5 becomes 1 and 2^40 becomes 0 in an
// int32, silently. Every scalar is checked here first, against the type the kernel declares.

type IntegerType = Exclude<ScalarType, 'float32' | 'float64'>;

const INTEGER_RANGES: Readonly<Record<IntegerType, readonly [bigint, bigint]>> = {
  int8: [-(2n ** 7n), 2n ** 7n - 1n],
  uint8: [0n, 2n ** 8n - 1n],
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  uint16: [0n, 2n ** 16n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/** The largest finite float32; anything that rounds beyond it becomes infinity. */
const FLOAT32_MAX = 3.4028234663852886e38;

const isIntegerType = (type: ScalarType): type is IntegerType => type in INTEGER_RANGES;
const is64Bit = (type: ScalarType): boolean => type === 'int64' || type === 'uint64';

/** What a type holds, for messages: "whole numbers from -2147483648 to 2147483647". */
export function describeScalarRange(type: ScalarType): string {
  if (isIntegerType(type)) {
    const [min, max] = INTEGER_RANGES[type];
    return `whole numbers from ${min} to ${max}`;
  }
  if (type === 'float32')
    return `finite numbers from -${FLOAT32_MAX} to ${FLOAT32_MAX}, and none so close to 0 that they round to 0`;
  return 'finite numbers';
}

/** Why `value` cannot be passed as `type` unchanged, or null when it can. */
export function scalarProblem(type: ScalarType, value: number | bigint): string | null {
  if (typeof value === 'bigint') {
    if (!isIntegerType(type)) return null;
    return inRange(type, value) ? null : `${value} is outside the range of ${type}`;
  }
  if (!Number.isFinite(value)) return `${value} is not a finite number`;
  if (type === 'float64') return null;
  if (type === 'float32') {
    const rounded = Math.fround(value);
    if (!Number.isFinite(rounded)) return `${value} is beyond the largest float32 and would become infinity`;
    if (rounded === 0 && value !== 0) return `${value} is too close to 0 for float32 and would become 0`;
    return null;
  }
  if (!Number.isInteger(value)) return `${value} is not a whole number`;
  if (!Number.isSafeInteger(value)) {
    return is64Bit(type)
      ? `${value} is beyond 2^53, where a YAML number has already lost digits`
      : `${value} is outside the range of ${type}`;
  }
  return inRange(type, BigInt(value)) ? null : `${value} is outside the range of ${type}`;
}

function inRange(type: IntegerType, value: bigint): boolean {
  const [min, max] = INTEGER_RANGES[type];
  return value >= min && value <= max;
}

/**
 * What to write instead, for a parameter of type `type` given `value` (possibly under another type): the same value
 * under the right key when it fits, else the nearest value that fits or the wider parameter type that would hold it.
 */
export function scalarHint(type: ScalarType, value: number | bigint): string {
  if (scalarProblem(type, value) === null) return `Write it as { ${type}: ${formatScalar(type, value)} }.`;
  if (typeof value === 'number' && !Number.isFinite(value)) return `Pass a finite number: { ${type}: 1 }, for example.`;
  if (isIntegerType(type)) {
    if (typeof value === 'number' && !Number.isSafeInteger(value) && Number.isInteger(value) && is64Bit(type)) {
      return `Write the exact digits as a string, which keeps all 64 bits: { ${type}: "${BigInt(value)}" } (check the digits).`;
    }
    if (typeof value === 'number' && !Number.isInteger(value)) {
      const whole = Math.round(value);
      const suggestion =
        scalarProblem(type, whole) === null ? `write a whole number such as { ${type}: ${whole} }, or ` : '';
      return `${type} takes ${describeScalarRange(type)}: ${suggestion}declare the kernel's parameter as float or double and pass { float32: ${value} } or { float64: ${value} }.`;
    }
    return `${type} takes ${describeScalarRange(type)}: pass a value in that range, or ${widerInteger(value)}`;
  }
  if (type === 'float32') {
    return `float32 takes ${describeScalarRange('float32')}: declare the kernel's parameter as double and pass { float64: ${value} }.`;
  }
  return `Pass a finite number: { ${type}: 1 }, for example.`;
}

function widerInteger(value: number | bigint): string {
  const big = BigInt(value);
  if (inRange('int64', big))
    return `declare the kernel's parameter as long long and pass { int64: ${formatScalar('int64', big)} }.`;
  if (inRange('uint64', big))
    return `declare the kernel's parameter as unsigned long long and pass { uint64: ${formatScalar('uint64', big)} }.`;
  return 'no integer parameter holds it: use a double and { float64: ... }.';
}

/** 64-bit values beyond 2^53 are shown as the quoted strings the config must use for them. */
function formatScalar(type: ScalarType, value: number | bigint): string {
  if (
    is64Bit(type) &&
    (typeof value === 'bigint'
      ? value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)
      : false)
  ) {
    return `"${value}"`;
  }
  return String(value);
}
