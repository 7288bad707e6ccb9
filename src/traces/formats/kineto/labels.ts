import type { HostCall } from '../../events.js';

// The ranges that name launches (PyTorch ops, the program's own record_function and NVTX ranges) are most of a
// Kineto trace's events: 1.7 million in the 1 GB trace of docs/measurements/2026-11-28-analyze-rss/. They are held
// only until every launch has its label, and in columns (a range's times, thread and name as numbers), since as
// objects they took about 160 MB at the peak of analyze's memory.

/** The host ranges of a trace, a column a field: each is a PyTorch op or a range of the program's own. */
export class HostRanges {
  private starts = new Float64Array(1024);
  private ends = new Float64Array(1024);
  private names = new Int32Array(1024);
  private annotations = new Uint8Array(1024);
  private threadOf: (number | null)[] = [];
  private count = 0;
  private readonly nameIds = new Map<string, number>();
  readonly nameList: string[] = [];

  get length(): number {
    return this.count;
  }

  /** A range on a host thread; `annotation`: the program's own (`user_annotation`), else a PyTorch op. */
  push(name: string, start: number, end: number, thread: number | null, annotation: boolean): void {
    if (this.count === this.starts.length) this.grow();
    let id = this.nameIds.get(name);
    if (id === undefined) {
      id = this.nameList.length;
      this.nameList.push(name);
      this.nameIds.set(name, id);
    }
    const i = this.count++;
    this.starts[i] = start;
    this.ends[i] = end;
    this.names[i] = id;
    this.annotations[i] = annotation ? 1 : 0;
    this.threadOf.push(thread);
  }

  start(i: number): number {
    return this.starts[i]!;
  }
  end(i: number): number {
    return this.ends[i]!;
  }
  name(i: number): number {
    return this.names[i]!;
  }
  annotation(i: number): boolean {
    return this.annotations[i] === 1;
  }
  thread(i: number): number | null {
    return this.threadOf[i]!;
  }

  private grow(): void {
    const size = this.starts.length * 2;
    const wider = <T extends Float64Array | Int32Array | Uint8Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.starts = wider(this.starts, new Float64Array(size));
    this.ends = wider(this.ends, new Float64Array(size));
    this.names = wider(this.names, new Int32Array(size));
    this.annotations = wider(this.annotations, new Uint8Array(size));
  }
}

/**
 * Each launch's name in the program's terms: the innermost PyTorch op around its call on the same thread, and the
 * outermost range of the program's own around it ("aten::copy_ in load_batch"). One sweep per thread over the ranges
 * by start (the outer first at equal starts) with a stack of the open ones. A label of two names is made once.
 */
export function launchLabels(calls: readonly HostCall[], ranges: HostRanges): Map<number, string> {
  const labels = new Map<number, string>();
  const byThread = new Map<number | null, { ranges: number[]; calls: HostCall[] }>();
  const of = (thread: number | null) => {
    let entry = byThread.get(thread);
    if (!entry) byThread.set(thread, (entry = { ranges: [], calls: [] }));
    return entry;
  };
  for (let r = 0; r < ranges.length; r++) of(ranges.thread(r)).ranges.push(r);
  for (const call of calls)
    if (call.kind === 'launch' && call.correlation !== null) of(call.thread ?? null).calls.push(call);
  const names = ranges.nameList;
  const pairs = new Map<number, string>();
  const labelOf = (op: number, annotation: number) => {
    const key = op * names.length + annotation;
    let label = pairs.get(key);
    if (label === undefined) pairs.set(key, (label = `${names[op]} in ${names[annotation]}`));
    return label;
  };
  for (const { ranges: own, calls: launches } of byThread.values()) {
    if (!own.length || !launches.length) continue;
    own.sort((a, b) => ranges.start(a) - ranges.start(b) || ranges.end(b) - ranges.end(a));
    launches.sort((a, b) => a.start - b.start);
    const open: number[] = [];
    let next = 0;
    for (const call of launches) {
      while (next < own.length && ranges.start(own[next]!) <= call.start) {
        const range = own[next++]!;
        while (open.length && ranges.end(open[open.length - 1]!) <= ranges.start(range)) open.pop();
        open.push(range);
      }
      while (open.length && ranges.end(open[open.length - 1]!) < call.end) open.pop();
      let op = -1;
      for (let k = open.length - 1; k >= 0 && op < 0; k--)
        if (!ranges.annotation(open[k]!) && ranges.end(open[k]!) >= call.end) op = open[k]!;
      const annotation = open.find((r) => ranges.annotation(r) && ranges.end(r) >= call.end) ?? -1;
      const label =
        op >= 0 && annotation >= 0
          ? labelOf(ranges.name(op), ranges.name(annotation))
          : op >= 0
            ? names[ranges.name(op)]
            : annotation >= 0
              ? names[ranges.name(annotation)]
              : undefined;
      if (label !== undefined) labels.set(call.correlation!, label);
    }
  }
  return labels;
}
