import type { Config } from '../config/types.js';
import { gbPerSecond } from '../format.js';
import { quantile } from '../quantile.js';
import { type Plan, type Schedule, scheduleOps, streamDevices } from '../plan/types.js';
import type { PeerPathRecord } from '../model/devices.js';
import {
  type DeviceFacts,
  type RunIdentity,
  SHARING_NOT_CHECKED,
  type SharingRecord,
  type SoftwareVersions,
} from '../result/environment.js';
import type { ModeResult } from '../model/mode.js';
import type { ModelAnalysis, OverlapAnalysis, SweepSection } from '../model/analysis.js';
import { RESULT_SCHEMA_ID, RESULT_VERSION, type RunResult } from '../result/schema.js';
import type { TracedRep } from '../result/timeline.js';
import { isSplitTogether } from '../modes.js';
import { isWorkOp, kindModeFields, kindRepFields, stageOf } from '../kinds/index.js';
import { kernelRangeBytes } from './timeline.js';
import { chunkUnits } from '../chunking.js';
import { issuedOpCount } from '../plan/overhead.js';
import { SMALL_OP_BATCH } from '../plan/part-schedules.js';
import type { Bound } from './bound.js';
import { modelAnalysis, type PipelineFacts, streamFacts } from './model.js';
import { crossDeviceOf, perDeviceTimes, scalingOf } from './scaling.js';
import type { RepetitionPolicy } from './policy.js';
import type { MeasuredSchedule, Verification } from './repeat.js';
import { relativeMedianError, summarize } from './stats.js';
import { runWarnings } from './warnings.js';

export interface CompileRecord {
  readonly label: string;
  readonly cached: boolean;
  readonly ms: number;
  readonly arch: string;
  readonly nvrtc: string;
}

export interface RunResultInput {
  readonly toolVersion: string;
  readonly run: RunIdentity;
  readonly config: Config;
  readonly configHash: string;
  readonly rawConfig: unknown;
  readonly plan: Plan;
  readonly devices: readonly DeviceFacts[];
  readonly software: SoftwareVersions;
  readonly compiles: readonly CompileRecord[];
  readonly policy: RepetitionPolicy;
  readonly gate: boolean;
  readonly clockUnavailable: string | null;
  readonly measured: readonly MeasuredSchedule[];
  readonly verification: Verification;
  readonly traced: readonly TracedRep[];
  readonly sweep?: SweepSection | null;
  /** Other compute processes on the GPU; not checked when absent. */
  readonly sharing?: SharingRecord;
  readonly createdAt?: string;
  /** What the buffers took on the device; absent where nothing was measured (recorded fixtures). */
  readonly deviceMemory?: { readonly askedBytes: number; readonly measuredBytes: number };
  /** How each pair of devices that peer copies ran between was joined; absent for one device. */
  readonly peers?: readonly PeerPathRecord[];
}

/**
 * Median, 99th percentile (quantile.ts's one definition) and maximum of the urgent kernels' latencies; NaN for none.
 */
export function latencyStats(values: readonly number[]): { n: number; medianMs: number; p99Ms: number; maxMs: number } {
  if (!values.length) return { n: 0, medianMs: Number.NaN, p99Ms: Number.NaN, maxMs: Number.NaN };
  const stats = summarize(values);
  return {
    n: stats.n,
    medianMs: stats.median,
    p99Ms: quantile(
      [...values].sort((a, b) => a - b),
      0.99,
    ),
    maxMs: stats.max,
  };
}

// Reduced, not spread into Math.min: a mode may time more reps than a call takes arguments.
const range = (values: readonly number[]) =>
  values.length ? { min: values.reduce((a, b) => Math.min(a, b)), max: values.reduce((a, b) => Math.max(a, b)) } : null;

function modeResult(m: MeasuredSchedule, kernelBytes: (op: { kernel: string; count: number }) => number): ModeResult {
  const stats = summarize(m.gpuMs);
  return {
    id: m.schedule.id,
    role: m.schedule.role,
    device: m.schedule.device,
    description: m.schedule.description,
    bytes: m.schedule.bytes,
    samplesMs: m.gpuMs,
    hostIssueMs: m.hostIssueMs,
    stats,
    stoppedBy: m.stoppedBy,
    elapsedMs: m.elapsedMs,
    gateTimeouts: m.gateTimeouts,
    smClockMHz: range(m.smClockMHz),
    analysis: null,
    ...(m.setup ? { graph: { captureMs: m.setup.captureMs, instantiateMs: m.setup.instantiateMs } } : {}),
    ...probeTimes(m),
    ...issueCost(m),
    ...kindRepFields(m.kindReps ?? []),
    ...kindModeFields(m.schedule, streamDevices(m.schedule)),
    ...stageThroughput(m.schedule, stats.median, kernelBytes),
  };
}

/**
 * A compute step alone on whole buffers (a stage mode), as nvbench and the profilers state it: a GEMM's flops and the
 * bytes its operands read, a kernel's bytes from the element ranges of its buffer arguments, each over the median.
 * Other modes mix stages, so a rate would not say what limits them; a step with neither count known has none.
 */
export function stageThroughput(
  schedule: Pick<Schedule, 'role' | 'body'>,
  medianMs: number,
  kernelBytes: (op: { kernel: string; count: number }) => number,
): Pick<ModeResult, 'throughput'> {
  if (schedule.role.kind !== 'stage' || schedule.role.stage !== 'kernel' || !(medianMs > 0)) return {};
  let flop = 0;
  let bytes = 0;
  for (const op of schedule.body) {
    const work = isWorkOp(op) ? stageOf(op).work?.(op, kernelBytes) : undefined;
    flop += work?.flop ?? 0;
    bytes += work?.bytes ?? 0;
  }
  if (!flop && !bytes) return {};
  return {
    throughput: {
      ...(flop ? { flop, tflops: flop / (medianMs * 1e9) } : {}),
      ...(bytes ? { bytes, gbPerSecond: gbPerSecond(bytes, medianMs) } : {}),
    },
  };
}

/** A Result's headline: an overlapped mode, its time against serial's, and its efficiency against the bound. */
export function summaryOf(
  mode: Pick<ModeResult, 'id' | 'stats'>,
  analysis: NonNullable<ModeResult['analysis']>,
): RunResult['summary'] {
  return {
    mode: mode.id,
    serialMs: analysis.serialMs,
    overlappedMs: mode.stats.median,
    speedup: analysis.speedup,
    speedupError: analysis.speedupError,
    efficiency: analysis.efficiency,
  };
}

/** A latency mode's probes are its urgent kernels; a mode spanning devices has one per device. */
function probeTimes(m: MeasuredSchedule): Pick<ModeResult, 'latency' | 'perDevice'> {
  if (!m.probeMs?.length) return {};
  const perDevice = perDeviceTimes(m.schedule, m.probeMs);
  return perDevice ? { perDevice } : { latency: latencyStats(m.probeMs) };
}

/** Host µs per op of an issue-cost mode. */
function issueCost(m: MeasuredSchedule): Pick<ModeResult, 'issueCost'> {
  const opsPerRep = issuedOpCount(m.schedule);
  return opsPerRep && m.hostIssueMs.length
    ? { issueCost: { opsPerRep, hostUsPerOp: (summarize(m.hostIssueMs).median * 1000) / opsPerRep } }
    : {};
}

/**
 * Speedup, bound and efficiency of one overlapped mode, from the other modes of its device: serial for the speedup,
 * the model's parts (stages alone, the link at its best, small ops, the kernels chunked as this layout) for the bound.
 */
export function overlapAnalysis(
  mode: ModeResult,
  schedule: Schedule,
  modes: readonly ModeResult[],
  facts: PipelineFacts,
): OverlapAnalysis | null {
  if (mode.role.kind !== 'overlapped') return null;
  const serial = modes.find((m) => m.device === mode.device && m.role.kind === 'serial');
  const layout = mode.role.layout;
  const own = schedule.streams.filter((s) => s.id !== 'legacy');
  const analysed = modelAnalysis(
    mode,
    modes,
    facts,
    SMALL_OP_BATCH,
    streamFacts({ kinds: own.map((s) => s.kind), legacyOp: layout.legacyOp !== undefined }, facts.buffers),
  );
  if (!serial || !analysed) return null;
  return analysisOf(mode, serial, analysed, modes, facts.copyEngines, schedule.ranges[0]?.count ?? 0);
}

/**
 * An overlapped mode's analysis from the model's: its speedup over serial, and its efficiency against the bound that
 * applies (a kind's term where it binds). `run` makes it from the schedule, `report` from the Result's own facts.
 */
export function analysisOf(
  mode: ModeResult,
  serial: ModeResult,
  analysed: { bound: Bound; model: ModelAnalysis },
  modes: readonly ModeResult[],
  copyEngines: number,
  chunkElements: number,
): OverlapAnalysis {
  const { bound, model } = analysed;
  const serialMs = serial.stats.median;
  const speedup = serialMs / mode.stats.median;
  const link = modes.find((m) => m.device === mode.device && m.role.kind === 'link');
  return {
    serialMs,
    speedup,
    // One sample says nothing about spread; JSON cannot carry the Infinity that the formula would give.
    speedupError:
      serial.stats.n > 1 && mode.stats.n > 1
        ? speedup * Math.hypot(relativeMedianError(serial.stats), relativeMedianError(mode.stats))
        : null,
    bound: {
      ms: bound.ms,
      limitedBy: bound.term,
      steadyMs: bound.steadyMs,
      fillDrainMs: bound.fillDrainMs,
      terms: bound.terms.map((t) => ({ ...t })),
      copyEngines,
      // The link's fastest rep, as the bound took it.
      linkGbPerSecond: link ? gbPerSecond(link.bytes.h2d + link.bytes.d2h, link.stats.min) : null,
    },
    efficiency: bound.ms / mode.stats.median,
    chunkElements,
    model,
  };
}

/** The sections of a run over several devices, absent from one device's. */
function devicesSections(
  input: RunResultInput,
  modes: readonly ModeResult[],
): Pick<RunResult, 'peers' | 'scaling' | 'crossDevice'> {
  const split = input.measured.find((m) => isSplitTogether(m.schedule.role));
  const scaling = scalingOf(modes, { gated: input.gate, issuedOps: split ? scheduleOps(split.schedule).length : 0 });
  const crossDevice = crossDeviceOf(modes, input.peers ?? []);
  return {
    ...(input.peers?.length ? { peers: [...input.peers] } : {}),
    ...(scaling ? { scaling } : {}),
    ...(crossDevice ? { crossDevice } : {}),
  };
}

export function buildRunResult(input: RunResultInput): RunResult {
  const { plan, config } = input;
  const kernelBytes = kernelRangeBytes(plan);
  const plain = input.measured.map((m) => modeResult(m, kernelBytes));
  const deviceFacts = (index: number) => {
    const facts = input.devices.find((d) => d.index === index);
    if (!facts) throw new Error(`mode on device ${index}, which the run did not describe`);
    return facts;
  };
  const modes = plain.map((mode, i) => ({
    ...mode,
    analysis: overlapAnalysis(mode, (input.measured[i] as MeasuredSchedule).schedule, plain, {
      buffers: plan.buffers.map((b) => ({ role: b.role, hostMemory: b.hostMemory })),
      kernels: plan.kernels.length,
      copyEngines: deviceFacts(mode.device).asyncEngineCount,
      gated: input.gate,
      maxChunks: chunkUnits(plan.pipeline.elements, plan.pipeline.align),
      items: plan.pipeline.items ?? plan.pipeline.elements,
    }),
  }));
  const headline = modes.find((m) => m.analysis !== null);
  if (!headline?.analysis) throw new Error(`plan ${plan.name} measured no overlapped mode with a serial baseline`);
  // Clocks only matter while kernels run: copy-only modes leave the SMs idle and their clock low.
  const clockReadings = modes
    .filter((m) => m.role.kind !== 'link' && !(m.role.kind === 'stage' && m.role.stage !== 'kernel'))
    .flatMap((m) => (m.smClockMHz ? [m.smClockMHz.min, m.smClockMHz.max] : []));
  const withoutWarnings: Omit<RunResult, 'warnings'> = {
    schema: RESULT_SCHEMA_ID,
    version: RESULT_VERSION,
    tool: { name: 'cuda-pipe', version: input.toolVersion },
    createdAt: input.createdAt ?? new Date().toISOString(),
    run: input.run,
    environment: { node: process.version, platform: `${process.platform}-${process.arch}`, software: input.software },
    devices: [...input.devices],
    config: { name: config.name, path: config.path, hash: input.configHash, resolved: input.rawConfig },
    pipeline: { ...plan.pipeline },
    buffers: plan.buffers.map((b) => ({
      name: b.name,
      type: b.type,
      elements: b.elements,
      bytes: b.bytes,
      role: b.role,
      hostMemory: b.role === 'scratch' ? 'device-only' : b.hostMemory,
      ...(b.itemSize === 1 ? {} : { itemSize: b.itemSize }),
    })),
    kernels: plan.kernels.map((k) => {
      const compile = input.compiles.find((c) => c.label === k.label);
      return {
        label: k.label,
        entry: k.entry,
        source: k.sourcePath,
        block: k.block,
        grid: k.grid,
        compile: {
          cached: compile?.cached ?? false,
          ms: compile?.ms ?? 0,
          arch: compile?.arch ?? '',
          nvrtc: compile?.nvrtc ?? '',
        },
      };
    }),
    policy: { ...input.policy, gate: input.gate },
    clocks: {
      ...(input.clockUnavailable === null
        ? {
            checked: true,
            note: 'SM clock read through NVML between reps',
            minMHz: range(clockReadings)?.min ?? null,
            maxMHz: range(clockReadings)?.max ?? null,
          }
        : { checked: false, note: `not checked: ${input.clockUnavailable}`, minMHz: null, maxMHz: null }),
      sharing: input.sharing ?? SHARING_NOT_CHECKED,
    },
    modes,
    summary: summaryOf(headline, headline.analysis),
    ...(input.deviceMemory
      ? {
          deviceMemory: {
            budgetBytes: plan.device.budgetBytes,
            ...input.deviceMemory,
            ring: plan.device.ring ? { ...plan.device.ring } : null,
          },
        }
      : {}),
    timeline: input.traced.length ? { reps: [...input.traced] } : null,
    ...devicesSections(input, modes),
    sweep: input.sweep ?? null,
    verification: {
      status: input.verification.status,
      mismatches: input.verification.mismatches,
      ...(input.verification.tolerance ? { tolerance: input.verification.tolerance } : {}),
      ...(input.verification.reduction
        ? { reduction: { ...input.verification.reduction, buffers: [...input.verification.reduction.buffers] } }
        : {}),
      ...(input.verification.against ? { against: input.verification.against } : {}),
    },
    notes: [...plan.notes],
  };
  return { ...withoutWarnings, warnings: runWarnings(withoutWarnings) };
}
