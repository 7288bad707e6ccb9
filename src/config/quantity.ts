import { z } from 'zod';
import { parseQuantity, type QuantityKind } from './units.js';

// A quantity in the config's schema (a size or a count, with units), and how a value the schema refuses reads in
// its message, which every field's error shows.

/** The offending value in a message: short, and readable for the non-JSON values YAML can produce. */
export function showValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

const QUANTITY_FORMS: Record<QuantityKind, string> = {
  bytes: 'a size such as "256MiB" or a number of bytes',
  count: 'a count such as "64Mi" or a whole number',
};

export const quantity = (kind: QuantityKind) =>
  z
    .union([z.number(), z.string()], {
      error: (issue) => `expected ${QUANTITY_FORMS[kind]}, got ${showValue(issue.input)}`,
    })
    .transform((value, ctx) => {
      const parsed = parseQuantity(value, kind);
      if (typeof parsed === 'number') return parsed;
      ctx.addIssue({ code: 'custom', message: parsed.error });
      return z.NEVER;
    });
