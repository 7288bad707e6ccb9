import { totalmem } from 'node:os';
import { EnvironmentError, UsageError } from '../errors.js';
import { resolveDevices } from '../config/devices.js';
import { openRuntime, runtimeLoaded } from '../cuda/runtime.js';
import { formatBytes } from '../format.js';
import type { LoadedConfig } from '../config/types.js';
import { resolveKernels, type ResolvedKernel } from '../kernels/resolve.js';
import type { RepGuard } from '../measure/guard.js';
import { measureSchedules } from '../measure/repeat.js';
import { buildRunResult } from '../measure/result.js';
import { kernelRangeBytes, timelineReps } from '../measure/timeline.js';
import { buildPlan } from '../plan/build.js';
import { ALONE, type RepRunner, type TracedRepTiming } from '../measure/runner.js';
import type { Plan, Schedule } from '../plan/types.js';
import type { RunResult } from '../result/schema.js';
import type { TracedRep } from '../result/timeline.js';
import { isPictured } from '../modes.js';
import { resultBasics, type SessionOptions, withSession } from './session.js';

/** A session's options, and what only `run` does: the gate, and the traced reps. */
export interface RunOptions extends SessionOptions {
  /** Hold each rep behind a gate kernel until it is issued: times exclude host issue cost. */
  readonly gate: boolean;
  /** Record a traced rep of every overlapped mode for the timeline, when that costs under 5% of the run. */
  readonly trace: boolean;
}

/** The most of a run's wall time that the traced reps may add before tracing is skipped (and the run says so). */
const TRACE_BUDGET = 0.05;

/**
 * Host buffers larger than the machine's memory are a config error, said before anything is allocated: page-locked
 * memory cannot be swapped, and a failed allocation of tens of GiB says nothing about the config.
 */
export function checkHostMemory(loaded: LoadedConfig, totalBytes: number): void {
  const host = loaded.config.buffers.filter((b) => b.role !== 'scratch');
  const bytes = host.reduce((sum, b) => sum + b.bytes, 0);
  if (bytes <= totalBytes) return;
  throw new UsageError(
    `${loaded.locate(['buffers'])}: the buffers need ${formatBytes(bytes)} of host memory ` +
      `(${host.map((b) => `${b.name} ${formatBytes(b.bytes)}`).join(', ')}), more than this machine's ${formatBytes(totalBytes)}.`,
    {
      hint: 'Use smaller buffers; a deviceMemory budget bounds the device side, not the host side.',
    },
  );
}

/**
 * The devices a config runs on: its list (checked against the machine's where a driver can count them), or with
 * `devices: all` every device this machine has, which needs the driver even for a dry run; null for one device.
 */
export function configDevices(
  loaded: LoadedConfig,
  count: () => number = () => openRuntime().deviceCount(),
): readonly number[] | null {
  const { devices, pipeline } = loaded.config;
  if (devices === null) return null;
  const where = loaded.locate(['devices']);
  let counted: number;
  try {
    counted = count();
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    if (devices !== 'all') return devices;
    // The config is fine; the machine cannot count its devices: an environment problem (3), not a usage error.
    throw new EnvironmentError(
      `${where}: devices: all is counted through the CUDA driver, which is not usable here (${error.message.split('\n')[0]}).`,
      {
        hint: 'List the devices instead, e.g. --devices 0,1, to plan without a GPU.',
        cause: error,
      },
    );
  }
  return resolveDevices(devices, pipeline.handoff, counted, where);
}

/** A config's kernels found and checked, and its plan: everything `run` does before it needs a GPU. */
export function planConfig(
  loaded: LoadedConfig,
  options: { gate: boolean; devices?: readonly number[] | null },
): { plan: Plan; kernels: ResolvedKernel[] } {
  checkHostMemory(loaded, totalmem());
  const kernels = resolveKernels(loaded.config, loaded.locate);
  return { plan: buildPlan(loaded.config, kernels, options), kernels };
}

/**
 * A traced rep, or for a graph replay a note when the driver would not time the events captured as graph nodes:
 * the timeline is a picture of the run, never a reason to lose its measurements.
 */
async function traceOrSayWhy(
  guard: RepGuard,
  runner: RepRunner,
  schedule: Schedule,
  notes: string[],
): Promise<TracedRepTiming | null> {
  if (schedule.issue !== 'graph') return guard.trace(runner, schedule);
  try {
    return await guard.trace(runner, schedule);
  } catch (error) {
    notes.push(`No timeline for ${schedule.description}: ${(error as Error).message.split('\n')[0]}`);
    return null;
  }
}

/**
 * The variable the CUDA driver reads for how many hardware work queues it spreads a process's streams over (8 unset).
 */
const CONNECTIONS_VARIABLE = 'CUDA_DEVICE_MAX_CONNECTIONS';

/**
 * pipeline.connections as CUDA_DEVICE_MAX_CONNECTIONS, before this process starts CUDA (`started`: libcudart is
 * loaded): the driver reads it once, so a value it would not see (a sweep's or ab's other config) is refused rather
 * than measured under the one it has.
 */
export function applyConnections(
  loaded: LoadedConfig,
  env: NodeJS.ProcessEnv = process.env,
  started = runtimeLoaded(),
): void {
  const { connections } = loaded.config.pipeline;
  if (connections === null || env[CONNECTIONS_VARIABLE] === String(connections)) return;
  if (!started) {
    env[CONNECTIONS_VARIABLE] = String(connections);
    return;
  }
  throw new UsageError(
    `${loaded.locate(['pipeline', 'connections'])}: connections ${connections} cannot take effect: CUDA already started in this process with ${CONNECTIONS_VARIABLE}=${env[CONNECTIONS_VARIABLE] ?? 'unset (8)'}, and reads it once.`,
    { hint: 'Measure each value of pipeline.connections in a cuda-pipe process of its own.' },
  );
}

/**
 * Configs measured in one process must agree on the hardware queues they run with (`what` names them in the message):
 * pipeline.connections where set, else what the environment gives CUDA (its CUDA_DEVICE_MAX_CONNECTIONS, unset: 8).
 * A config that sets 1 and one that leaves it unset under CUDA_DEVICE_MAX_CONNECTIONS=1 agree.
 */
export function checkOneConnections(
  loads: readonly LoadedConfig[],
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const inherited = env[CONNECTIONS_VARIABLE];
  const effective = (connections: number | null) =>
    connections === null ? (inherited ?? String(CUDA_DEFAULT_CONNECTIONS)) : String(connections);
  const values = [...new Set(loads.map((l) => l.config.pipeline.connections))];
  if (new Set(values.map(effective)).size <= 1) return;
  const shown = (v: number | null) =>
    v === null
      ? `unset (${inherited === undefined ? `CUDA's ${CUDA_DEFAULT_CONNECTIONS}` : `${CONNECTIONS_VARIABLE}=${inherited}`})`
      : String(v);
  throw new UsageError(
    `${what} ask for pipeline.connections ${values.map(shown).join(' and ')}, but one process has one ${CONNECTIONS_VARIABLE}: CUDA reads it once, when it starts.`,
    { hint: 'Measure each value in a cuda-pipe process of its own.' },
  );
}

/** The hardware queues CUDA uses where CUDA_DEVICE_MAX_CONNECTIONS is unset. */
const CUDA_DEFAULT_CONNECTIONS = 8;

/** Runs a config on its device: verification, every mode measured, traced reps, and the Result. */
export async function runConfig(loaded: LoadedConfig, options: RunOptions): Promise<RunResult> {
  applyConnections(loaded);
  const devices = configDevices(loaded);
  const { plan, kernels } = planConfig(loaded, { gate: options.gate, devices });
  const notes =
    devices?.length === 1
      ? [`devices: all found one device here, so this is a one-device run on device ${devices[0]}.`]
      : [];
  const started = performance.now();
  const outcome = await withSession(loaded, plan, kernels, options, async ({ runner, context, guard, policy }) => {
    const measured = await measureSchedules(runner, policy, { smClock: context.smClock, guard });
    const reps: TracedRep[] = [];
    const notes: string[] = [];
    if (options.trace) {
      const wallMs = performance.now() - started;
      const pictured = measured.filter((x) => isPictured(x.schedule.role));
      const costs = pictured.map((m) => m.gpuMs.reduce((longest, ms) => Math.max(longest, ms), 0));
      // Every rank of a launch traces the same modes, or a traced rep's collectives would have no partner.
      const skip = await (runner.agreement ?? ALONE).any(
        costs.map((cost) => cost > TRACE_BUDGET * wallMs),
        'which modes get a traced rep',
      );
      for (const [index, m] of pictured.entries()) {
        const cost = costs[index] ?? 0;
        if (skip[index]) {
          notes.push(
            `No timeline for ${m.schedule.description}: a traced rep (about ${cost.toFixed(1)} ms) would add over ${TRACE_BUDGET * 100}% to this run.`,
          );
          continue;
        }
        runner.restoreInputs();
        const timed = await traceOrSayWhy(guard, runner, m.schedule, notes);
        if (timed) reps.push(...timelineReps(timed, kernelRangeBytes(plan), () => context.device.streamPriority));
      }
    }
    return { measured, traced: reps, notes };
  });
  const { verification, measured } = outcome.value;
  const result = buildRunResult({
    ...resultBasics(loaded, plan, outcome, options.gate),
    devices: outcome.devices,
    peers: outcome.peers,
    sharing: outcome.sharing,
    measured: measured.measured,
    verification,
    traced: measured.traced,
    deviceMemory: { askedBytes: outcome.memory.askedBytes, measuredBytes: outcome.memory.measuredBytes },
  });
  return {
    ...result,
    ...outcome.kinds.sections,
    notes: [...result.notes, ...notes, ...measured.notes, ...outcome.kinds.notes],
  };
}
