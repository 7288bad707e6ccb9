import type { ZodRawShape, z } from 'zod';
import type { ConfigHost } from '../model/buffers.js';
import type { ConfigSection, KindRepEnd, SectionContext, StepConfig } from './api/index.js';
import { type Stage, type STAGE_KINDS, table } from './list.js';

// What the kinds add to the config and to the Result: their `kernels:` entries and sections of the config, composed
// into its schema and read by their own rules, and their fields of a Result and of its modes.

type SectionOf<K> = K extends { readonly result?: infer S }
  ? ZodRawShape extends NonNullable<S>
    ? Record<never, never>
    : NonNullable<S>
  : Record<never, never>;
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** The fields every kind adds to a Result, as one zod shape for the Result's schema (result/schema.ts). */
export const RESULT_SECTIONS = Object.assign({}, ...table.map((s) => s.result ?? {})) as Intersection<
  SectionOf<(typeof STAGE_KINDS)[number]>
>;

/** The fields kinds add to a mode from their records of its reps (the api's `reps`); the core reads none of them. */
export const MODE_SECTIONS: Record<never, never> = Object.assign({}, ...table.map((s) => s.reps?.fields ?? {}));

/** The fields each kind adds to a mode from its records of the mode's timed reps, in the table's order. */
export function kindRepFields(reps: readonly KindRepEnd[]): Readonly<Record<string, unknown>> {
  return Object.assign(
    {},
    ...table.map((kind) => {
      const records = reps.filter((r) => r.kind === kind.id).map((r) => r.record);
      return kind.reps && records.length ? kind.reps.summary(records) : {};
    }),
  );
}

/** The values of the fields the kinds add to a Result. */
export type KindSections = z.infer<z.ZodObject<typeof RESULT_SECTIONS>>;

/** The compute kinds with an entry of their own in the config's `kernels:` list (every one but the kernel). */
export const STEP_CONFIGS: readonly (StepConfig<unknown> & { readonly stage: Stage })[] = table.flatMap((s) =>
  s.config ? [{ ...s.config, stage: s.id }] : [],
);

const SECTIONS: readonly ConfigSection[] = table.flatMap((s) => (s.section ? [s.section] : []));

/** The kinds' own sections of the config, as one zod shape for the config's schema (config/schema.ts). */
export const CONFIG_SECTIONS: Record<never, never> = Object.fromEntries(SECTIONS.map((s) => [s.key, s.schema]));

/** What the kinds read from their own sections of the config (the host stage's), each under its key. */
export type ConfigSections = { readonly host: ConfigHost | null };

/** Each kind's own section of the parsed config, read by its rules (the api's `section`). */
export function readConfigSections(
  parsed: object,
  context: Omit<SectionContext, 'locate'> & { locate(path: readonly (string | number)[]): string },
): ConfigSections {
  const values = parsed as Readonly<Record<string, unknown>>;
  const read = SECTIONS.map((s) => [
    s.key,
    s.read(values[s.key], { ...context, locate: (field) => context.locate([s.key, ...field]) }),
  ]);
  return Object.fromEntries(read) as ConfigSections;
}
