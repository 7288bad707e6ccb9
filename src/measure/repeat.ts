import type { PipelineSession } from '../exec/session.js';
import { POISON } from '../exec/patterns.js';
import { compareOutput, type Mismatch } from '../exec/verify.js';
import type { Schedule } from '../plan/types.js';

export interface RepetitionPolicy {
  readonly warmup: number;
  readonly reps: number;
}

export interface MeasuredSchedule {
  readonly schedule: Schedule;
  readonly gpuMs: number[];
  readonly hostIssueMs: number[];
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

/** Warm-up reps (not kept), then timed reps, for every schedule of the plan in order. */
export function measureSchedules(session: PipelineSession, policy: RepetitionPolicy): MeasuredSchedule[] {
  return session.plan.schedules.map((schedule) => {
    const gpuMs: number[] = [];
    const hostIssueMs: number[] = [];
    for (let rep = 0; rep < policy.warmup + policy.reps; rep++) {
      session.restoreInputs();
      const timing = session.runRep(schedule.id);
      if (rep < policy.warmup) continue;
      gpuMs.push(timing.gpuMs);
      hostIssueMs.push(timing.hostIssueMs);
    }
    return { schedule, gpuMs, hostIssueMs };
  });
}
