import type { ElementType } from '../vocabulary.js';
import type { InitSpec } from './types.js';

// A buffer's `init` is written as its element type, through a typed array or a 16-bit encoder: 300 in a uint8
// becomes 44, 1.5 becomes 1 and 1e39 in a float32 becomes +Infinity, silently. Kernel arguments already refuse
// the same values (src/kernels/scalars.ts); these are their element types' ranges.

const INTEGER_RANGE: Partial<Record<ElementType, readonly [number, number]>> = {
  uint8: [0, 255],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
};

/** The largest finite value of each floating type. */
const FLOAT_MAX: Partial<Record<ElementType, number>> = {
  float16: 65504,
  bfloat16: 3.3895313892515355e38,
  float32: 3.4028234663852886e38,
  float64: Number.MAX_VALUE,
};

/** Why `value` cannot be stored as `type` unchanged, or null when it can. */
export function elementProblem(type: ElementType, value: number): string | null {
  if (!Number.isFinite(value)) return `${value} is not a finite number`;
  const range = INTEGER_RANGE[type];
  if (range) {
    if (!Number.isInteger(value)) return `${value} is not a whole number, which ${type} holds`;
    return value < range[0] || value > range[1]
      ? `${value} is outside ${type}'s range, ${range[0]} to ${range[1]}`
      : null;
  }
  const max = FLOAT_MAX[type] ?? Number.MAX_VALUE;
  return Math.abs(value) > max ? `${value} is beyond the largest ${type}, ${max}, and would become infinity` : null;
}

/**
 * The first field of `init` whose value the buffer's element type cannot hold, and why. A ramp of whole numbers may
 * wrap around an integer type (a uint8 ramp repeats 0 to 255, on purpose), so only its start and step are checked
 * there; a float ramp must stay finite to its last element.
 */
export function initProblem(
  type: ElementType,
  init: InitSpec,
  elements: number,
): { field: string; problem: string } | null {
  if (init.kind === 'random') return null;
  if (init.kind === 'constant') {
    const problem = elementProblem(type, init.value);
    return problem ? { field: 'value', problem } : null;
  }
  const integer = INTEGER_RANGE[type] !== undefined;
  for (const field of ['start', 'step'] as const) {
    const value = init[field];
    const problem =
      integer && field === 'step'
        ? Number.isInteger(value)
          ? null
          : `${value} is not a whole number, which ${type} holds`
        : elementProblem(type, value);
    if (problem) return { field, problem };
  }
  if (!integer) {
    const last = init.start + (elements - 1) * init.step;
    const problem = elementProblem(type, last);
    if (problem)
      return {
        field: 'step',
        problem: `the ramp's last element, ${init.start} + ${elements - 1} × ${init.step}: ${problem}`,
      };
  }
  return null;
}
