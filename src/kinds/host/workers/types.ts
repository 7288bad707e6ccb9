import type { fillPattern } from '../../../data/patterns.js';
import type { ElementType } from '../../../vocabulary.js';

// What the main thread and the worker threads of a pool say to each other, and what a stage function sees. Every
// message is structured-cloned, so it holds numbers, strings and BigInt addresses, never a view of memory.

/** How a buffer's inputs are generated: the config's `init`, as src/data fills it. */
export type PatternInit = Parameters<typeof fillPattern>[2];

/** The function a pool's workers run, by name in the pool's table. */
export type StageFunctionSpec =
  /** The sum of the chunk's bytes as aligned 32-bit words, as the host stage on the JS thread computes it. */
  | { readonly kind: 'checksum' }
  /** The chunk's regions copied, in order, into its targets (the same number of bytes in all). */
  | { readonly kind: 'copy' }
  /** A fixed CPU cost per MiB of the chunk, spent busy (a model of decoding work), touching no byte. */
  | { readonly kind: 'cost'; readonly msPerMiB: number }
  /**
   * A loader: a CPU cost per MiB, then each region filled with its buffer's seeded pattern at the region's place,
   * copied from the buffer's pattern computed once (`pattern`, shared by every worker) where there is one.
   */
  | { readonly kind: 'decode'; readonly msPerMiB: number; readonly buffers: Readonly<Record<string, DecodeSource>> }
  /** A user's function: the named export of an ES module, loaded once in every worker. */
  | { readonly kind: 'module'; readonly path: string; readonly export: string };

/**
 * What decode writes into a buffer's regions: its seeded pattern, and the whole buffer's bytes of it when computed
 * ahead.
 */
export interface DecodeSource {
  readonly type: ElementType;
  readonly init: PatternInit;
  readonly pattern?: SharedArrayBuffer;
}

/** Native host memory handed to a worker by address: the main thread keeps it allocated until the task ended. */
export interface Region {
  readonly address: bigint;
  readonly bytes: number;
  /** The buffer the bytes belong to, and where in it they start: what a loader needs to know which data is there. */
  readonly buffer: string;
  readonly offset: number;
}

export interface WorkerTask {
  /** The name of the function in the pool's table. */
  readonly fn: string;
  /** The chunk, or null for an op over whole buffers: for messages and the user's function. */
  readonly chunk: number | null;
  readonly regions: readonly Region[];
  /** Where `copy` writes; empty for the other built-ins. */
  readonly targets?: readonly Region[];
  /**
   * What the worker waits for before it runs the function (a chunk's D2H): handed over at issue, the task starts
   * within microseconds of its chunk leaving the GPU, with no turn of the JS thread in between.
   */
  readonly waitFor?: TaskWait;
}

/**
 * A flag in the pool's shared memory that the main thread raises (for an event: once it saw the event complete), and
 * for an event also the event itself (its handle, and the libcudart file that made it), which the worker queries
 * every EVENT_QUERY_GAP_MS while it sleeps on the flag, so a task starts even while the main thread is busy issuing.
 * Abandoned once the pool cancels the task's generation (a rep that failed).
 */
export type TaskWait =
  | {
      readonly kind: 'event';
      readonly event: bigint;
      readonly library: string;
      readonly flag: number;
      readonly generation: number;
    }
  | { readonly kind: 'flag'; readonly flag: number; readonly generation: number };

/** A region as a stage function sees it: a zero-copy view of the memory, with the buffer and place it came from. */
export interface RegionView {
  readonly buffer: string;
  readonly offset: number;
  readonly bytes: Uint8Array;
}

/** What a stage function (built in or the user's) is called with. */
export interface StageChunk {
  readonly chunk: number | null;
  readonly worker: number;
  readonly regions: readonly RegionView[];
  readonly targets: readonly RegionView[];
}

/** A stage function's return value must be structured-cloneable; built-ins return a number or nothing. */
export type StageFunction = (chunk: StageChunk) => unknown;

export interface WorkerSetup {
  readonly index: number;
  readonly functions: Readonly<Record<string, StageFunctionSpec>>;
  /**
   * Int32 words shared by the pool and its workers: [0] the last cancelled generation, then the flags of `flag` waits.
   */
  readonly control: SharedArrayBuffer;
  /**
   * Int32 words, two per worker: the id + 1 of the task whose function it is running (0 while it waits or idles),
   * and when that function started, in ms after `originMs`. The pool reads them when a task's deadline comes, without
   * a message per task: a task still waiting for its chunk's event is the GPU's to bound, one running is the
   * function's.
   */
  readonly running: SharedArrayBuffer;
  /** The epoch ms that `running`'s start times count from. */
  readonly originMs: number;
}

/**
 * A worker waiting for its chunk's event sleeps on its flag and queries the event itself this often. Sleeping, not
 * spinning: on the H200 host eight spinning workers slowed the checksum tasks 1.8× (hyperthreads share cores).
 */
export const EVENT_QUERY_GAP_MS = 0.1;

/** Words of the pool's shared control block before the flags. */
export const CONTROL_HEADER = 1;

/**
 * Worker → main. Times are milliseconds since the epoch (performance.timeOrigin + now()): the clocks of two threads
 * differ in origin only.
 */
export type WorkerMessage =
  | { readonly kind: 'ready' }
  /** Sent before a user's module is imported: what a worker that then spins, awaits for ever or exits was loading. */
  | { readonly kind: 'loading'; readonly fn: string; readonly path: string }
  | { readonly kind: 'load-failed'; readonly fn: string; readonly path: string; readonly message: string }
  | {
      readonly kind: 'done';
      readonly id: number;
      readonly value: unknown;
      readonly startedAt: number;
      readonly endedAt: number;
    }
  | {
      readonly kind: 'failed';
      readonly id: number;
      readonly message: string;
      readonly startedAt: number;
      readonly endedAt: number;
    };

/** Main → worker. */
export interface TaskMessage {
  readonly id: number;
  readonly task: WorkerTask;
}
