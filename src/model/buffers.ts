import type { BufferRole, ElementType, HostFunctionKind, HostMemoryKind } from '../vocabulary.js';

// The workload's buffers and its host stage as the config resolved them: what a plan holds, and what the stage kinds
// that work on buffers or on the host read.

export type InitSpec =
  | { kind: 'random'; seed: number }
  | { kind: 'ramp'; start: number; step: number }
  | { kind: 'constant'; value: number };

export interface ConfigBuffer {
  readonly name: string;
  readonly type: ElementType;
  readonly elementBytes: number;
  readonly elements: number;
  readonly bytes: number;
  /**
   * Elements per item: a chunk of items [f, f + n) is elements [f × itemSize, (f + n) × itemSize); 1 without
   * pipeline.items, and for resident buffers.
   */
  readonly itemSize: number;
  readonly role: BufferRole;
  readonly init: InitSpec;
  /** A scratch buffer whose config gives an init: seeded on the device once, before timing (others start unset). */
  readonly seeded?: boolean;
  readonly hostMemory: HostMemoryKind;
}

/** A host stage function as the config names it; a module's path is resolved against the config file's folder. */
export type HostFn =
  | { readonly kind: 'checksum' }
  | { readonly kind: 'cost'; readonly msPerMiB: number }
  /**
   * The loader's: writes each input buffer's seeded pattern into the chunk's range (so the run still verifies), after a
   * CPU cost per MiB.
   */
  | { readonly kind: 'decode'; readonly msPerMiB: number }
  | { readonly kind: 'module'; readonly path: string; readonly export: string };

/**
 * The CPU stages around the GPU. On `workers` (the default) `before` fills each chunk's input bytes ahead of the GPU
 * and, after each chunk's D2H, the stream only records an event and a pool of worker threads runs `after` over the
 * chunk's output bytes; on `js` (the old path, kept to measure what it costs)
 * cudaLaunchHostFunc runs `function` on the JS thread with the stream waiting.
 */
export type ConfigHost =
  | {
      readonly name: string;
      readonly thread: 'workers';
      readonly workers: number | null;
      /** The loader: fills each chunk's input bytes in pinned memory before its H2D is issued; null for none. */
      readonly before: HostFn | null;
      /**
       * Fills in flight ahead of the GPU: chunk c + slots is filled once chunk c's H2D completed; null for 2 × workers.
       */
      readonly slots: number | null;
      readonly after: HostFn | null;
    }
  | { readonly name: string; readonly thread: 'js'; readonly function: HostFunctionKind };
