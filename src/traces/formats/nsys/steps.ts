import type { StepMark } from '../../events.js';
import { type TableOf, type TextOf, may, need } from './tables.js';

// An export's steps, from its NVTX ranges: what marks a step where the program named none ProfilerStep#N.

export const NVTX = 'NVTX_EVENTS';
/** ENUM_NSYS_EVENT_TYPE: NvtxPushPopRange and NvtxStartEndRange. */
const NVTX_RANGES = [59, 60] as const;
const PROFILER_STEP = /^ProfilerStep#\d+$/;

interface Range {
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly thread: number | null;
}

/**
 * Steps from NVTX ranges, on the host's clock (as Kineto's ProfilerStep#N is): the ranges named `ProfilerStep#N`
 * where there are any; else the ranges of the most repeated name among top-level ranges (those inside no other range
 * of their thread), at least two of them, numbered in time order; else none, and the whole trace is one step.
 */
export function nvtxSteps(table: TableOf, text: TextOf, present: boolean): { steps: StepMark[]; notes: string[] } {
  if (!present) return { steps: [], notes: [`it has no ${NVTX} table: the whole trace is one step`] };
  const ranges: Range[] = [];
  let open = 0;
  for (const row of table(NVTX, [
    need('start'),
    may('end'),
    need('eventType'),
    may('text'),
    may('textId'),
    may('globalTid'),
  ])) {
    if (!(NVTX_RANGES as readonly number[]).includes(row.int('eventType'))) continue;
    if (row.intOrNull('end') === null) {
      open += 1;
      continue;
    }
    const { start, end } = row.span();
    const name = row.textOrNull('text') ?? (row.intOrNull('textId') === null ? '' : text(row, NVTX, 'textId'));
    ranges.push({ name, start, end, thread: row.intOrNull('globalTid') });
  }
  const notes = open
    ? [`${open} NVTX range${open === 1 ? ' has' : 's have'} no end (open when the capture stopped): not taken as steps`]
    : [];
  const mark = (r: Range, name: string): StepMark => ({
    name,
    clock: 'host',
    device: null,
    start: r.start,
    end: r.end,
  });
  const profilerSteps = ranges.filter((r) => PROFILER_STEP.test(r.name));
  if (profilerSteps.length)
    return {
      steps: profilerSteps.map((r) => mark(r, r.name)),
      notes: [...notes, 'steps are the NVTX ranges named ProfilerStep#N'],
    };
  const chosen = mostRepeated(topLevel(ranges));
  if (!chosen)
    return { steps: [], notes: [...notes, 'no NVTX range name repeats at the top level: the whole trace is one step'] };
  return {
    steps: chosen.ranges.map((r, i) => mark(r, `${chosen.name} #${i + 1}`)),
    notes: [
      ...notes,
      `steps are the ${chosen.ranges.length} NVTX ranges named "${chosen.name}", the most repeated top-level range name`,
    ],
  };
}

/** Ranges that lie inside no other range of their thread (sorted by start, longest first at a tie). */
function topLevel(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start || b.end - a.end);
  const openUntil = new Map<number | null, number>();
  return sorted.filter((r) => {
    const until = openUntil.get(r.thread);
    if (until !== undefined && r.start < until) return false;
    openUntil.set(r.thread, r.end);
    return true;
  });
}

/** The named ranges of the most repeated name, at least two; a tie goes to the name that came first. */
function mostRepeated(ranges: readonly Range[]): { name: string; ranges: Range[] } | null {
  const byName = new Map<string, Range[]>();
  for (const r of ranges) {
    if (!r.name) continue;
    const named = byName.get(r.name);
    if (named) named.push(r);
    else byName.set(r.name, [r]);
  }
  let best: { name: string; ranges: Range[] } | null = null;
  for (const [name, named] of byName)
    if (named.length >= 2 && (!best || named.length > best.ranges.length)) best = { name, ranges: named };
  return best;
}
