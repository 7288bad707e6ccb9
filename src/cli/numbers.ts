import { InvalidArgumentError } from 'commander';
import { ISSUE_ORDERS, type IssueOrder, MAX_DEVICE_INDEX } from '../vocabulary.js';

/**
 * The one parser behind every numeric flag: commander calls it with the flag's text, and a bad value becomes
 * commander's "option '--chunks <n>' argument 'x' is invalid. expected ..." (exit 2).
 */
export function numberFlag(options: {
  integer: boolean;
  min: number;
  exclusiveMin?: boolean;
  max?: number;
}): (text: string) => number {
  const bound =
    options.max === undefined
      ? `${options.exclusiveMin ? 'above' : '≥'} ${options.min}`
      : `from ${options.min} to ${options.max}`;
  const what = options.integer ? `a whole number ${bound}` : `a number ${bound}`;
  return (text) => {
    const value = Number(text.trim() === '' ? Number.NaN : text);
    const ok =
      Number.isFinite(value) &&
      (!options.integer || Number.isInteger(value)) &&
      (options.exclusiveMin ? value > options.min : value >= options.min) &&
      (options.max === undefined || value <= options.max);
    if (!ok) throw new InvalidArgumentError(`expected ${what}, got "${text}".`);
    return value;
  };
}

export const positiveInt = numberFlag({ integer: true, min: 1 });
export const nonNegativeInt = numberFlag({ integer: true, min: 0 });
export const positiveNumber = numberFlag({ integer: false, min: 0, exclusiveMin: true });
export const nonNegativeNumber = numberFlag({ integer: false, min: 0 });
/**
 * timeline's --width: the chart needs a few columns beside its labels, and its cost grows with its width, so a
 * mistyped 1e8 is refused rather than drawn for minutes (renderGantt caps what it is given at the same 1000).
 */
export const chartColumns = numberFlag({ integer: true, min: 20, max: 1000 });

/**
 * The longest --timeout Node's timers can wait (a signed 32-bit count of ms, as guard.ts's MAX_DEADLINE_MS): 24.8 days.
 */
const MAX_TIMEOUT_S = Math.floor((2 ** 31 - 1) / 1000);

/** `--timeout <seconds>`: above 0, and no longer than a timer can wait (a longer one would fire at once). */
export function timeoutSeconds(text: string): number {
  const value = positiveNumber(text);
  if (value > MAX_TIMEOUT_S) {
    throw new InvalidArgumentError(
      `expected at most ${MAX_TIMEOUT_S} seconds (about 24 days, the longest a timer can wait), got "${text}".`,
    );
  }
  return value;
}

/** `--arch sm_90`: an architecture as NVRTC names it; an empty or misspelt one is refused, never ignored. */
export function archFlag(text: string): string {
  if (!/^sm_\d{2,3}$/.test(text))
    throw new InvalidArgumentError(
      `expected an architecture such as sm_90 (sm_ and the compute capability), got "${text}".`,
    );
  return text;
}

/** A comma-separated list of whole numbers ≥ 1, for --streams and --chunks of a sweep. */
export function countList(text: string): number[] {
  const values = text.split(',').map((v) => (v.trim() === '' ? Number.NaN : Number(v)));
  if (values.some((v) => !Number.isInteger(v) || v < 1))
    throw new InvalidArgumentError(`expected whole numbers ≥ 1 separated by commas, such as 1,2,4,8, got "${text}".`);
  return [...new Set(values)];
}

/**
 * A device index as typed: decimal digits, and no more than a C int holds (CUDA's), so that `1e9` or a value past
 * 2^53 (which Number would round) is refused quoting what was typed, never planned as a device nobody named.
 */
const deviceIndex = (text: string): number => {
  const value = /^\s*\d+\s*$/.test(text) ? Number(text) : Number.NaN;
  return value <= MAX_DEVICE_INDEX ? value : Number.NaN;
};

/** `--device <n>`: one device index. */
export function deviceFlag(text: string): number {
  const value = deviceIndex(text);
  if (Number.isNaN(value))
    throw new InvalidArgumentError(
      `expected a device index, a whole number from 0 to ${MAX_DEVICE_INDEX} in digits, got "${text}".`,
    );
  return value;
}

/**
 * probe's `--device` and run's `--devices`: "all", one index, or indexes separated by commas (0,1) in the order given,
 * each once.
 */
export function deviceSelection(text: string): 'all' | number[] {
  if (text.trim() === 'all') return 'all';
  const values = text.split(',').map(deviceIndex);
  if (values.some((v) => Number.isNaN(v)))
    throw new InvalidArgumentError(
      `expected a device index (0 to ${MAX_DEVICE_INDEX}, in digits), indexes separated by commas such as 0,1, or "all", got "${text}".`,
    );
  // As in a config's devices: a device listed twice is a plan over fewer devices than asked for, so it is refused.
  const twice = values.find((v, i) => values.indexOf(v) !== i);
  if (twice !== undefined)
    throw new InvalidArgumentError(`device ${twice} is listed twice in "${text}"; list each device once.`);
  return values;
}

/** A comma-separated list of issue orders. */
export function orderList(text: string): IssueOrder[] {
  const values = text.split(',').map((v) => v.trim());
  const bad = values.find((v) => !(ISSUE_ORDERS as readonly string[]).includes(v));
  if (bad !== undefined)
    throw new InvalidArgumentError(
      `"${bad}" is not an issue order; use ${ISSUE_ORDERS.join(' or ')}, separated by commas.`,
    );
  return [...new Set(values)] as IssueOrder[];
}

/** Repeatable flags collect their values. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
