import { UsageError } from '../errors.js';
import { formatMs, formatPercent } from '../format.js';
import type { ParsedTrace } from '../traces/events.js';
import { traceFormat } from '../traces/formats/index.js';

// Several traces are read as the ranks of one launch: one trace a rank, the ranks at the same time. What cannot be
// that is refused before anything is analysed (exit 2, naming both files), since merging it would show one GPU
// twice and a collective skew that never was: the same rank twice, two traces of one GPU that name no rank (two
// runs of a one-GPU program, most likely, which `--ab` compares), and traces that do not overlap in time. And two
// sides of `--ab` that do not look like one program get a note: their verdicts compare unlike things.

const AB_HINT =
  'To compare two runs of a program, before and after a change: cuda-pipe analyze --ab A.json B.json ' +
  '(several ranks a side: --ab A0 A1 -- B0 B1).';

/**
 * The span of a trace's GPU work in ms, moved by the base its times count from where `based` (every trace compared
 * gives one); else on its own times, which traces without a base are taken to share, as the collective skew takes
 * them. Null without GPU work.
 */
function span(trace: ParsedTrace, based: boolean): { start: number; end: number } | null {
  if (!trace.gpu.length) return null;
  const base = based ? (trace.clockBaseMs ?? 0) : 0;
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const e of trace.gpu) {
    start = Math.min(start, e.start);
    end = Math.max(end, e.end);
  }
  return { start: base + start, end: base + end };
}

/** The devices a trace's GPU work ran on. */
const devicesOf = (trace: ParsedTrace) => new Set(trace.gpu.map((e) => e.device));

/**
 * Refuses traces that cannot be the ranks of one launch; `side` names them in the message ("A's traces") where they
 * are one side of --ab. Only traces whose times are their host's clock (a format's `clock`: Kineto's) are checked
 * for overlap: a `run --trace` file counts from its rep's start and an Nsight export from its session's.
 */
export function checkOneLaunch(traces: readonly ParsedTrace[], side = 'the traces'): void {
  if (traces.length < 2) return;
  const byRank = new Map<number, ParsedTrace>();
  for (const trace of traces) {
    if (trace.rank === null) continue;
    const other = byRank.get(trace.rank);
    if (other) {
      throw new UsageError(
        `${other.file} and ${trace.file} are both rank ${trace.rank} (their distributedInfo.rank): ` +
          `${side} are read as the ranks of one launch, each rank once.`,
        { hint: `Give each rank's trace once. ${AB_HINT}` },
      );
    }
    byRank.set(trace.rank, trace);
  }
  // Ranks may share a GPU index on hosts of their own; a trace without a rank cannot say it is on another host.
  for (const [i, a] of traces.entries()) {
    for (const b of traces.slice(i + 1)) {
      if (a.rank !== null && b.rank !== null) continue;
      const shared = [...devicesOf(a)].find((d) => devicesOf(b).has(d));
      if (shared === undefined) continue;
      const unnamed =
        a.rank === null && b.rank === null
          ? 'neither names its rank'
          : `${a.rank === null ? a.file : b.file} names no rank`;
      throw new UsageError(
        `${a.file} and ${b.file} both ran on GPU ${shared}, and ${unnamed}: ` +
          `${side} are read as the ranks of one launch, which run on GPUs of their own ` +
          '(or say their rank, as PyTorch does in distributedInfo); these look like two runs of a program.',
        { hint: AB_HINT },
      );
    }
  }
  const onHostClocks = traces.filter((t) => traceFormat(t.format).clock === 'wall');
  const based = onHostClocks.every((t) => typeof t.clockBaseMs === 'number');
  const timed = onHostClocks.flatMap((trace) => {
    const own = span(trace, based);
    return own ? [{ trace, span: own }] : [];
  });
  for (const [i, a] of timed.entries()) {
    for (const b of timed.slice(i + 1)) {
      const gapMs = Math.max(a.span.start, b.span.start) - Math.min(a.span.end, b.span.end);
      if (gapMs <= 0) continue;
      const [first, second] = a.span.start <= b.span.start ? [a, b] : [b, a];
      const lasting = (s: { start: number; end: number }) => seconds(s.end - s.start);
      throw new UsageError(
        `${first.trace.file} ends ${seconds(gapMs)} before ${second.trace.file} starts: ` +
          `${side} are read as the ranks of one launch, which run at the same time, ` +
          `and these do not overlap (GPU work ${lasting(first.span)} and ${lasting(second.span)} long).`,
        {
          hint: `${AB_HINT} Ranks on hosts whose clocks differ by more than a trace lasts need them set (NTP) to be read together.`,
        },
      );
    }
  }
}

const seconds = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : formatMs(ms));

/** What --ab compares of two sides' programs: the kernels they run, and how much GPU work a step holds. */
export interface ProgramShape {
  readonly kernels: ReadonlySet<string>;
  /** GPU events (kernels, copies, memsets) per step, over the side's traces; null without steps. */
  readonly opsPerStep: number | null;
}

export function programShape(traces: readonly ParsedTrace[], steps: number): ProgramShape {
  const kernels = new Set<string>();
  let ops = 0;
  for (const trace of traces) {
    ops += trace.gpu.length;
    for (const e of trace.gpu) if (e.kind === 'kernel') kernels.add(e.name);
  }
  return { kernels, opsPerStep: steps > 0 ? ops / steps : null };
}

/**
 * Below this share of kernel names in common (of all the names either side runs), or with a step of one side holding
 * more than this many times the GPU work of the other's, A and B are taken for different programs. A change to a
 * program (a copy pinned, a stream added, a kernel fused) keeps most of its kernels and its step's size.
 */
export const SAME_PROGRAM = { sharedKernels: 0.5, opsPerStepRatio: 2 } as const;

/** A note where A and B do not look like one program, naming what differs; null where they do. */
export function programNote(a: ProgramShape, b: ProgramShape): string | null {
  const union = new Set([...a.kernels, ...b.kernels]);
  const shared = [...a.kernels].filter((k) => b.kernels.has(k)).length;
  const share = union.size ? shared / union.size : 1;
  const reasons: string[] = [];
  if (share < SAME_PROGRAM.sharedKernels) {
    const names = `${shared} of ${union.size}; a change to one program keeps most`;
    reasons.push(`they share ${formatPercent(share, 0)} of their kernel names (${names})`);
  }
  if (a.opsPerStep !== null && b.opsPerStep !== null && a.opsPerStep > 0 && b.opsPerStep > 0) {
    const ratio = Math.max(a.opsPerStep, b.opsPerStep) / Math.min(a.opsPerStep, b.opsPerStep);
    if (ratio > SAME_PROGRAM.opsPerStepRatio) {
      const [opsA, opsB] = [a.opsPerStep.toFixed(0), b.opsPerStep.toFixed(0)];
      reasons.push(`a step of A holds ${opsA} GPU ops and one of B ${opsB} (${ratio.toFixed(1)} times as many)`);
    }
  }
  if (!reasons.length) return null;
  return (
    `A and B do not look like one program: ${reasons.join('; ')}. ` +
    'Their verdicts compare the step times of different work, not a change to one program.'
  );
}
