import type { ZodType } from 'zod';

// A compute kind's entry in the config's `kernels:` list (other than a kernel's), and what it resolves to; and a kind's
// own section of the config (the host stage's `host:`), and what it reads.

/** What a library stage reads of a config buffer when it resolves its entry. */
export interface StepBuffer {
  readonly name: string;
  readonly type: string;
  readonly role: string;
  readonly elementBytes: number;
  /** Elements per item of a chunked buffer (1 where the config does not chunk by items). */
  readonly itemSize: number;
  /** Elements in the whole buffer: what a library call's operands are checked against. */
  readonly elements: number;
}

/**
 * A compute kind's entry in the config's `kernels:` list, other than a kernel's: the key that marks it (`gemm:`),
 * its zod schema, which config/schema.ts composes into the list, its label, and its resolution against the buffers
 * (its spec, or what is wrong and at which field path under the entry).
 */
export interface StepConfig<Entry> {
  readonly key: string;
  readonly schema: ZodType<Entry>;
  label(entry: Entry): string;
  resolve(
    entry: Entry,
    buffers: readonly StepBuffer[],
  ): { readonly spec: unknown } | { readonly error: string; readonly path: readonly (string | number)[] };
}

/**
 * One step of a chunk's compute phase, as the config lists it: the stage kind that plans it (`kernel`, or a library
 * stage such as `gemm`), its label, and what that kind resolved from its config entry (null for a kernel, whose
 * launch is in the plan's kernel list). Each kind reads only its own steps' `spec`.
 */
export interface ComputeStep {
  readonly stage: string;
  readonly label: string;
  readonly spec: unknown;
}

/** What a kind's own section of the config is read with, beside its value. */
export interface SectionContext {
  /** The config file's path, or null for text not read from a file: what a relative path in the section is under. */
  readonly path: string | null;
  /** The config's buffers, as resolved. */
  readonly buffers: readonly StepBuffer[];
  /** Where a field under the section is (file:line:col, or the flag that set it), for a message. */
  locate(field: readonly (string | number)[]): string;
  /** Adds a note to the loaded config (an old form the section still reads, say). */
  note(text: string): void;
}

/**
 * A kind's own section of the config, a top-level key beside `pipeline:` (the host stage's `host:`): its zod schema,
 * which config/schema.ts composes into the config's, and its rules, which read the parsed value (undefined where the
 * config has none) into what the planner reads, or throw a UsageError naming the field.
 */
export interface ConfigSection<Parsed = unknown, Read = unknown> {
  readonly key: string;
  readonly schema: ZodType<Parsed>;
  read(parsed: Parsed, context: SectionContext): Read;
}

export interface KindConfig {
  /** A compute kind other than the kernel: its entry in the config's `kernels:` list. */
  readonly config?: StepConfig<unknown>;
  /** Its own section of the config. */
  readonly section?: ConfigSection;
}
