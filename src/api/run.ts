import { hostname } from 'node:os';
import { configHash, type LoadedConfig } from '../config/load.js';
import { withDevicePlan } from '../exec/open.js';
import type { WaitStrategy } from '../exec/wait.js';
import { resolveKernels, type ResolvedKernel } from '../kernels/resolve.js';
import { RepGuard } from '../measure/guard.js';
import { policyFromConfig } from '../measure/policy.js';
import { measureSchedules, verifySchedules } from '../measure/repeat.js';
import { buildRunResult } from '../measure/result.js';
import { timelineRep } from '../measure/timeline.js';
import { packageVersion } from '../paths.js';
import { buildPlan } from '../plan/build.js';
import type { Plan } from '../plan/types.js';
import type { RunResult, TracedRep } from '../result/schema.js';
import { runIdentity } from './identity.js';

export interface RunOptions {
  /** Compare every overlapped mode's outputs with serial's, byte for byte. */
  readonly verify: boolean;
  /** Hold each rep behind a gate kernel until it is issued: times exclude host issue cost. */
  readonly gate: boolean;
  /** Record a traced rep of every overlapped mode for the timeline, when that costs under 5% of the run. */
  readonly trace: boolean;
  readonly wait: WaitStrategy;
  /** Ctrl-C: stops at the next rep boundary with an Interrupted error. */
  readonly signal?: AbortSignal | undefined;
  /** The longest wait for a rep of a mode not yet timed, ms (later reps: 20 times the slowest seen). */
  readonly timeoutMs?: number | undefined;
  /** Called once the device is ready and the first rep is about to be issued. */
  readonly onMeasuring?: (() => void) | undefined;
}

/** The most of a run's wall time that the traced reps may add before tracing is skipped (and the run says so). */
const TRACE_BUDGET = 0.05;

/** A config's kernels found and checked, and its plan: everything `run` does before it needs a GPU. */
export function planConfig(loaded: LoadedConfig, options: { gate: boolean }): { plan: Plan; kernels: ResolvedKernel[] } {
  const kernels = resolveKernels(loaded.config, loaded.locate);
  return { plan: buildPlan(loaded.config, kernels, { gate: options.gate }), kernels };
}

/** Runs a config on its device: verification, every mode measured, traced reps, and the Result. */
export async function runConfig(loaded: LoadedConfig, options: RunOptions): Promise<RunResult> {
  const { config } = loaded;
  const { plan, kernels } = planConfig(loaded, options);
  const policy = policyFromConfig(config.repetitions);
  const started = performance.now();
  // A kernel's bytes on the timeline: one element of every buffer it is given, per element of its range.
  const kernelElementBytes = new Map(plan.kernels.map((k) => [k.label, k.args.reduce((sum, arg) =>
    sum + (arg.kind === 'buffer' ? (plan.buffers.find((b) => b.name === arg.buffer)?.elementBytes ?? 0) : 0), 0)]));
  const outcome = await withDevicePlan(plan, kernels, { wait: options.wait }, async (runner, context) => {
    const guard = new RepGuard({ signal: options.signal, timeoutMs: options.timeoutMs });
    options.onMeasuring?.();
    const verification = await verifySchedules(runner, options.verify, guard);
    const measured = await measureSchedules(runner, policy, { smClock: context.smClock, guard });
    const traced: TracedRep[] = [];
    const notes: string[] = [];
    if (options.trace) {
      const wallMs = performance.now() - started;
      for (const m of measured.filter((x) => x.schedule.role.kind === 'overlapped')) {
        const cost = Math.max(...m.gpuMs);
        if (cost > TRACE_BUDGET * wallMs) {
          notes.push(`No timeline for ${m.schedule.description}: a traced rep (about ${cost.toFixed(1)} ms) would add over ${TRACE_BUDGET * 100}% to this run.`);
          continue;
        }
        runner.restoreInputs();
        traced.push(timelineRep(await guard.trace(runner, m.schedule), (op) => op.count * (kernelElementBytes.get(op.kernel) ?? 0)));
      }
    }
    return { verification, measured, traced, notes };
  });
  const result = buildRunResult({
    toolVersion: packageVersion(), run: runIdentity(process.env, hostname()), config, configHash: configHash(config), rawConfig: loaded.raw, plan,
    devices: [outcome.device], software: outcome.software, compiles: outcome.compiles, policy, gate: options.gate,
    clockUnavailable: outcome.clockUnavailable, sharing: outcome.sharing, measured: outcome.value.measured, verification: outcome.value.verification, traced: outcome.value.traced,
  });
  return { ...result, notes: [...result.notes, ...outcome.value.notes] };
}
