const MULTIPLIERS: Record<string, number> = {
  '': 1,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

export type QuantityKind = 'bytes' | 'count';

/**
 * "256MiB" → 268435456, "64Mi" → 67108864, "4M" → 4000000, "1.5GiB" → 1610612736.
 * Binary prefixes (Ki, Mi, Gi) are powers of 1024, SI ones (K, M, G) powers of 1000. A trailing "B" is allowed for
 * byte sizes only. Returns a description of what is wrong instead of a number when the text is not a quantity.
 */
export function parseQuantity(text: string | number, kind: QuantityKind): number | { error: string } {
  if (typeof text === 'number') return checkWhole(text, text.toString());
  const match = /^\s*(\d+(?:\.\d+)?)\s*(Ki|Mi|Gi|Ti|K|M|G|T)?(B)?\s*$/.exec(text);
  if (!match) {
    const example = kind === 'bytes' ? '"256MiB", "64KiB" or 1048576' : '"64Mi", "4M" or 1000000';
    return { error: `"${text}" is not a ${kind === 'bytes' ? 'size' : 'count'}; write it like ${example}` };
  }
  const [, digits = '', prefix = '', byteSuffix] = match;
  if (byteSuffix && kind === 'count')
    return { error: `"${text}" is a byte size, but an element count is expected (drop the "B")` };
  return checkWhole(Number(digits) * (MULTIPLIERS[prefix] ?? 1), text);
}

function checkWhole(value: number, text: string): number | { error: string } {
  if (!Number.isFinite(value) || !Number.isInteger(value)) return { error: `"${text}" is not a whole number` };
  if (value < 0) return { error: `"${text}" is negative` };
  if (value > Number.MAX_SAFE_INTEGER) return { error: `"${text}" is too large` };
  return value;
}
