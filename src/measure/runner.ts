import type { ConfigBuffer } from '../config/types.js';
import type { TracedSpan } from '../plan/trace.js';
import type { Schedule } from '../plan/types.js';
import type { Agreement, KindRepEnd } from '../kinds/index.js';

export type { Agreement, KindRepEnd } from '../kinds/index.js';

// What measure/ needs from whatever runs reps: exec/ implements it on a device, tests implement it on the CPU. The
// repetition loop, verification order and warnings are written against this and nothing else.

export interface RepTiming {
  /**
   * GPU time between the start and end events; where a kind's own work ran in the rep (a host stage's tasks on
   * workers), until that work ended where that is later (the rep is the GPU's work and the kind's, from when the GPU
   * started: its end of issue when gated).
   */
  readonly gpuMs: number;
  /** A kind's own work in the rep: when it ended, from the GPU's start (host clock), and the kind's record of it. */
  readonly kindRep?: KindRepEnd;
  /** Host time spent in the issue loop (a host timer: issue cost only, never GPU time). */
  readonly hostIssueMs: number;
  /** The gate gave up before the host released it, so this rep's time includes issue cost after all. */
  readonly gateTimedOut: boolean;
  /** Latency modes: the time between each probe's events (schedule.probes), ms. */
  readonly probesMs?: readonly number[];
}

export interface TracedOpTiming {
  readonly span: TracedSpan;
  /**
   * GPU time from the rep's start event (over several devices, the op's own device's start) to the op's begin and end
   * events.
   */
  readonly startMs: number;
  readonly endMs: number;
  /** Host time from issuing the start event to issuing this op. */
  readonly issuedMs: number;
  /** Host ops only: host time from issuing the start event to when the function started and ended on the JS thread. */
  readonly hostStartedMs?: number;
  readonly hostEndedMs?: number;
  /**
   * When CUPTI recorded the op: when its engine (a copy engine, the SMs) started and finished it, in ns on CUPTI's
   * clock from an origin of the runner's choosing, the same for every op of the rep.
   */
  readonly engineNs?: { readonly start: number; readonly end: number };
}

/** Where a traced rep's engine times came from: CUPTI, or nowhere (events only) and why. */
export type EngineSource = { readonly source: 'cupti' } | { readonly source: 'events'; readonly reason: string };

export interface TracedRepTiming {
  readonly schedule: Schedule;
  /** Start to end of the rep; over several devices, each device's own start to end, in the order of its probes. */
  readonly totalMs: number;
  readonly deviceTotalsMs?: ReadonlyArray<{ readonly device: number; readonly totalMs: number }>;
  readonly issueMs: number;
  /** The host's wall clock (Unix epoch, ms) when the start event was issued: what ranks on one host share. */
  readonly originEpochMs?: number;
  readonly ops: readonly TracedOpTiming[];
  /** A kind's own work in the rep (a host stage's tasks), on this rep's clock (ms from issuing the start event). */
  readonly kindRep?: KindRepEnd;
  /** Absent from runners that never try CUPTI (the CPU tests' fakes): events only. */
  readonly engine?: EngineSource;
}

export interface RepOptions {
  /** Wait after every op, so that a fault names its op (see runRep). */
  readonly checked?: boolean;
  /**
   * How long the runner waits for the rep, in ms: from its first op for a checked rep, from the end of issue for
   * the others. Past it the runner stops waiting and throws a DeviceFailure that has lost the context (a runaway
   * kernel still holds the GPU), naming what had not finished.
   */
  readonly deadlineMs?: number;
  /**
   * Ctrl-C or SIGTERM. A rep that is already issued is still awaited (its end is the rep boundary where a run stops),
   * except one with collectives, which may never end when a peer stopped: after a short grace its communicators are
   * aborted and the run ends.
   */
  readonly signal?: AbortSignal | undefined;
}

/** One process deciding for itself: no other rank to ask. */
export const ALONE: Agreement = { any: async (votes) => [...votes] };

export interface RepRunner {
  readonly schedules: readonly Schedule[];
  /** The ranks' agreement where this process is one rank of a launch with collectives; absent: it decides alone. */
  readonly agreement?: Agreement;
  /**
   * Issues one rep of a schedule and resolves once its end event completed, without blocking the JS thread (host
   * functions enqueued by the rep run meanwhile). `checked` waits after every op so that a fault names its op; it
   * serialises the streams, so checked reps are never timed or verified.
   */
  runRep(id: string, options?: RepOptions): Promise<RepTiming>;
  /** One rep with an event before and after every work op; never a timed rep. */
  traceRep(id: string, options?: Pick<RepOptions, 'deadlineMs' | 'signal'>): Promise<TracedRepTiming>;
  /** Puts inout buffers back to their initial contents (each rep's D2H overwrote them). */
  restoreInputs(): void;
  /** Fills every output buffer with `byte` on the host and the device, so unwritten elements show. */
  poisonOutputs(byte: number): void;
  /** The buffers a rep copies back. */
  outputs(): readonly ConfigBuffer[];
  /**
   * Host bytes of a buffer in windows of at most HOST_WINDOW_BYTES (a typed array cannot span more than 4 GiB): the
   * primary device's, or `device`'s where it stores outputs of its own.
   */
  hostWindows(name: string, device?: number): Uint8Array[];
  /** The devices whose outputs are stored apart (data-parallel ranks of one process); absent: the primary's only. */
  outputDevices?(): readonly number[];
  /** Capture and instantiation time of a schedule replayed as a graph, once it has run; null otherwise. */
  setupCost?(id: string): { captureMs: number; instantiateMs: number } | null;
}
