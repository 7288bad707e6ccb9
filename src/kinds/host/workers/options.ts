import { availableParallelism } from 'node:os';
import type { StageFunctionSpec } from './types.js';

/**
 * A share of the cores that leaves two to the JS thread (issuing CUDA work, waiting on events) and CUDA's own
 * threads, and at most 8: past that a decode stage is rarely what limits a GPU pipeline.
 */
export function defaultWorkers(cores = availableParallelism()): number {
  return Math.max(1, Math.min(8, cores - 2));
}

export interface PoolOptions {
  /** How many worker threads; defaultWorkers() when absent. */
  readonly workers?: number;
  /** The functions every worker loads, by the name a task gives. */
  readonly functions: Readonly<Record<string, StageFunctionSpec>>;
  /** How many tasks may wait for a worker; a caller submits at most one per pinned slot, so more is a bug. */
  readonly queueLimit?: number;
  /**
   * Stops the pool from opening when aborted (Ctrl-C while it starts). Once open, a signal leaves the pool alone: the
   * rep in flight finishes its tasks, the guard stops at the rep boundary, and closing the pool ends every worker.
   */
  readonly signal?: AbortSignal;
  /**
   * Flags in shared memory that tasks wait on (`waitFor`), raised by `raise`; as many as the queue limit by default.
   */
  readonly flags?: number;
  /**
   * How long the workers may take to load their functions before the pool ends them; MODULE_LOAD_TIMEOUT_MS by default.
   */
  readonly loadTimeoutMs?: number;
  /** How long a task's function may run when its submitter gives no bound; TASK_TIMEOUT_MS by default. */
  readonly taskTimeoutMs?: number;
  /** The host stage's name, for messages. */
  readonly stage?: string;
}

/** A task's bound where its submitter gives none: `run --timeout`'s default. */
export const TASK_TIMEOUT_MS = 60_000;

/**
 * How long a user's module may take to load in every worker: a module's top-level code reads a table or two, where
 * a loop or an await that never ends would otherwise hold the run (and, spinning, its signal handlers) for ever.
 */
export const MODULE_LOAD_TIMEOUT_MS = 20_000;
