import type { GpuEvent, HostCall, ParsedTrace, StepMark } from '../traces/events.js';

// Where each step lies on one device's GPU clock. A `ProfilerStep#N` on the CPU is mapped to the GPU through the
// work launched inside it: the host calls within its span give correlation ids, and the GPU events with those ids
// span the step's GPU time. A `gpu_user_annotation` (or a cuda-pipe rep) is a span of GPU time, but Kineto gives
// each kernel to the innermost annotation only: under DDP on two H100s the step's own annotation spanned 17 µs of a
// 16 ms step, the rest sitting under `DistributedDataParallel.forward` and the like. So the launches decide, and an
// annotation only widens the span they give; it is taken as it is where the trace has no CPU steps. Without steps
// the whole trace is one.

export interface StepWindow {
  readonly name: string;
  /** GPU time, ms on the trace's clock. */
  readonly start: number;
  readonly end: number;
  /** The step's span on the CPU, where the trace marks one: host-sync looks for synchronizes inside it. */
  readonly host: { readonly start: number; readonly end: number } | null;
}

export function stepWindows(trace: ParsedTrace, device: number, events: readonly GpuEvent[]): StepWindow[] {
  const hostMarks = sortedMarks(trace.steps.filter((s) => s.clock === 'host'));
  const hostByName = new Map(hostMarks.map((m) => [m.name, m]));
  const gpuMarks = sortedMarks(mergedByName(trace.steps.filter((s) => s.clock === 'gpu' && s.device === device)));
  const launched = hostMarks.length ? fromHostMarks(hostMarks, trace.host, events) : [];
  if (launched.length) {
    const gpuByName = new Map(gpuMarks.map((m) => [m.name, m]));
    return launched.map((w) => {
      const mark = gpuByName.get(w.name);
      return mark ? { ...w, start: Math.min(w.start, mark.start), end: Math.max(w.end, mark.end) } : w;
    });
  }
  if (gpuMarks.length)
    return gpuMarks.map((m) => ({ name: m.name, start: m.start, end: m.end, host: hostSpan(hostByName.get(m.name)) }));
  if (!events.length) return [];
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const e of events) {
    start = Math.min(start, e.start);
    end = Math.max(end, e.end);
  }
  return [{ name: 'whole trace', start, end, host: null }];
}

/**
 * Kineto writes a step's `gpu_user_annotation` once per stream, each spanning only that stream's work (on an H100 the
 * H2D stream's 1.22 ms of a 3.34 ms step): the step is their union, from the first start to the last end.
 */
function mergedByName(marks: readonly StepMark[]): StepMark[] {
  const byName = new Map<string, StepMark>();
  for (const mark of marks) {
    const seen = byName.get(mark.name);
    byName.set(
      mark.name,
      seen ? { ...seen, start: Math.min(seen.start, mark.start), end: Math.max(seen.end, mark.end) } : mark,
    );
  }
  return [...byName.values()];
}

function sortedMarks(marks: readonly StepMark[]): StepMark[] {
  return [...marks].sort((a, b) => a.start - b.start || a.end - b.end);
}

function hostSpan(mark: StepMark | undefined): StepWindow['host'] {
  return mark ? { start: mark.start, end: mark.end } : null;
}

/**
 * Each host step's GPU span: from the first to the last GPU event its launches made. Steps that launched nothing on
 * this device are left out.
 */
function fromHostMarks(
  marks: readonly StepMark[],
  calls: readonly HostCall[],
  events: readonly GpuEvent[],
): StepWindow[] {
  const stepOf = new Map<number, number>();
  for (const call of calls) {
    if (call.kind !== 'launch' || call.correlation === null) continue;
    const index = containing(marks, call.start);
    if (index !== null) stepOf.set(call.correlation, index);
  }
  const spans = marks.map(() => ({ start: Number.POSITIVE_INFINITY, end: Number.NEGATIVE_INFINITY }));
  for (const e of events) {
    const index = e.correlation === null ? undefined : stepOf.get(e.correlation);
    if (index === undefined) continue;
    const span = spans[index]!;
    span.start = Math.min(span.start, e.start);
    span.end = Math.max(span.end, e.end);
  }
  return marks.flatMap((m, i) => {
    const span = spans[i]!;
    return span.end > span.start
      ? [{ name: m.name, start: span.start, end: span.end, host: { start: m.start, end: m.end } }]
      : [];
  });
}

/** The last mark starting at or before `time` whose span holds it (marks sorted by start; steps do not nest). */
function containing(marks: readonly StepMark[], time: number): number | null {
  let lo = 0;
  let hi = marks.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (marks[mid]!.start <= time) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && time < marks[found]!.end ? found : null;
}

/** Each window's ops, by index in `ops`: those starting inside it (the last window starting at or before the op). */
export function stepMembers(ops: readonly Pick<GpuEvent, 'start'>[], windows: readonly StepWindow[]): number[][] {
  const members = windows.map((): number[] => []);
  const order = windows.map((_, s) => s).sort((a, b) => windows[a]!.start - windows[b]!.start);
  const starts = order.map((s) => windows[s]!.start);
  ops.forEach((op, i) => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! <= op.start) lo = mid + 1;
      else hi = mid;
    }
    const s = lo > 0 ? order[lo - 1]! : -1;
    if (s >= 0 && op.start < windows[s]!.end) members[s]!.push(i);
  });
  return members;
}
