import { configHash } from '../../src/config/hash.js';
import { parseConfigText } from '../../src/config/load.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { DEFAULT_POLICY } from '../../src/measure/policy.js';
import type { MeasuredSchedule } from '../../src/measure/repeat.js';
import { buildRunResult } from '../../src/measure/result.js';
import { buildPlan } from '../../src/plan/build.js';
import type { DeviceFacts } from '../../src/result/environment.js';
import type { RunResult } from '../../src/result/schema.js';
import type { ModeRole } from '../../src/vocabulary.js';

export const H100: DeviceFacts = {
  index: 0,
  name: 'NVIDIA H100 80GB HBM3',
  uuid: 'GPU-94a24674-216b-7fc3-2ae4-6604017eb083',
  computeCapability: { major: 9, minor: 0 },
  multiprocessors: 132,
  maxThreadsPerMultiprocessor: 2048,
  memoryBytes: 85_021_163_520,
  l2CacheBytes: 52_428_800,
  asyncEngineCount: 3,
  concurrentKernels: true,
  gpuOverlap: true,
  unifiedAddressing: true,
  canMapHostMemory: true,
  integrated: false,
  streamPriority: { least: 0, greatest: -5 },
  pciBusId: '00000000:00:06.0',
  pcie: { generation: 5, width: 16, maxGeneration: 5, maxWidth: 16, speed: '32.0 GT/s PCIe' },
};

const CONFIG = (iterations: number) => `name: balanced
buffers:
  input: { type: float32, size: 256MiB, role: in }
  output: { type: float32, size: 256MiB, role: out }
kernels:
  - { name: fma, source: fma_loop.cu, entry: fma_loop, args: [{ buffer: input }, { buffer: output }, { chunk: elements }, { int32: ${iterations} }] }
pipeline: { chunks: 32, streams: 4 }
`;

/** Deterministic samples around `median` with relative spread `noise` (no randomness: tests must not flap). */
export function samplesAround(median: number, noise: number, n = 30): number[] {
  return Array.from({ length: n }, (_, i) => median * (1 + noise * Math.sin(i * 2.399963 + 0.5)));
}

/** Medians of the balanced config on the reference H100, by what the mode is. */
function medianOf(role: ModeRole): number {
  switch (role.kind) {
    case 'serial':
      return 12.6;
    case 'overlapped':
      return 5.94;
    case 'stage':
      return role.stage === 'kernel' ? 2.85 : role.stage === 'h2d' ? 4.86 : 4.87;
    case 'link':
      return 5.39;
    case 'kernels-chunked':
      return 2.8;
    case 'op-cost':
      return role.op === 'launch' ? 0.6 : role.op === 'h2d' ? 0.65 : 0.45;
    case 'issue-cost':
      return 0.004;
    case 'latency':
      return 6.1;
    case 'split':
      return role.alone === undefined ? 3.1 : 3.0;
    case 'split-link':
      return role.alone === undefined ? 3.3 : 2.72;
    case 'cross-device':
      return 3.4;
    case 'peer':
      return 0.35;
  }
}

/** A Result built by the real builder from chosen per-mode medians and noise. */
export function makeResult(
  options: {
    scale?: number;
    noise?: number;
    device?: DeviceFacts;
    iterations?: number;
    samples?: number;
    hostIssueMs?: number[];
  } = {},
): RunResult {
  const { scale = 1, noise = 0.01, device = H100, iterations = 1060, samples = 30, hostIssueMs } = options;
  const { config, locate, raw } = parseConfigText(CONFIG(iterations), '/configs/balanced.yaml');
  const plan = buildPlan(config, resolveKernels(config, locate));
  const measured: MeasuredSchedule[] = plan.schedules.map((schedule) => ({
    schedule,
    gpuMs: samplesAround(medianOf(schedule.role) * scale, noise, samples),
    hostIssueMs: hostIssueMs ?? samplesAround(0.3, 0.05),
    stoppedBy: 'noise-stable',
    elapsedMs: 200,
    smClockMHz: [1980],
    gateTimeouts: 0,
  }));
  return buildRunResult({
    toolVersion: '0.1.0',
    run: { hostname: 'gpu-host', rank: null, localRank: null, size: null, jobId: null, launcher: null },
    config,
    configHash: configHash(config),
    rawConfig: raw,
    plan,
    devices: [device],
    traced: [],
    createdAt: '2026-11-22T12:00:00.000Z',
    software: {
      driver: '13.0',
      runtime: '13.0',
      nvrtc: '13.0',
      nvrtcArchitectures: [],
      cudartPath: 'libcudart.so.13',
      nvrtcPath: null,
    },
    compiles: [{ label: 'fma', cached: true, ms: 1.5, arch: 'sm_90', nvrtc: '13.0' }],
    policy: DEFAULT_POLICY,
    gate: false,
    clockUnavailable: null,
    measured,
    verification: { status: 'passed', mismatches: [] },
  });
}
