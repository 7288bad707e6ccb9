import { hostname } from 'node:os';
import { logRatios, pairedEstimate, type PairedEstimate, pairedMeasured } from '../compare/paired.js';
import {
  confirmWithClocks,
  judge,
  overallVerdict,
  pairedBandFor,
  type VerdictRule,
  verdictReason,
} from '../compare/rule.js';
import { isGating, runsKernels } from '../compare/verdict.js';
import { configHash } from '../config/hash.js';
import type { LoadedConfig } from '../config/types.js';
import { UsageError } from '../errors.js';
import { withDevicePlan } from '../exec/open.js';
import type { WaitStrategy } from '../exec/wait.js';
import { RepGuard } from '../measure/guard.js';
import { policyFromConfig } from '../measure/policy.js';
import { verifySchedules, type Verification } from '../measure/repeat.js';
import type { RepRunner } from '../measure/runner.js';
import { summarize } from '../measure/stats.js';
import { packageVersion } from '../paths.js';
import type { Schedule } from '../plan/types.js';
import { AB_SCHEMA_ID, AB_VERSION, type AbMode, type AbResult } from '../result/ab.js';
import { sameRole } from '../vocabulary.js';
import { runIdentity } from './identity.js';
import { applyConnections, checkOneConnections, configDevices, planConfig } from './run.js';

export interface AbOptions {
  readonly verify: boolean;
  readonly gate: boolean;
  readonly wait: WaitStrategy;
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs?: number | undefined;
  /** Each mode's budget for its interleaved reps: a mode still `noisy` stops here. */
  readonly maxTimeMs: number;
  /** Pairs before the rule may stop a mode. */
  readonly minPairs: number;
  /** The one rule (compare/rule.ts' `pairedRule`): its band and confidence. */
  readonly rule: VerdictRule;
  readonly onMeasuring?: (() => void) | undefined;
}

/** One mode of A and its twin in B, each with the runner and guard of its side. */
export interface InterleavedSides {
  readonly a: { readonly runner: RepRunner; readonly guard: RepGuard; readonly schedule: Schedule };
  readonly b: { readonly runner: RepRunner; readonly guard: RepGuard; readonly schedule: Schedule };
}

export interface InterleaveOptions {
  readonly warmup: number;
  readonly minPairs: number;
  readonly maxPairs: number;
  readonly maxTimeMs: number;
  readonly rule: VerdictRule;
  /** Reads the SM clock after a rep; undefined (or null readings) where NVML is not available. */
  readonly smClock?: (() => number | null) | undefined;
}

/**
 * Interleaves one mode's reps of A and B until the rule decides (`slower`, `faster` or `same`), after `minPairs`, or
 * the budget runs out and the mode stays `noisy`. Looking after every pair makes a wrong verdict somewhat likelier
 * than one look at the 90% interval would; the budget bounds the looks.
 * Each pair runs back to back, alternating which side goes first (A B, B A, A B, …) so that whatever a rep leaves
 * behind for the next (a warm cache, a clock that rose) favours neither side.
 */
export async function interleaveMode(sides: InterleavedSides, options: InterleaveOptions): Promise<AbMode> {
  const rep = async (side: InterleavedSides['a']) => {
    side.runner.restoreInputs();
    return (await side.guard.rep(side.runner, side.schedule)).gpuMs;
  };
  for (let i = 0; i < options.warmup; i++) {
    await rep(sides.a);
    await rep(sides.b);
  }
  const times = { a: [] as number[], b: [] as number[] };
  const clocks = { a: [] as number[], b: [] as number[] };
  const timed = async (key: 'a' | 'b') => {
    times[key].push(await rep(sides[key]));
    const clock = options.smClock?.();
    if (clock) clocks[key].push(clock);
  };
  const withClocks = runsKernels(sides.a.schedule.role) && options.smClock !== undefined;
  const rule = { ...options.rule, band: pairedBandFor(options.rule, runsKernels(sides.a.schedule.role)) };
  const judgePairs = () => {
    const time = pairedEstimate(logRatios(times.a, times.b), rule.confidence);
    const full = withClocks && clocks.a.length === times.a.length && clocks.b.length === times.b.length;
    const cycles = full
      ? pairedEstimate(logRatios(cyclesOf(times.a, clocks.a), cyclesOf(times.b, clocks.b)), rule.confidence)
      : null;
    const measured = pairedMeasured(time, rule.confidence);
    const inTime = judge(measured, rule);
    // Cycles are judged by the same band: clock readings that scatter widen the interval (so more pairs, or noisy).
    const inCycles = cycles && judge(pairedMeasured(cycles, rule.confidence), rule);
    const confirmed = confirmWithClocks(inTime, inCycles);
    const reason =
      confirmed.verdict === inTime
        ? verdictReason(measured, rule, inTime)
        : `${verdictReason(measured, rule, inTime)} in time, ${inCycles} in clock-normalised time`;
    return { time, cycles, ...confirmed, reason };
  };
  const start = performance.now();
  for (let pair = 0; ; pair++) {
    for (const key of pair % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) await timed(key);
    const n = pair + 1;
    if (n < options.minPairs) continue;
    const judged = judgePairs();
    const elapsedMs = performance.now() - start;
    const stoppedBy =
      judged.verdict !== 'noisy'
        ? 'decided'
        : n >= options.maxPairs
          ? 'max-reps'
          : elapsedMs >= options.maxTimeMs
            ? 'max-time'
            : null;
    if (stoppedBy === null) continue;
    const { schedule } = sides.a;
    return {
      id: schedule.id,
      role: schedule.role,
      gating: isGating(schedule.role),
      aMs: times.a,
      bMs: times.b,
      a: summarize(times.a),
      b: summarize(times.b),
      time: ratioRecord(judged.time),
      cycles: judged.cycles && ratioRecord(judged.cycles),
      needed: rule.band,
      change: judged.time.ratio - 1,
      verdict: judged.verdict,
      reason: judged.reason,
      clocksExplain: judged.clocksExplain,
      stoppedBy,
      elapsedMs,
    };
  }
}

const cyclesOf = (ms: readonly number[], mhz: readonly number[]) => ms.map((t, i) => t * (mhz[i] as number));
const ratioRecord = (e: PairedEstimate) => ({ ratio: e.ratio, low: e.low, high: e.high, noise: e.noise });

/**
 * The modes `ab` interleaves: the ones a user acts on (serial, each overlapped layout, each stage alone, the link),
 * paired by role; the model's parts and host issue costs are not interleaved.
 */
export function pairSchedules(
  a: readonly Schedule[],
  b: readonly Schedule[],
): { pairs: Array<[Schedule, Schedule]>; unpaired: string[] } {
  const pairs: Array<[Schedule, Schedule]> = [];
  const unpaired: string[] = [];
  for (const sa of a.filter((s) => isGating(s.role))) {
    const sb = b.find((s) => sameRole(s.role, sa.role));
    if (sb) pairs.push([sa, sb]);
    else unpaired.push(`${sa.id}: in A only`);
  }
  for (const sb of b.filter((s) => isGating(s.role) && !a.some((sa) => sameRole(sa.role, s.role))))
    unpaired.push(`${sb.id}: in B only`);
  return { pairs, unpaired };
}

/** `ab` runs on one GPU: a config over several devices is a usage error. */
function oneDevice(loaded: LoadedConfig): readonly number[] | null {
  const devices = configDevices(loaded);
  if (devices !== null && devices.length > 1) {
    throw new UsageError(
      `${loaded.locate(['devices'])}: ${loaded.config.name} spans ${devices.length} devices; ab interleaves two pipelines on one GPU.`,
      {
        hint: 'Compare configs over several devices with two runs and `cuda-pipe compare`.',
      },
    );
  }
  return devices;
}

/**
 * Plans, compiles and allocates both pipelines once, on one GPU in one process, verifies each, then interleaves
 * the reps of each mode they share and judges B against A, pair by pair.
 */
export async function runAb(a: LoadedConfig, b: LoadedConfig, options: AbOptions): Promise<AbResult> {
  checkOneConnections([a, b], `A (${a.config.name}) and B (${b.config.name})`);
  applyConnections(a);
  const planned = [a, b].map((loaded) => planConfig(loaded, { gate: options.gate, devices: oneDevice(loaded) })) as [
    ReturnType<typeof planConfig>,
    ReturnType<typeof planConfig>,
  ];
  const [deviceA, deviceB] = planned.map((p) => p.plan.devices[0]);
  if (deviceA !== deviceB) {
    throw new UsageError(
      `A runs on device ${deviceA} and B on device ${deviceB}; ab interleaves both on one GPU, so that they share its state.`,
      {
        hint: 'Give both the same device (--device sets it for both).',
      },
    );
  }
  const { pairs, unpaired } = pairSchedules(planned[0].plan.schedules, planned[1].plan.schedules);
  if (!pairs.length)
    throw new UsageError(
      `A (${a.config.name}) and B (${b.config.name}) share no mode to interleave (${unpaired.join('; ')}).`,
    );
  const policy = policyFromConfig(a.config.repetitions);
  const guardOptions = { signal: options.signal, timeoutMs: options.timeoutMs };
  const outer = await withDevicePlan(
    planned[0].plan,
    planned[0].kernels,
    { wait: options.wait },
    async (runnerA, context) =>
      withDevicePlan(planned[1].plan, planned[1].kernels, { wait: options.wait }, async (runnerB) => {
        const guards = { a: new RepGuard(guardOptions), b: new RepGuard(guardOptions) };
        options.onMeasuring?.();
        const verification: [Verification, Verification] = [
          await verifySchedules(runnerA, options.verify, guards.a, a.config.tolerance),
          await verifySchedules(runnerB, options.verify, guards.b, b.config.tolerance),
        ];
        const modes: AbMode[] = [];
        for (const [sa, sb] of pairs) {
          modes.push(
            await interleaveMode(
              {
                a: { runner: runnerA, guard: guards.a, schedule: sa },
                b: { runner: runnerB, guard: guards.b, schedule: sb },
              },
              {
                warmup: policy.warmup,
                minPairs: options.minPairs,
                maxPairs: policy.maxReps,
                maxTimeMs: options.maxTimeMs,
                rule: options.rule,
                smClock: context.smClock,
              },
            ),
          );
        }
        return { verification, modes };
      }),
  );
  const inner = outer.value;
  const { verification, modes } = inner.value;
  const side = (loaded: LoadedConfig, v: Verification) => ({
    name: loaded.config.name,
    path: loaded.config.path ?? null,
    hash: configHash(loaded.config),
    verification: v,
  });
  const notes = modes
    .filter((m) => m.stoppedBy !== 'decided')
    .map(
      (m) =>
        `${m.id}: noisy after ${m.aMs.length} pairs (${(m.elapsedMs / 1000).toFixed(1)} s): a larger --max-time gives it more pairs, a quieter host a narrower interval.`,
    );
  return {
    schema: AB_SCHEMA_ID,
    version: AB_VERSION,
    tool: { name: 'cuda-pipe', version: packageVersion() },
    createdAt: new Date().toISOString(),
    run: runIdentity(process.env, hostname()),
    device: outer.device,
    software: inner.software,
    a: side(a, verification[0]),
    b: side(b, verification[1]),
    rule: {
      ...options.rule,
      minPairs: options.minPairs,
      maxPairs: policy.maxReps,
      maxTimeMs: options.maxTimeMs,
      warmup: policy.warmup,
    },
    verdict: overallVerdict(modes.filter((m) => m.gating).map((m) => m.verdict)),
    gate: options.gate,
    clocks:
      outer.clockUnavailable === null
        ? {
            checked: true,
            note: 'SM clock read through NVML after each rep; verdicts of modes that run kernels confirmed in clock-normalised time',
          }
        : { checked: false, note: `not checked: ${outer.clockUnavailable}` },
    modes,
    unpaired,
    notes,
  };
}
