import { hostname } from 'node:os';
import { configHash } from '../config/hash.js';
import type { LoadedConfig } from '../config/types.js';
import type { KindFlagValues } from '../kinds/index.js';
import { type DeviceContext, type DeviceOutcome, withDevicePlan } from '../exec/open.js';
import type { WaitStrategy } from '../exec/wait.js';
import type { ResolvedKernel } from '../kernels/resolve.js';
import { RepGuard } from '../measure/guard.js';
import { policyFromConfig } from '../measure/policy.js';
import { type ReductionCheck, verifySchedules, type Verification } from '../measure/repeat.js';
import type { RunResultInput } from '../measure/result.js';
import type { RepRunner } from '../measure/runner.js';
import { packageVersion } from '../paths.js';
import type { Plan } from '../plan/types.js';
import { runIdentity } from './identity.js';

// What `run` and `sweep` both do with a plan and a device: open the devices, compile, allocate and release (through
// exec/open.ts), guard every rep, verify, and fill the Result's fields that do not depend on what was measured.

export interface SessionOptions {
  /** Compare every overlapped mode's outputs with serial's, byte for byte. */
  readonly verify: boolean;
  readonly wait: WaitStrategy;
  /** Ctrl-C: stops at the next rep boundary with an Interrupted error. */
  readonly signal?: AbortSignal | undefined;
  /** The longest wait for a rep of a mode not yet timed, ms (later reps: 20 times the slowest seen). */
  readonly timeoutMs?: number | undefined;
  /** Called once the device is ready and the first rep is about to be issued. */
  readonly onMeasuring?: (() => void) | undefined;
  /** Who chose the device when no flag did (a launcher's local rank), so that a missing device is blamed on it. */
  readonly deviceOrigin?: string | undefined;
  /** The values of the kinds' own flags (`KIND_FLAGS`, as the command was given them), handed to their runtimes. */
  readonly kindFlags?: KindFlagValues | undefined;
}

/** What a command's measuring gets: the runner, the device, the guard every rep passes and the config's policy. */
export interface Session {
  readonly runner: RepRunner;
  readonly context: DeviceContext;
  readonly guard: RepGuard;
  readonly policy: ReturnType<typeof policyFromConfig>;
}

/**
 * Runs `measure` on the plan's devices after verifying its schedules; returns both with what opening the devices found.
 */
export async function withSession<T>(
  loaded: LoadedConfig,
  plan: Plan,
  kernels: readonly ResolvedKernel[],
  options: SessionOptions,
  measure: (session: Session) => Promise<T>,
): Promise<DeviceOutcome<{ readonly verification: Verification; readonly measured: T }>> {
  const policy = policyFromConfig(loaded.config.repetitions);
  const launch = { identity: runIdentity(process.env, hostname()), timeoutMs: options.timeoutMs };
  const open = {
    wait: options.wait,
    signal: options.signal,
    deviceOrigin: options.deviceOrigin,
    launch,
    kindFlags: options.kindFlags,
  };
  return withDevicePlan(plan, kernels, open, async (runner, context) => {
    const guard = new RepGuard({ signal: options.signal, timeoutMs: options.timeoutMs });
    options.onMeasuring?.();
    const verification = await verifySchedules(
      runner,
      options.verify,
      guard,
      loaded.config.tolerance,
      reductionCheck(plan, launch.identity),
    );
    return { verification, measured: await measure({ runner, context, guard, policy }) };
  });
}

/**
 * The all-reduce check of a plan with a reference: the ranks that sum are the launch's under a launcher, else the
 * devices this process drives (one device: one rank).
 */
export function reductionCheck(
  plan: Pick<Plan, 'reference' | 'devices'>,
  identity: { readonly size: number | null },
): ReductionCheck | null {
  if (!plan.reference) return null;
  return {
    reference: plan.reference,
    ranks: identity.size !== null && identity.size > 1 ? identity.size : plan.devices.length,
  };
}

/**
 * The Result's fields every command fills alike: the tool, this run's host and rank, the config, the plan and the
 * device's software.
 */
export function resultBasics(
  loaded: LoadedConfig,
  plan: Plan,
  outcome: Pick<DeviceOutcome<unknown>, 'software' | 'compiles' | 'clockUnavailable'>,
  gate: boolean,
): Pick<
  RunResultInput,
  | 'toolVersion'
  | 'run'
  | 'config'
  | 'configHash'
  | 'rawConfig'
  | 'plan'
  | 'software'
  | 'compiles'
  | 'policy'
  | 'gate'
  | 'clockUnavailable'
> {
  const { config } = loaded;
  return {
    toolVersion: packageVersion(),
    run: runIdentity(process.env, hostname()),
    config,
    configHash: configHash(config),
    rawConfig: loaded.raw,
    plan,
    software: outcome.software,
    compiles: outcome.compiles,
    policy: policyFromConfig(config.repetitions),
    gate,
    clockUnavailable: outcome.clockUnavailable,
  };
}
