// Interval arithmetic on the real line, in whatever unit the caller uses (milliseconds here). A set of intervals is
// kept as a sorted list of disjoint, non-empty [start, end) pieces, so measure, union and intersection stay linear.

export interface Interval {
  readonly start: number;
  readonly end: number;
}

/** Sorted, disjoint, non-empty intervals: the normal form every other function here takes and returns. */
export type IntervalSet = readonly Interval[];

/** Merges overlapping and touching intervals; empty and reversed ones carry no time and are dropped. */
export function union(intervals: readonly Interval[]): IntervalSet {
  const sorted = intervals.filter((i) => i.end > i.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: Interval[] = [];
  for (const next of sorted) {
    const last = merged[merged.length - 1];
    if (last && next.start <= last.end)
      merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, next.end) };
    else merged.push(next);
  }
  return merged;
}

export function intersect(a: IntervalSet, b: IntervalSet): IntervalSet {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    const start = Math.max(x.start, y.start);
    const end = Math.min(x.end, y.end);
    if (end > start) out.push({ start, end });
    // Advance whichever piece ends first: it cannot meet anything further along the other list.
    if (x.end < y.end) i += 1;
    else j += 1;
  }
  return out;
}

/** Total length covered. */
export function measure(set: IntervalSet): number {
  return set.reduce((sum, i) => sum + (i.end - i.start), 0);
}

/** The part of `set` inside [start, end). */
export function clip(set: IntervalSet, start: number, end: number): IntervalSet {
  return end > start ? intersect(set, [{ start, end }]) : [];
}

/** The part of `a` outside `b`: one sweep over both lists, linear in their lengths. */
export function subtract(a: IntervalSet, b: IntervalSet): IntervalSet {
  const out: Interval[] = [];
  let j = 0;
  for (const piece of a) {
    let start = piece.start;
    // Pieces of `b` that end before this piece starts cannot meet it or any later piece of `a`.
    while (j < b.length && b[j]!.end <= start) j += 1;
    let k = j;
    while (k < b.length && b[k]!.start < piece.end) {
      const cut = b[k]!;
      if (cut.start > start) out.push({ start, end: cut.start });
      start = Math.max(start, cut.end);
      if (cut.end >= piece.end) break;
      k += 1;
    }
    if (start < piece.end) out.push({ start, end: piece.end });
  }
  return out;
}
