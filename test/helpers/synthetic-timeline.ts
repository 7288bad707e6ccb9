import { type DeviceFacts, SHARING_NOT_CHECKED } from '../../src/result/environment.js';
import type { ModeResult, Stats } from '../../src/model/mode.js';
import { RESULT_SCHEMA_ID, RESULT_VERSION, type RunResult, RunResultSchema } from '../../src/result/schema.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';
import { modeId, type ModeRole } from '../../src/vocabulary.js';

// A v2 Result with traced reps, built by a small event simulation of the balanced pipeline, until a recorded GPU
// result with a timeline exists. The simulation models what shapes a real trace: ops issued one by one by the host,
// one copy engine per direction, one kernel at a time on the SMs (each kernel fills the GPU), stream order with a
// little launch latency, and a PCIe link that both directions share, so copies slow down while the other direction
// runs. Everything is deterministic.

export const H200: DeviceFacts = {
  index: 0,
  name: 'NVIDIA H200',
  uuid: 'GPU-5c1f0f4e-8a53-4b3c-9d8e-1f2a3b4c5d6e',
  computeCapability: { major: 9, minor: 0 },
  multiprocessors: 132,
  maxThreadsPerMultiprocessor: 2048,
  memoryBytes: 150_754_820_096,
  l2CacheBytes: 62_914_560,
  asyncEngineCount: 3,
  concurrentKernels: true,
  gpuOverlap: true,
  unifiedAddressing: true,
  canMapHostMemory: true,
  integrated: false,
  streamPriority: { least: 0, greatest: -5 },
  pciBusId: '00000000:19:00.0',
  pcie: { generation: 5, width: 16, maxGeneration: 5, maxWidth: 16, speed: '32.0 GT/s PCIe' },
};

/** Stage times of one chunk on an idle link, ms (the brief's balanced pipeline). */
export const CHUNK_MS = { h2d: 0.3, kernel: 0.18, d2h: 0.3 } as const;
export const CHUNKS = 16;
export const STREAMS = 4;
const BUFFER_BYTES = 128 * 1024 * 1024;
/** Each direction's share of its idle-link speed while the other direction also copies. */
const SHARED_LINK_RATE = 0.75;
/** Host cost of issuing one copy, one launch, and one event record, ms. */
const ISSUE_MS = { copy: 0.004, launch: 0.003, event: 0.0008 } as const;
/** From issue until the GPU can start an op, and from an op's end until its stream's next op can start, ms. */
const SUBMIT_LATENCY_MS = 0.004;
const STREAM_LATENCY_MS = 0.002;

type Kind = TimelineOp['kind'];
type Engine = 'h2d' | 'd2h' | 'sm';

interface PlannedOp {
  readonly stream: string;
  readonly kind: Exclude<Kind, 'host' | 'peer'>;
  readonly chunk: number | null;
  readonly workMs: number;
  readonly bytes: number;
}

/** The ops of a chunk-per-stream layout in depth-first issue order: per chunk, H2D, kernel, D2H. */
export function depthFirstOps(chunks: number, streams: number, scale = 1): PlannedOp[] {
  const whole = chunks === 1;
  const chunkBytes = BUFFER_BYTES / chunks;
  const perChunk = (ms: number) => (ms * CHUNKS * scale) / chunks;
  return Array.from({ length: chunks }, (_, c) => {
    const stream = `s${c % streams}`;
    const chunk = whole ? null : c;
    return [
      { stream, kind: 'h2d', chunk, workMs: perChunk(CHUNK_MS.h2d), bytes: chunkBytes },
      { stream, kind: 'kernel', chunk, workMs: (CHUNK_MS.kernel * CHUNKS) / chunks, bytes: chunkBytes },
      { stream, kind: 'd2h', chunk, workMs: perChunk(CHUNK_MS.d2h), bytes: chunkBytes },
    ] as const;
  }).flat();
}

interface Running {
  readonly index: number;
  remainingMs: number;
}

/**
 * Runs the planned ops and returns their GPU start and end times. Time advances from event to event: an op being
 * issued, or a running op finishing; between events every running op progresses at a constant rate.
 */
export function simulate(planned: readonly PlannedOp[]): {
  startMs: number[];
  endMs: number[];
  issuedMs: number[];
  issueMs: number;
} {
  const issuedMs: number[] = [];
  let host = ISSUE_MS.event; // the rep's start event
  for (const op of planned) {
    host += ISSUE_MS.event; // the op's own start event
    issuedMs.push(host);
    host += op.kind === 'kernel' ? ISSUE_MS.launch : ISSUE_MS.copy;
    host += ISSUE_MS.event;
  }
  const issueMs = host + ISSUE_MS.event;

  const startMs: number[] = planned.map(() => Number.NaN);
  const endMs: number[] = planned.map(() => Number.NaN);
  const streamReadyMs = new Map<string, number>();
  const running = new Map<Engine, Running>();
  const waiting = planned.map((_, i) => i);
  let now = 0;
  while (waiting.length || running.size) {
    for (const engine of ['h2d', 'd2h', 'sm'] as const) {
      if (running.has(engine)) continue;
      const next = waiting.find(
        (i) => engineOf(planned[i]!) === engine && readyAt(i) <= now + 1e-12 && isStreamHead(i),
      );
      if (next === undefined) continue;
      startMs[next] = now;
      running.set(engine, { index: next, remainingMs: planned[next]!.workMs });
      waiting.splice(waiting.indexOf(next), 1);
    }
    const rate = (engine: Engine) =>
      engine !== 'sm' && running.has('h2d') && running.has('d2h') ? SHARED_LINK_RATE : 1;
    // Rates hold until the next event, so take them before any op finishes and changes them.
    const rates = new Map([...running.keys()].map((engine) => [engine, rate(engine)]));
    const finishes = [...running].map(([engine, r]) => now + r.remainingMs / rates.get(engine)!);
    const arrivals = waiting.map(readyAt).filter((t) => t > now + 1e-12);
    const next = Math.min(...finishes, ...arrivals);
    for (const [engine, r] of running) {
      r.remainingMs -= (next - now) * rates.get(engine)!;
      if (r.remainingMs <= 1e-9) {
        endMs[r.index] = next;
        streamReadyMs.set(planned[r.index]!.stream, next + STREAM_LATENCY_MS);
        running.delete(engine);
      }
    }
    now = next;
  }
  return { startMs, endMs, issuedMs, issueMs };

  function readyAt(i: number): number {
    return Math.max(issuedMs[i]! + SUBMIT_LATENCY_MS, streamReadyMs.get(planned[i]!.stream) ?? 0);
  }
  // Stream order: only the first unstarted op of a stream may start, and only once its predecessor has ended.
  function isStreamHead(i: number): boolean {
    const stream = planned[i]!.stream;
    const earlier = planned.findIndex((op, j) => op.stream === stream && Number.isNaN(endMs[j]!));
    return earlier === i;
  }
}

function engineOf(op: PlannedOp): Engine {
  // Copies queue on their own engines; every compute kind runs on the SMs.
  return op.kind === 'h2d' || op.kind === 'd2h' ? op.kind : 'sm';
}

export function tracedRep(mode: string, device: number, planned: readonly PlannedOp[]): TracedRep {
  const { startMs, endMs, issuedMs, issueMs } = simulate(planned);
  const streams = [...new Set(planned.map((op) => op.stream))];
  const ops: TimelineOp[] = planned.map((op, i) => ({
    mode,
    device,
    stream: op.stream,
    kind: op.kind,
    chunk: op.chunk,
    buffer: op.kind === 'h2d' ? 'input' : op.kind === 'd2h' ? 'output' : null,
    kernel: op.kind === 'kernel' ? 'fma' : null,
    bytes: op.bytes,
    startMs: round(startMs[i]!),
    endMs: round(endMs[i]!),
    issuedMs: round(issuedMs[i]!),
  }));
  // The end event runs once the last op has finished, a couple of µs later.
  const totalMs = round(Math.max(...endMs) + STREAM_LATENCY_MS);
  return {
    mode,
    device,
    totalMs,
    issueMs: round(issueMs),
    streams: streams.map((id) => ({ id, flags: 'non-blocking', priority: null })),
    ops,
  };
}

/** Nanosecond resolution, as CUDA events give about half a microsecond: keeps the JSON short and exact. */
function round(ms: number): number {
  return Math.round(ms * 1e6) / 1e6;
}

/** Deterministic samples around `median` (no randomness: tests must not flap). */
function samplesAround(median: number, noise: number, n = 20): number[] {
  return Array.from({ length: n }, (_, i) => median * (1 + noise * Math.sin(i * 2.399963 + 0.5)));
}

function stats(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const q = (p: number) => {
    const at = (sorted.length - 1) * p;
    const lo = Math.floor(at);
    return sorted[lo]! + (sorted[Math.ceil(at)]! - sorted[lo]!) * (at - lo);
  };
  const n = samples.length;
  const mean = samples.reduce((a, b) => a + b, 0) / n;
  const stdev = n > 1 ? Math.sqrt(samples.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  const median = q(0.5);
  const deviations = samples.map((s) => Math.abs(s - median)).sort((a, b) => a - b);
  const mad = deviations[Math.floor((n - 1) / 2)]!;
  return {
    n,
    median,
    mean,
    min: sorted[0]!,
    max: sorted[n - 1]!,
    stdev,
    q1: q(0.25),
    q3: q(0.75),
    iqr: q(0.75) - q(0.25),
    relativeStdev: n > 1 ? stdev / mean : 0,
    relativeNoise: (1.4826 * mad) / median,
    outliers: [],
  };
}

function mode(
  role: ModeRole,
  device: number,
  medianMs: number,
  description: string,
  bytes: { h2d: number; d2h: number },
): ModeResult {
  const samplesMs = samplesAround(medianMs, 0.004);
  return {
    id: modeId(role),
    role,
    device,
    description,
    bytes,
    samplesMs,
    hostIssueMs: samplesAround(0.2, 0.05),
    stats: stats(samplesMs),
    stoppedBy: 'noise-stable',
    elapsedMs: 400,
    gateTimeouts: 0,
    smClockMHz: { min: 1980, max: 1980 },
    analysis: null,
  };
}

export interface SyntheticOptions {
  /** GPUs in the run; each runs every mode, the second with a 10% slower link. Default 1. */
  readonly devices?: number;
}

/** A Result of configs/balanced-like work on H200s, with a traced serial and overlapped rep per device. */
export function syntheticRunResult(options: SyntheticOptions = {}): RunResult {
  const deviceCount = options.devices ?? 1;
  const devices = Array.from({ length: deviceCount }, (_, index) => ({
    ...H200,
    index,
    uuid: H200.uuid.replace(/.$/, String(index)),
    pciBusId: `00000000:${(0x19 + index * 0x20).toString(16)}:00.0`,
  }));
  const layout = { chunks: CHUNKS, streams: STREAMS, order: 'depth-first', topology: 'chunk-per-stream' } as const;
  const overlappedRole: ModeRole = { kind: 'overlapped', layout };
  const overlappedId = modeId(overlappedRole);
  const both = { h2d: BUFFER_BYTES, d2h: BUFFER_BYTES };

  const reps: TracedRep[] = [];
  const modes: ModeResult[] = [];
  for (const device of devices) {
    const scale = 1 + 0.1 * device.index;
    const serialRep = tracedRep('serial', device.index, depthFirstOps(1, 1, scale));
    const overlappedRep = tracedRep(overlappedId, device.index, depthFirstOps(CHUNKS, STREAMS, scale));
    reps.push(serialRep, overlappedRep);
    const stage = (kind: 'h2d' | 'kernel' | 'd2h') => CHUNK_MS[kind] * CHUNKS * (kind === 'kernel' ? 1 : scale);
    const linkMs = (stage('h2d') + stage('d2h')) / (2 * SHARED_LINK_RATE);
    // Timed reps run without the per-op events, a little faster than the traced one.
    const serial = mode(
      { kind: 'serial' },
      device.index,
      serialRep.totalMs * 0.995,
      'whole buffers on one stream',
      both,
    );
    const overlapped = mode(
      overlappedRole,
      device.index,
      overlappedRep.totalMs * 0.99,
      '16 chunks over 4 streams, depth-first',
      both,
    );
    overlapped.analysis = overlapAnalysis(serial.stats.median, overlapped.stats.median, stage, linkMs);
    modes.push(
      serial,
      overlapped,
      mode({ kind: 'stage', stage: 'h2d' }, device.index, stage('h2d'), 'H2D of every in buffer, alone', {
        h2d: BUFFER_BYTES,
        d2h: 0,
      }),
      mode({ kind: 'stage', stage: 'kernel', kernel: 'fma' }, device.index, stage('kernel'), 'kernel fma alone', {
        h2d: 0,
        d2h: 0,
      }),
      mode({ kind: 'stage', stage: 'd2h' }, device.index, stage('d2h'), 'D2H of every out buffer, alone', {
        h2d: 0,
        d2h: BUFFER_BYTES,
      }),
      mode(
        { kind: 'link', copiesPerDirection: CHUNKS, streamsPerDirection: 2 },
        device.index,
        linkMs,
        'both directions at once',
        both,
      ),
    );
  }
  const headline = modes.find((m) => m.role.kind === 'overlapped')!;
  const analysis = headline.analysis!;

  return RunResultSchema.parse({
    schema: RESULT_SCHEMA_ID,
    version: RESULT_VERSION,
    tool: { name: 'cuda-pipe', version: '0.2.0' },
    createdAt: '2026-11-22T12:00:00.000Z',
    run: { hostname: 'h200-node', rank: null, localRank: null, size: null, jobId: null, launcher: null },
    environment: {
      node: 'v20.19.0',
      platform: 'linux-x64',
      software: {
        driver: '580.65',
        runtime: '13.0',
        nvrtc: '13.0',
        nvrtcArchitectures: ['sm_90'],
        cudartPath: 'libcudart.so.13',
        nvrtcPath: 'libnvrtc.so.13',
      },
    },
    devices,
    config: {
      name: 'balanced',
      path: '/configs/balanced.yaml',
      hash: 'sha256:5f2c0d',
      resolved: { pipeline: { chunks: CHUNKS, streams: STREAMS } },
    },
    pipeline: { elements: BUFFER_BYTES / 4, align: 256, requestedChunks: CHUNKS, requestedStreams: STREAMS },
    buffers: [
      {
        name: 'input',
        type: 'float32',
        elements: BUFFER_BYTES / 4,
        bytes: BUFFER_BYTES,
        role: 'in',
        hostMemory: 'pinned',
      },
      {
        name: 'output',
        type: 'float32',
        elements: BUFFER_BYTES / 4,
        bytes: BUFFER_BYTES,
        role: 'out',
        hostMemory: 'pinned',
      },
    ],
    kernels: [
      {
        label: 'fma',
        entry: 'fma_loop',
        source: 'fma_loop.cu',
        block: 256,
        grid: 'cover',
        compile: { cached: true, ms: 1.2, arch: 'sm_90', nvrtc: '13.0' },
      },
    ],
    policy: {
      warmup: 3,
      warmupMs: 50,
      fixedReps: null,
      minReps: 10,
      maxReps: 200,
      maxNoise: 0.005,
      maxTimeMs: 10_000,
      gate: false,
    },
    clocks: { checked: true, note: 'SM clock steady', minMHz: 1980, maxMHz: 1980, sharing: SHARING_NOT_CHECKED },
    modes,
    summary: {
      mode: headline.id,
      serialMs: analysis.serialMs,
      overlappedMs: headline.stats.median,
      speedup: analysis.speedup,
      speedupError: analysis.speedupError,
      efficiency: analysis.efficiency,
    },
    timeline: { reps },
    verification: { status: 'passed', mismatches: [] },
    warnings: [
      {
        code: 'not-verified',
        message: 'This result was simulated, not measured.',
        remedy: 'Record a result on a GPU with --timeline.',
      },
    ],
    notes: ['Traced reps carry an event before and after every op, so they run a little slower than the timed reps.'],
  });
}

function overlapAnalysis(
  serialMs: number,
  medianMs: number,
  stage: (kind: 'h2d' | 'kernel' | 'd2h') => number,
  linkMs: number,
): NonNullable<ModeResult['analysis']> {
  const fill = (ms: number) => ms / CHUNKS;
  const terms = (
    [
      { term: 'H2D', steadyMs: stage('h2d'), fillDrainMs: fill(stage('kernel') + stage('d2h')) },
      { term: 'kernels', steadyMs: stage('kernel'), fillDrainMs: fill(stage('h2d') + stage('d2h')) },
      { term: 'D2H', steadyMs: stage('d2h'), fillDrainMs: fill(stage('h2d') + stage('kernel')) },
      { term: 'link', steadyMs: linkMs, fillDrainMs: fill(stage('kernel')) },
    ] as const
  ).map((t) => ({ ...t, perOpMs: 0, ms: t.steadyMs + t.fillDrainMs }));
  const bound = terms.reduce((a, b) => (b.ms > a.ms ? b : a));
  return {
    serialMs,
    speedup: serialMs / medianMs,
    speedupError: 0.004 * (serialMs / medianMs),
    bound: {
      ms: bound.ms,
      limitedBy: bound.term,
      steadyMs: bound.steadyMs,
      fillDrainMs: bound.fillDrainMs,
      copyEngines: 2,
      terms,
      linkGbPerSecond: (2 * BUFFER_BYTES) / linkMs / 1e6,
    },
    efficiency: bound.ms / medianMs,
    chunkElements: BUFFER_BYTES / 4 / CHUNKS,
    model: null,
  };
}
