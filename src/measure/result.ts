import { hostname } from 'node:os';
import type { Config } from '../config/load.js';
import type { Plan } from '../plan/types.js';
import { RESULT_SCHEMA_ID, RESULT_VERSION, type DeviceFacts, type ModeResult, type RunResult, type SoftwareVersions } from '../result.js';
import { gbPerSecond } from '../report/format.js';
import { pipelineBound } from './bound.js';
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
  readonly config: Config;
  readonly configHash: string;
  readonly rawConfig: unknown;
  readonly plan: Plan;
  readonly device: DeviceFacts;
  readonly software: SoftwareVersions;
  readonly compiles: readonly CompileRecord[];
  readonly policy: RepetitionPolicy;
  readonly gate: boolean;
  readonly clockUnavailable: string | null;
  readonly measured: readonly MeasuredSchedule[];
  readonly verification: Verification;
}

const range = (values: readonly number[]) => (values.length ? { min: Math.min(...values), max: Math.max(...values) } : null);

export function buildRunResult(input: RunResultInput): RunResult {
  const modes: ModeResult[] = input.measured.map((m) => ({
    id: m.schedule.id, kind: m.schedule.kind, description: m.schedule.description, bytes: m.schedule.bytes,
    samplesMs: m.gpuMs, hostIssueMs: m.hostIssueMs, stats: summarize(m.gpuMs), stoppedBy: m.stoppedBy,
    elapsedMs: m.elapsedMs, gateTimeouts: m.gateTimeouts, smClockMHz: range(m.smClockMHz),
  }));
  const mode = (id: string) => modes.find((m) => m.id === id);
  const median = (id: string) => mode(id)?.stats.median ?? 0;
  const kernelMs = modes.filter((m) => m.id.startsWith('kernel:')).reduce((sum, m) => sum + m.stats.median, 0);
  const link = modes.find((m) => m.kind === 'link');
  const bound = pipelineBound({
    h2dMs: median('h2d'), kernelMs, d2hMs: median('d2h'), linkMs: link ? link.stats.median : null,
    h2dBytes: mode('h2d')?.bytes.h2d ?? 0, d2hBytes: mode('d2h')?.bytes.d2h ?? 0,
    copyEngines: input.device.asyncEngineCount, chunks: input.plan.layout.chunks,
  });
  const serialMs = median('serial');
  const overlappedMs = median('overlapped');
  const speedup = serialMs / overlappedMs;
  const serial = mode('serial');
  const overlapped = mode('overlapped');
  // One sample says nothing about spread; JSON cannot carry the Infinity that the formula would give.
  const speedupError = serial && overlapped && serial.stats.n > 1 && overlapped.stats.n > 1
    ? speedup * Math.hypot(relativeMedianError(serial.stats), relativeMedianError(overlapped.stats))
    : null;
  // Clocks only matter while kernels run: copy-only modes leave the SMs idle and their clock low.
  const clockReadings = modes.filter((m) => m.kind !== 'link' && m.id !== 'h2d' && m.id !== 'd2h').flatMap((m) => (m.smClockMHz ? [m.smClockMHz.min, m.smClockMHz.max] : []));
  const { plan, config } = input;
  const withoutWarnings: Omit<RunResult, 'warnings'> = {
    schema: RESULT_SCHEMA_ID,
    version: RESULT_VERSION,
    tool: { name: 'cuda-pipe', version: input.toolVersion },
    createdAt: new Date().toISOString(),
    environment: { hostname: hostname(), node: process.version, platform: `${process.platform}-${process.arch}`, software: input.software, device: input.device },
    config: { name: config.name, path: config.path, hash: input.configHash, resolved: input.rawConfig },
    layout: {
      elements: plan.elements, chunks: plan.layout.chunks, requestedChunks: plan.layout.requestedChunks, streams: plan.layout.streams,
      requestedStreams: plan.layout.requestedStreams, order: plan.layout.order, orders: [...plan.layout.orders], align: plan.layout.align,
      chunkElements: plan.layout.ranges[0]?.count ?? plan.elements,
    },
    buffers: plan.buffers.map((b) => ({ name: b.name, type: b.type, elements: b.elements, bytes: b.bytes, role: b.role, hostMemory: b.role === 'scratch' ? 'device-only' : b.hostMemory })),
    kernels: plan.kernels.map((k) => {
      const compile = input.compiles.find((c) => c.label === k.label);
      return { label: k.label, entry: k.entry, source: k.sourcePath, block: k.block, grid: k.grid,
        compile: { cached: compile?.cached ?? false, ms: compile?.ms ?? 0, arch: compile?.arch ?? '', nvrtc: compile?.nvrtc ?? '' } };
    }),
    policy: { ...input.policy, gate: input.gate },
    clocks: input.clockUnavailable === null
      ? { checked: true, note: 'SM clock read through NVML between reps', minMHz: clockReadings.length ? Math.min(...clockReadings) : null, maxMHz: clockReadings.length ? Math.max(...clockReadings) : null }
      : { checked: false, note: `not checked: ${input.clockUnavailable}`, minMHz: null, maxMHz: null },
    modes,
    bound: { ms: bound.ms, limitedBy: bound.term, steadyMs: bound.steadyMs, fillDrainMs: bound.fillDrainMs,
      terms: bound.terms.map((t) => ({ ...t })), copyEngines: input.device.asyncEngineCount,
      linkGbPerSecond: link ? gbPerSecond(link.bytes.h2d + link.bytes.d2h, link.stats.median) : null },
    summary: { serialMs, overlappedMs, speedup, speedupError, efficiency: bound.ms / overlappedMs },
    verification: { status: input.verification.status, mismatches: input.verification.mismatches },
    notes: [...plan.notes],
  };
  return { ...withoutWarnings, warnings: runWarnings(withoutWarnings) };
}
