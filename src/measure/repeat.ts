import type { ConfigBuffer } from '../config/types.js';
import {
  compareOutput,
  compareWithin,
  type LargestError,
  type OutputMismatch,
  POISON,
  type ToleranceRule,
} from '../data/compare.js';
import { modeName } from '../plan/describe.js';
import type { Schedule } from '../plan/types.js';
import type { Mismatch } from '../result/verification.js';
import { type CheckRecord, layoutDependent, outputCheck, takesTolerance } from '../kinds/index.js';
import type { StopRule } from '../vocabulary.js';
import { RepGuard } from './guard.js';
import { type RepetitionPolicy, StoppingCriterion } from './policy.js';
import { ALONE, type KindRepEnd, type RepRunner } from './runner.js';

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
  /** Latency modes: every probe of every timed rep, ms. */
  readonly probeMs?: readonly number[];
  /** Every timed rep's own work of a kind (a host stage's tasks on workers), as the kind recorded it. */
  readonly kindReps?: readonly KindRepEnd[];
  /** A graph replay's one-off capture and instantiation, host time; absent for schedules issued op by op. */
  readonly setup?: { readonly captureMs: number; readonly instantiateMs: number } | null;
}

export type VerificationStatus = 'passed' | 'failed' | 'skipped' | 'nothing-compared';

export interface Verification {
  /**
   * `nothing-compared`: the plan has no output buffer, so the checked reps found no fault and nothing more was
   * compared.
   */
  readonly status: VerificationStatus;
  readonly mismatches: Mismatch[];
  /** Present where the config gave verify.tolerance: the rule, and the largest differences seen. */
  readonly tolerance?: { readonly relative: number; readonly absolute: number; readonly largestError: LargestError };
  /** A plan with all-reduces: what the check of their sums against the reference found (its kind's output check). */
  readonly reduction?: CheckRecord;
  /** A plan with a reduce-scatter: each layout was compared with its own op-by-op rep, not with serial. */
  readonly against?: 'same-layout-serialised';
}

/** The comparisons a kind's output check makes, which it may not load. */
const COMPARISONS = { compareOutput, compareWithin };

/** The all-reduce check's inputs: the plan's reference (serial without its collectives) and the ranks that sum. */
export interface ReductionCheck {
  readonly reference: Schedule;
  readonly ranks: number;
}

/**
 * Runs the serial baseline and then each other verified schedule once with checked ops (a fault names its kernel
 * and chunk), and, unless `verify` is off, each for real after a different poison, comparing outputs byte for byte, or
 * as numbers within `tolerance` where the config gives one and an op of a kind that takes it may write the output.
 */
export async function verifySchedules(
  runner: RepRunner,
  verify: boolean,
  guard = new RepGuard(),
  tolerance: ToleranceRule | null = null,
  reduction: ReductionCheck | null = null,
): Promise<Verification> {
  // A reduce-scatter leaves part r of each bucket reduced on rank r: its outputs depend on the bucket count, so each
  // layout is checked against itself serialised (its checked rep, every op waited for), not against serial's buckets.
  const bucketed = runner.schedules.some((s) => layoutDependent(s.body));
  const [baseline, ...candidates] = runner.schedules.filter((s) => s.verify);
  if (!baseline) return { status: 'skipped', mismatches: [] };
  runner.restoreInputs();
  if (verify) runner.poisonOutputs(POISON.serial);
  await guard.rep(runner, baseline, { checked: true });
  // Each data-parallel rank of one process stores its own outputs (ranks differ after a reduce-scatter): each is
  // checked against its own serial copy, and its device named where it is not the only one.
  const devices = runner.outputDevices?.() ?? [undefined];
  const spread = devices.length > 1;
  const at = (device: number | undefined) => (spread && device !== undefined ? { device } : {});
  // Copies, window by window: the serial outputs must survive the candidates' reps.
  const copy = (names: readonly string[], device: number | undefined) =>
    new Map(names.map((name) => [name, runner.hostWindows(name, device).map((w) => Buffer.from(w))]));
  const everyOutput = () =>
    devices.map((device) =>
      copy(
        runner.outputs().map((b) => b.name),
        device,
      ),
    );
  const expected = verify ? everyOutput() : null;
  const mismatches: Mismatch[] = [];
  let reduced: CheckRecord | undefined;
  const kindCheck = reduction ? outputCheck(baseline.body) : null;
  const checked = kindCheck ? kindCheck.check.outputs(baseline, runner.outputs(), kindCheck.facts) : [];
  if (expected && reduction && kindCheck && checked.length) {
    runner.restoreInputs();
    runner.poisonOutputs(POISON.overlapped);
    // The reference runs on the primary alone: every rank's reduced outputs are checked against its.
    await guard.rep(runner, reduction.reference, { checked: true });
    const reference = copy(
      checked.map((b) => b.name),
      devices[0],
    );
    devices.forEach((device, k) => {
      const found = kindCheck.check.compare(
        checked,
        expected[k] ?? new Map(),
        reference,
        reduction.ranks,
        tolerance,
        POISON.serial,
        COMPARISONS,
      );
      mismatches.push(...found.mismatches.map((m) => ({ ...m, mode: baseline.id, ...at(device) })));
      if (!reduced || found.record.status === 'failed') reduced = found.record;
    });
  }
  const largest = { absolute: 0, relative: 0 };
  for (const candidate of candidates) {
    runner.restoreInputs();
    if (bucketed && expected) runner.poisonOutputs(POISON.serial);
    await guard.rep(runner, candidate, { checked: true });
    if (!expected) continue;
    const against = bucketed ? everyOutput() : expected;
    runner.restoreInputs();
    runner.poisonOutputs(POISON.overlapped);
    await guard.rep(runner, candidate);
    devices.forEach((device, k) => {
      for (const buffer of runner.outputs()) {
        // The tolerance is for what a kind's results may vary by (src/kinds/: a kernel's or a library's sums), not for
        // bytes only copied.
        const rule = tolerance && takesTolerance(buffer.name, candidate.body) ? tolerance : null;
        const mismatch = compareWindows(
          buffer,
          against[k]?.get(buffer.name) ?? [],
          runner.hostWindows(buffer.name, device),
          rule,
          largest,
        );
        if (mismatch) mismatches.push({ ...mismatch, mode: candidate.id, ...at(device) });
      }
    });
  }
  if (!verify) return { status: 'skipped', mismatches: [] };
  // Without an output buffer (gemm.yaml's scratch-only products) "passed" would claim a comparison that never ran.
  if (expected?.[0]?.size === 0 && !reduced) return { status: 'nothing-compared', mismatches: [] };
  return {
    status: mismatches.length ? 'failed' : 'passed',
    mismatches,
    ...(bucketed ? { against: 'same-layout-serialised' as const } : {}),
    ...(tolerance ? { tolerance: { ...tolerance, largestError: largest } } : {}),
    ...(reduced ? { reduction: reduced } : {}),
  };
}

/** The first differing window names the first differing element; the differing count adds up every window's. */
export function compareWindows(
  buffer: ConfigBuffer,
  expected: readonly Uint8Array[],
  actual: readonly Uint8Array[],
  tolerance: ToleranceRule | null,
  largest: { absolute: number; relative: number },
): OutputMismatch | null {
  let first: OutputMismatch | null = null;
  let differing = 0;
  let elements = 0;
  actual.forEach((window, i) => {
    const serial = expected[i] ?? new Uint8Array(window.byteLength);
    let mismatch: OutputMismatch | null;
    if (tolerance) {
      const within = compareWithin(buffer, serial, window, POISON.overlapped, tolerance);
      mismatch = within.mismatch;
      largest.absolute = Math.max(largest.absolute, within.largest.absolute);
      largest.relative = Math.max(largest.relative, within.largest.relative);
    } else {
      mismatch = compareOutput(buffer, serial, window, POISON.overlapped);
    }
    if (mismatch) {
      first ??= { ...mismatch, index: mismatch.index + elements };
      differing += mismatch.differing;
    }
    elements += window.byteLength / buffer.elementBytes;
  });
  return first === null ? null : { ...(first as OutputMismatch), differing };
}

export interface MeasureOptions {
  /** Reads the SM clock between reps (outside the timed region); null when it cannot be read. */
  readonly smClock?: (() => number | null) | undefined;
  /** Called after each mode, for progress reporting. */
  readonly onMode?: (measured: MeasuredSchedule) => void;
  /** Interrupts and deadlines; one that also saw verification knows how long each mode's reps take. */
  readonly guard?: RepGuard;
}

/** Warm-up reps (by count and time, not kept), then timed reps until the policy stops, for one schedule. */
export async function measureSchedule(
  runner: RepRunner,
  schedule: Schedule,
  policy: RepetitionPolicy,
  options: MeasureOptions = {},
): Promise<MeasuredSchedule> {
  const guard = options.guard ?? new RepGuard();
  const agreement = runner.agreement ?? ALONE;
  const what = modeName(schedule);
  const warmupStart = performance.now();
  const warmMore = async (rep: number) =>
    (
      await agreement.any(
        [rep < policy.warmup || performance.now() - warmupStart < policy.warmupMs],
        `another warm-up of ${what}`,
      )
    )[0] === true;
  for (let rep = 0; await warmMore(rep); rep++) {
    runner.restoreInputs();
    await guard.rep(runner, schedule);
  }
  const criterion = new StoppingCriterion(policy);
  const gpuMs: number[] = [];
  const hostIssueMs: number[] = [];
  const smClockMHz: number[] = [];
  const probeMs: number[] = [];
  const kindReps: KindRepEnd[] = [];
  let gateTimeouts = 0;
  const start = performance.now();
  for (;;) {
    runner.restoreInputs();
    const timing = await guard.rep(runner, schedule);
    gpuMs.push(timing.gpuMs);
    hostIssueMs.push(timing.hostIssueMs);
    if (timing.gateTimedOut) gateTimeouts += 1;
    if (timing.probesMs) probeMs.push(...timing.probesMs);
    if (timing.kindRep) kindReps.push(timing.kindRep);
    const clock = options.smClock?.();
    if (clock) smClockMHz.push(clock);
    const elapsedMs = performance.now() - start;
    const stoppedBy = criterion.check(gpuMs, elapsedMs);
    // Every rank takes another rep while any rank's rule asks for one: the slowest to settle sets the count.
    const more = (await agreement.any([stoppedBy === null], `another rep of ${what}`))[0] === true;
    if (stoppedBy && !more)
      return {
        schedule,
        gpuMs,
        hostIssueMs,
        stoppedBy,
        elapsedMs,
        smClockMHz,
        gateTimeouts,
        setup: runner.setupCost?.(schedule.id) ?? null,
        ...(probeMs.length ? { probeMs } : {}),
        ...(kindReps.length ? { kindReps } : {}),
      };
  }
}

/** Every schedule of the runner, one after the other. */
export async function measureSchedules(
  runner: RepRunner,
  policy: RepetitionPolicy,
  options: MeasureOptions = {},
): Promise<MeasuredSchedule[]> {
  const measured: MeasuredSchedule[] = [];
  const guarded = { ...options, guard: options.guard ?? new RepGuard() };
  for (const schedule of runner.schedules) {
    const m = await measureSchedule(runner, schedule, policy, guarded);
    options.onMode?.(m);
    measured.push(m);
  }
  return measured;
}
