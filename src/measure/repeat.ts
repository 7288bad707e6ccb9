import type { PipelineSession } from '../exec/session.js';
import { POISON } from '../exec/patterns.js';
import { compareOutput, type Mismatch } from '../exec/verify.js';
import type { Schedule } from '../plan/types.js';
import { type RepetitionPolicy, StoppingCriterion, type StopRule } from './policy.js';

export interface MeasuredSchedule {
  readonly schedule: Schedule;
  readonly gpuMs: number[];
  readonly hostIssueMs: number[];
  readonly stoppedBy: StopRule;
  /** Host time spent on the timed reps. */
  readonly elapsedMs: number;
  /** SM clock in MHz read between reps; empty when it could not be read. */
  readonly smClockMHz: number[];
  /** Reps whose gate timed out, so that they include host issue cost. */
  readonly gateTimeouts: number;
}

export interface Verification {
  readonly status: 'passed' | 'failed' | 'skipped';
  readonly mismatches: Mismatch[];
}

/**
 * Runs each verified schedule once with checked ops (a fault names its kernel and chunk), then the serial baseline
 * and every other verified schedule for real, each after a different poison, and compares outputs byte for byte.
 */
export function verifySchedules(session: PipelineSession, verify: boolean): Verification {
  const [baseline, ...candidates] = session.plan.schedules.filter((s) => s.verify);
  if (!baseline) return { status: 'skipped', mismatches: [] };
  session.restoreInputs();
  if (verify) session.poisonOutputs(POISON.serial);
  session.runRep(baseline.id, { checked: true });
  const expected = verify ? new Map(session.outputs().map((b) => [b.name, Buffer.from(session.hostView(b.name))])) : null;
  const mismatches: Mismatch[] = [];
  for (const candidate of candidates) {
    session.restoreInputs();
    session.runRep(candidate.id, { checked: true });
    if (!expected) continue;
    session.restoreInputs();
    session.poisonOutputs(POISON.overlapped);
    session.runRep(candidate.id);
    for (const buffer of session.outputs()) {
      const mismatch = compareOutput(buffer, expected.get(buffer.name) as Buffer, session.hostView(buffer.name), POISON.overlapped);
      if (mismatch) mismatches.push(mismatch);
    }
  }
  if (!verify) return { status: 'skipped', mismatches: [] };
  return { status: mismatches.length ? 'failed' : 'passed', mismatches };
}

export interface MeasureOptions {
  /** Reads the SM clock between reps (outside the timed region); null when it cannot be read. */
  readonly smClock?: () => number | null;
}

/** Warm-up reps (by count and time, not kept), then timed reps until the policy stops, for every schedule. */
export function measureSchedules(session: PipelineSession, policy: RepetitionPolicy, options: MeasureOptions = {}): MeasuredSchedule[] {
  return session.plan.schedules.map((schedule) => {
    const warmupStart = performance.now();
    for (let rep = 0; rep < policy.warmup || performance.now() - warmupStart < policy.warmupMs; rep++) {
      session.restoreInputs();
      session.runRep(schedule.id);
    }
    const criterion = new StoppingCriterion(policy);
    const gpuMs: number[] = [];
    const hostIssueMs: number[] = [];
    const smClockMHz: number[] = [];
    let gateTimeouts = 0;
    const start = performance.now();
    for (;;) {
      session.restoreInputs();
      const timing = session.runRep(schedule.id);
      gpuMs.push(timing.gpuMs);
      hostIssueMs.push(timing.hostIssueMs);
      if (timing.gateTimedOut) gateTimeouts += 1;
      const clock = options.smClock?.();
      if (clock) smClockMHz.push(clock);
      const elapsedMs = performance.now() - start;
      const stoppedBy = criterion.check(gpuMs, elapsedMs);
      if (stoppedBy) return { schedule, gpuMs, hostIssueMs, stoppedBy, elapsedMs, smClockMHz, gateTimeouts };
    }
  });
}
