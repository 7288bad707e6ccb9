import type { ChunkWork, DescribeContext, TimelineFields } from './api/index.js';
import { isWorkOp, stageOf, table, type WorkOp } from './list.js';

// A work op as the core reads it through its kind: planned for a chunk's phase, described, drawn on the timeline,
// its bytes counted, its GPU work named, its outputs verified, its noun counted in the printed plan.

export const describeWorkOp = (op: WorkOp, context: DescribeContext): string => stageOf(op).describe(op, context);
export const workOpWhat = (op: WorkOp, context: DescribeContext): string => stageOf(op).what(op, context);

export const timelineFields = (
  op: WorkOp,
  kernelBytes: (op: { kernel: string; count: number }) => number,
): TimelineFields => stageOf(op).timeline(op, kernelBytes);

/**
 * A chunk's ops of one phase: loads and stores each stage kind of that phase in the table's order; the compute
 * steps in the config's order, each planned by its own kind, so kernels and library calls interleave as listed.
 */
export function phaseOps(phase: 'load' | 'compute' | 'store', work: ChunkWork): WorkOp[] {
  if (phase !== 'compute') return table.flatMap((s) => (s.phase === phase && s.plan ? s.plan(work) : []));
  return work.compute.flatMap((step) => {
    const kind = table.find((s) => s.id === step.stage);
    if (!kind?.planStep) throw new Error(`no compute stage kind plans a ${step.stage} step (${step.label})`);
    return kind.planStep(step, work);
  });
}

/** The bytes a body's work ops move, by the schedule's byte count each adds to. */
export function opBytes(ops: readonly { readonly kind: string }[]): {
  h2d: number;
  d2h: number;
  peer: number;
  collective: number;
} {
  const bytes = { h2d: 0, d2h: 0, peer: 0, collective: 0 };
  for (const op of ops) {
    if (!isWorkOp(op)) continue;
    const moved = stageOf(op).moves(op);
    if (moved) bytes[moved.count] += moved.bytes;
  }
  return bytes;
}

/** The GPU work a body's ops run, by label, each once: a failure's "kernels in flight". */
export const workNames = (ops: readonly ({ readonly kind: string } | undefined)[]): string[] => [
  ...new Set(ops.flatMap((op) => (op && isWorkOp(op) ? stageOf(op).names(op) : []))),
];

/**
 * Whether an output buffer may take the config's tolerance: some op of the schedule that may write it is of a kind
 * whose results may vary by layout. Otherwise it verifies byte for byte.
 */
export function takesTolerance(buffer: string, ops: readonly { readonly kind: string }[]): boolean {
  return ops.some((op) => {
    if (!isWorkOp(op)) return false;
    const kind = stageOf(op);
    if (kind.verify !== 'tolerance') return false;
    const writes = kind.writes(op);
    return writes === null || writes.includes(buffer);
  });
}

/** The printed plan's count of each noun the table's kinds are counted as, in the table's order. */
export function nounCounts(
  ops: readonly { readonly kind: string }[],
): { one: string; many: string; always: boolean; count: number }[] {
  const counts = new Map<string, { one: string; many: string; always: boolean; count: number }>();
  for (const s of table)
    if (s.look.noun && !counts.has(s.look.noun.one)) counts.set(s.look.noun.one, { ...s.look.noun, count: 0 });
  for (const op of ops) {
    const noun = isWorkOp(op) ? stageOf(op).look.noun : null;
    const entry = noun && counts.get(noun.one);
    if (entry) entry.count += 1;
  }
  return [...counts.values()];
}
