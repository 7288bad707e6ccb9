import type { Op } from './types.js';

/**
 * What CUDA guarantees about the order of a rep's ops, from the ops alone: an op follows every earlier op of its
 * stream, and a wait follows the last record of its event issued before it (a wait on an event not yet recorded
 * waits for nothing). Returns `before(a, b)`: true when op `a` is sure to finish before op `b` starts (indexes into
 * `ops`). The default streams' implicit synchronisation is not modelled: it only adds order.
 */
export function happensBefore(ops: readonly Op[]): (a: number, b: number) => boolean {
  const preds: number[][] = ops.map(() => []);
  const lastOnStream = new Map<string, number>();
  const lastRecord = new Map<string, number>();
  ops.forEach((op, i) => {
    const previous = lastOnStream.get(op.stream);
    if (previous !== undefined) preds[i]?.push(previous);
    lastOnStream.set(op.stream, i);
    if (op.kind === 'record') lastRecord.set(op.event, i);
    if (op.kind === 'wait') {
      const record = lastRecord.get(op.event);
      if (record !== undefined) preds[i]?.push(record);
    }
  });
  const ancestors = new Map<number, Set<number>>();
  const ancestorsOf = (i: number): Set<number> => {
    let set = ancestors.get(i);
    if (set) return set;
    set = new Set();
    for (const p of preds[i] ?? []) {
      set.add(p);
      for (const a of ancestorsOf(p)) set.add(a);
    }
    ancestors.set(i, set);
    return set;
  };
  // Ops are in issue order and every edge points backwards, so computing in order keeps the recursion shallow.
  for (let i = 0; i < ops.length; i++) ancestorsOf(i);
  return (a, b) => ancestorsOf(b).has(a);
}
