import type { Op } from './types.js';

/**
 * What CUDA guarantees about the order of a rep's ops, from the ops alone: an op follows every earlier op of its
 * stream, and a wait follows the last record of its event issued before it (a wait on an event not yet recorded
 * waits for nothing). Returns `before(a, b)`: true when op `a` is sure to finish before op `b` starts (indexes into
 * `ops`). The default streams' implicit synchronisation is not modelled: it only adds order.
 */
export function happensBefore(ops: readonly Op[]): (a: number, b: number) => boolean {
  // Ops are in issue order and every edge points backwards, so one pass builds each op's ancestors from those of its
  // stream's previous op and of the record it waits on, each kept with the op itself ("upTo").
  const none: ReadonlySet<number> = new Set();
  const ancestors: ReadonlySet<number>[] = [];
  const upToLastOnStream = new Map<string, ReadonlySet<number>>();
  const upToLastRecord = new Map<string, ReadonlySet<number>>();
  ops.forEach((op, i) => {
    const onStream = upToLastOnStream.get(op.stream) ?? none;
    const waitedOn = op.kind === 'wait' ? (upToLastRecord.get(op.event) ?? none) : none;
    const before = new Set([...onStream, ...waitedOn]);
    ancestors.push(before);
    const upTo = new Set([...before, i]);
    upToLastOnStream.set(op.stream, upTo);
    if (op.kind === 'record') upToLastRecord.set(op.event, upTo);
  });
  return (a, b) => (ancestors[b] ?? none).has(a);
}
