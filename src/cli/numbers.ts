import { InvalidArgumentError } from 'commander';

/**
 * The one parser behind every numeric flag: commander calls it with the flag's text, and a bad value becomes
 * commander's "option '--chunks <n>' argument 'x' is invalid. expected ..." (exit 2).
 */
export function numberFlag(options: { integer: boolean; min: number; exclusiveMin?: boolean }): (text: string) => number {
  const bound = `${options.exclusiveMin ? 'above' : '≥'} ${options.min}`;
  const what = options.integer ? `a whole number ${bound}` : `a number ${bound}`;
  return (text) => {
    const value = Number(text.trim() === '' ? Number.NaN : text);
    const ok = Number.isFinite(value) && (!options.integer || Number.isInteger(value)) &&
      (options.exclusiveMin ? value > options.min : value >= options.min);
    if (!ok) throw new InvalidArgumentError(`expected ${what}, got "${text}".`);
    return value;
  };
}

export const positiveInt = numberFlag({ integer: true, min: 1 });
export const nonNegativeInt = numberFlag({ integer: true, min: 0 });
export const positiveNumber = numberFlag({ integer: false, min: 0, exclusiveMin: true });
export const nonNegativeNumber = numberFlag({ integer: false, min: 0 });
