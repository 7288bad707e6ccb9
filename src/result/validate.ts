import { quantile } from '../quantile.js';
import type { RunResult } from './schema.js';

// What the JSON Schema cannot say about a Result: that its numbers are ones a measurement can produce and that its
// parts agree with each other. A file that breaks one of these was edited or damaged, and drawing or comparing it
// would print nonsense (a speedup of +Infinity%, "verification: passed" over no modes, a bar that ends before it
// starts), so it is refused on load, naming the field.

/** The first inconsistency found: the field as a path (`modes[2].stats.median`) and what is wrong with it. */
export interface ResultProblem {
  readonly field: string;
  readonly problem: string;
}

type Check = (field: string, ok: boolean, problem: string) => void;

/** Every check, in document order; null for a consistent Result. */
export function resultProblem(result: RunResult): ResultProblem | null {
  let found: ResultProblem | null = null;
  const check: Check = (field, ok, problem) => {
    if (!ok && found === null) found = { field, problem };
  };
  checkDevices(result, check);
  checkModes(result, check);
  checkSummary(result, check);
  checkTimeline(result, check);
  checkVerification(result, check);
  checkSweep(result, check);
  return found;
}

/**
 * The times a measurement can produce, in ms: no rep outlasts its deadline (24.8 days at most) or is shorter than a
 * picosecond. Past these, scaled copies of a Result (× 1e307, × 1e-320) overflow to Infinity or underflow to
 * denormals in every ratio the reports print.
 */
export const MAX_TIME_MS = 1e10;
export const MIN_TIME_MS = 1e-9;

const positive = (value: number) => value > 0;
const time = (value: number) => value >= MIN_TIME_MS && value <= MAX_TIME_MS;
const timeProblem = (value: number) =>
  value > 0
    ? `a time must be between ${MIN_TIME_MS} and ${MAX_TIME_MS} ms, ${got(value)}`
    : `a time must be positive, ${got(value)}`;
/** Equal up to the rounding of a statistic computed in another order (a mean's sum). */
const same = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
const nonNegative = (value: number) => value >= 0;
const got = (value: number) => `got ${value}`;

function checkDevices(result: RunResult, check: Check): void {
  const seen = new Set<number>();
  result.devices.forEach((d, i) => {
    check(
      `devices[${i}].index`,
      Number.isInteger(d.index) && d.index >= 0,
      `a device index is a whole number from 0, ${got(d.index)}`,
    );
    check(`devices[${i}].index`, !seen.has(d.index), `device ${d.index} is listed twice`);
    seen.add(d.index);
  });
  result.buffers.forEach((b, i) => {
    check(`buffers[${i}].bytes`, nonNegative(b.bytes), `a buffer's size cannot be negative, ${got(b.bytes)}`);
    check(
      `buffers[${i}].elements`,
      nonNegative(b.elements),
      `a buffer's element count cannot be negative, ${got(b.elements)}`,
    );
  });
}

function checkModes(result: RunResult, check: Check): void {
  check('modes', result.modes.length > 0, 'a Result with no modes measured nothing');
  const devices = new Set(result.devices.map((d) => d.index));
  const ids = new Set<string>();
  result.modes.forEach((m, i) => {
    const at = `modes[${i}]`;
    check(`${at}.id`, !ids.has(m.id), `mode "${m.id}" appears twice`);
    ids.add(m.id);
    check(
      `${at}.device`,
      devices.has(m.device),
      `device ${m.device} is not among the Result's devices (${[...devices].join(', ')})`,
    );
    check(`${at}.samplesMs`, m.samplesMs.length > 0, 'a measured mode has at least one timed rep');
    const sample = m.samplesMs.findIndex((s) => !positive(s));
    check(
      `${at}.samplesMs[${sample}]`,
      sample === -1,
      `a rep's GPU time must be positive, ${got(m.samplesMs[sample]!)}`,
    );
    const extreme = m.samplesMs.findIndex((s) => !time(s));
    check(`${at}.samplesMs[${extreme}]`, extreme === -1, timeProblem(m.samplesMs[extreme]!));
    const issue = m.hostIssueMs.findIndex((s) => !nonNegative(s));
    check(`${at}.hostIssueMs[${issue}]`, issue === -1, `a host time cannot be negative, ${got(m.hostIssueMs[issue]!)}`);
    const s = m.stats;
    check(
      `${at}.stats.n`,
      s.n === m.samplesMs.length,
      `the statistics count ${s.n} samples, the mode holds ${m.samplesMs.length}`,
    );
    for (const key of ['median', 'mean', 'min', 'max'] as const)
      check(`${at}.stats.${key}`, time(s[key]), timeProblem(s[key]));
    check(
      `${at}.stats.median`,
      s.min <= s.median && s.median <= s.max,
      `the median ${s.median} is not between min ${s.min} and max ${s.max}`,
    );
    check(`${at}.stats.q3`, s.q1 <= s.q3, `the first quartile ${s.q1} is above the third ${s.q3}`);
    // The statistics are the samples' own (measure/stats.ts summarize): ones that disagree would drive a verdict
    // that the samples do not support.
    if (m.samplesMs.length > 0 && m.samplesMs.every(time)) {
      const sorted = [...m.samplesMs].sort((x, y) => x - y);
      const own = {
        min: sorted[0] as number,
        max: sorted[sorted.length - 1] as number,
        median: quantile(sorted, 0.5),
        q1: quantile(sorted, 0.25),
        q3: quantile(sorted, 0.75),
        mean: m.samplesMs.reduce((sum, x) => sum + x, 0) / m.samplesMs.length,
      };
      for (const key of ['median', 'min', 'max', 'q1', 'q3', 'mean'] as const) {
        check(
          `${at}.stats.${key}`,
          same(s[key], own[key]),
          `the ${key} is ${s[key]}, but the mode's own samples give ${own[key]}`,
        );
      }
    }
    for (const key of ['stdev', 'iqr', 'relativeStdev', 'relativeNoise'] as const)
      check(`${at}.stats.${key}`, nonNegative(s[key]), `a spread cannot be negative, ${got(s[key])}`);
    const outlier = s.outliers.findIndex((o) => o < 0 || o >= m.samplesMs.length);
    check(`${at}.stats.outliers[${outlier}]`, outlier === -1, `sample ${s.outliers[outlier]} does not exist`);
    check(`${at}.elapsedMs`, nonNegative(m.elapsedMs), `a host time cannot be negative, ${got(m.elapsedMs)}`);
    if (m.analysis) {
      const a = m.analysis;
      check(`${at}.analysis.serialMs`, time(a.serialMs), timeProblem(a.serialMs));
      check(`${at}.analysis.speedup`, positive(a.speedup), `a speedup must be positive, ${got(a.speedup)}`);
      check(
        `${at}.analysis.speedup`,
        same(a.speedup, a.serialMs / s.median),
        `the speedup is ${a.speedup}, but serial's ${a.serialMs} ms over this mode's median ${s.median} ms is ${a.serialMs / s.median}`,
      );
      check(
        `${at}.analysis.speedupError`,
        a.speedupError === null || nonNegative(a.speedupError),
        `an error cannot be negative, ${got(a.speedupError ?? 0)}`,
      );
      check(
        `${at}.analysis.efficiency`,
        nonNegative(a.efficiency),
        `an efficiency cannot be negative, ${got(a.efficiency)}`,
      );
      check(`${at}.analysis.bound.ms`, nonNegative(a.bound.ms), `a bound cannot be negative, ${got(a.bound.ms)}`);
    }
  });
}

function checkSummary(result: RunResult, check: Check): void {
  const s = result.summary;
  check(
    'summary.mode',
    result.modes.some((m) => m.id === s.mode),
    `the headline names mode "${s.mode}", which the Result does not hold`,
  );
  check('summary.serialMs', time(s.serialMs), timeProblem(s.serialMs));
  check('summary.overlappedMs', time(s.overlappedMs), timeProblem(s.overlappedMs));
  check('summary.speedup', positive(s.speedup), `a speedup must be positive, ${got(s.speedup)}`);
  check(
    'summary.speedup',
    same(s.speedup, s.serialMs / s.overlappedMs),
    `the speedup is ${s.speedup}, but ${s.serialMs} ms over ${s.overlappedMs} ms is ${s.serialMs / s.overlappedMs}`,
  );
  // The headline is a mode of the Result: its times are that mode's (measure/result.ts summaryOf).
  const headline = result.modes.find((m) => m.id === s.mode);
  if (headline) {
    check(
      'summary.overlappedMs',
      same(s.overlappedMs, headline.stats.median),
      `the headline's time is ${s.overlappedMs} ms, but mode "${s.mode}" has a median of ${headline.stats.median} ms`,
    );
    if (headline.analysis)
      check(
        'summary.serialMs',
        same(s.serialMs, headline.analysis.serialMs),
        `serial's time is ${s.serialMs} ms, but mode "${s.mode}" was compared with ${headline.analysis.serialMs} ms`,
      );
  }
  check(
    'summary.speedupError',
    s.speedupError === null || nonNegative(s.speedupError),
    `an error cannot be negative, ${got(s.speedupError ?? 0)}`,
  );
  check('summary.efficiency', nonNegative(s.efficiency), `an efficiency cannot be negative, ${got(s.efficiency)}`);
}

function checkTimeline(result: RunResult, check: Check): void {
  result.timeline?.reps.forEach((rep, r) => {
    const at = `timeline.reps[${r}]`;
    check(`${at}.totalMs`, positive(rep.totalMs), `a traced rep's time must be positive, ${got(rep.totalMs)}`);
    check(`${at}.totalMs`, time(rep.totalMs), timeProblem(rep.totalMs));
    // The rep's end event follows every op; engine times (CUPTI) may run a little past it, never far.
    const late = rep.totalMs + Math.max(1, 0.1 * rep.totalMs);
    check(`${at}.issueMs`, nonNegative(rep.issueMs), `a host time cannot be negative, ${got(rep.issueMs)}`);
    rep.ops.forEach((op, o) => {
      const opAt = `${at}.ops[${o}]`;
      check(`${opAt}.startMs`, nonNegative(op.startMs), `an op cannot start before its rep, ${got(op.startMs)}`);
      check(
        `${opAt}.endMs`,
        op.endMs >= op.startMs,
        `the op ends at ${op.endMs} ms, before it starts at ${op.startMs} ms`,
      );
      check(
        `${opAt}.endMs`,
        op.endMs <= late,
        `the op ends at ${op.endMs} ms, long after its rep ended at ${rep.totalMs} ms`,
      );
      check(`${opAt}.issuedMs`, nonNegative(op.issuedMs), `an op cannot be issued before its rep, ${got(op.issuedMs)}`);
      check(`${opAt}.bytes`, nonNegative(op.bytes), `a size cannot be negative, ${got(op.bytes)}`);
      if (op.hostStartedMs !== undefined && op.hostEndedMs !== undefined) {
        check(
          `${opAt}.hostEndedMs`,
          op.hostEndedMs >= op.hostStartedMs,
          `the host call ends at ${op.hostEndedMs} ms, before it starts at ${op.hostStartedMs} ms`,
        );
      }
    });
  });
}

function checkVerification(result: RunResult, check: Check): void {
  const v = result.verification;
  check(
    'verification.mismatches',
    v.status !== 'passed' || v.mismatches.length === 0,
    `verification passed, yet ${v.mismatches.length} mismatches are listed`,
  );
  check(
    'verification.mismatches',
    v.status !== 'failed' || v.mismatches.length > 0,
    'verification failed, yet no mismatch is listed',
  );
  const ids = new Set(result.modes.map((m) => m.id));
  const stray = v.mismatches.findIndex((m) => !ids.has(m.mode));
  check(
    `verification.mismatches[${stray}].mode`,
    stray === -1,
    `mode "${v.mismatches[stray]?.mode}" is not in the Result`,
  );
}

function checkSweep(result: RunResult, check: Check): void {
  if (!result.sweep) return;
  const ids = new Set(result.modes.map((m) => m.id));
  const point = result.sweep.points.findIndex((p) => !ids.has(p.mode));
  check(`sweep.points[${point}].mode`, point === -1, `mode "${result.sweep.points[point]?.mode}" is not in the Result`);
  check('sweep.best.mode', ids.has(result.sweep.best.mode), `mode "${result.sweep.best.mode}" is not in the Result`);
}
