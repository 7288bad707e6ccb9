import type { ConfigBuffer } from '../../model/buffers.js';
import type { OutputMismatch, ToleranceRule } from '../../model/outputs.js';
import type { PlanOp, Schedule } from '../../model/schedule.js';
import { isCollectiveOp } from './spec.js';
import type { CheckFacts, CheckRecord, Comparisons, OutputCheck } from '../api/index.js';

// Whether an all-reduce really summed. Overlapped and serial are both all-reduced, so comparing them would pass a
// no-op; instead the serial mode's outputs are checked against a reference rep with the collectives left out (on one
// device, no NCCL): every rank starts from the same seeded inputs, so a sum over R ranks is R times the reference.
// For one and two ranks that is exact in floating point (x + x = 2x); over more, NCCL's order of additions rounds,
// and the check takes a tolerance.

/** Over more than two ranks without the config's verify.tolerance: float32 sums of a few equal addends. */
export const DEFAULT_REDUCTION_TOLERANCE: ToleranceRule = { relative: 1e-5, absolute: 0 };

/** Element types whose values are scaled here (NCCL's 16-bit floats are left unchecked by the rule). */
type Scaled = new (buffer: ArrayBuffer) => { [i: number]: number; readonly length: number };
const SCALED: Readonly<Record<string, Scaled>> = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int8: Int8Array,
  uint8: Uint8Array,
};

/**
 * The outputs an all-reduce decides: its own buffer, and whatever a compute step after it in the same chunk may write
 * (a kernel may write any buffer it is given, so every output counts after one).
 */
export function reducedOutputs(
  serial: Pick<Schedule, 'body'>,
  outputs: readonly ConfigBuffer[],
  facts: CheckFacts,
): ConfigBuffer[] {
  const names = new Set<string>();
  const reducedChunks = new Set<number | null>();
  for (const op of serial.body) {
    if (isCollectiveOp(op) && op.spec.collective === 'allreduce') {
      reducedChunks.add(op.chunk);
      names.add(op.spec.buffer);
      continue;
    }
    if (!('chunk' in op) || !reducedChunks.has(op.chunk) || !facts.compute(op)) continue;
    const writes = facts.writes(op);
    for (const b of writes ?? outputs.map((o) => o.name)) names.add(b);
  }
  return outputs.filter((b) => names.has(b.name) && SCALED[b.type] !== undefined);
}

/** `ranks` × the reference's window, rounded to the buffer's type as the GPU would store it (integers wrap). */
export function scaled(buffer: Pick<ConfigBuffer, 'type'>, window: Uint8Array, ranks: number): Uint8Array {
  const Kind = SCALED[buffer.type];
  if (!Kind) throw new RangeError(`no scaling for ${buffer.type}`);
  const bytes = Uint8Array.from(window);
  const view = new Kind(bytes.buffer);
  for (let i = 0; i < view.length; i++) view[i] = ranks * (view[i] as number);
  return bytes;
}

/**
 * The reduced outputs (the serial mode's) against `ranks` × the reference's, window by window: exact for one or two
 * ranks, within the tolerance over more. Returns the mismatches (first element of each buffer) and the record.
 */
export function checkReduction(
  buffers: readonly ConfigBuffer[],
  reduced: ReadonlyMap<string, readonly Uint8Array[]>,
  reference: ReadonlyMap<string, readonly Uint8Array[]>,
  ranks: number,
  tolerance: ToleranceRule | null,
  reducedPoison: number,
  { compareOutput, compareWithin }: Comparisons,
): { readonly mismatches: OutputMismatch[]; readonly record: CheckRecord } {
  const exact = ranks <= 2;
  const rule = exact ? null : (tolerance ?? DEFAULT_REDUCTION_TOLERANCE);
  const largest = { absolute: 0, relative: 0 };
  const mismatches: OutputMismatch[] = [];
  for (const buffer of buffers) {
    const ours = reduced.get(buffer.name) ?? [];
    let elements = 0;
    let first: OutputMismatch | null = null;
    let differing = 0;
    (reference.get(buffer.name) ?? []).forEach((window, i) => {
      const expected = scaled(buffer, window, ranks);
      const actual = ours[i] ?? new Uint8Array(window.byteLength);
      let mismatch: OutputMismatch | null;
      if (rule) {
        const within = compareWithin(buffer, expected, actual, reducedPoison, rule);
        largest.absolute = Math.max(largest.absolute, within.largest.absolute);
        largest.relative = Math.max(largest.relative, within.largest.relative);
        mismatch = within.mismatch;
      } else mismatch = compareOutput(buffer, expected, actual, reducedPoison);
      if (mismatch) {
        first ??= { ...mismatch, index: mismatch.index + elements };
        differing += mismatch.differing;
      }
      elements += window.byteLength / buffer.elementBytes;
    });
    if (first) mismatches.push({ ...(first as OutputMismatch), differing });
  }
  const list = buffers.map((b) => `${b.elements} of "${b.name}"`).join(', ');
  const how = exact ? 'exactly' : `within ${rule?.relative} relative, ${rule?.absolute} absolute`;
  return {
    mismatches,
    record: {
      rule: 'allreduce-sum',
      text: `all-reduce (sum) over ${ranks} rank${ranks === 1 ? '' : 's'} of equal inputs: serial's ${list} equal ${ranks} × those of serial with its collectives left out, ${how}`,
      ranks,
      buffers: buffers.map((b) => ({ name: b.name, elements: b.elements })),
      exact,
      ...(rule ? { tolerance: { ...rule, largestError: largest } } : {}),
      status: mismatches.length ? 'failed' : 'passed',
    },
  };
}

/**
 * The serial mode without its collectives, for checking what an all-reduce summed: every op stays (the compute after
 * a collective then reads the bucket unreduced), and the mode runs on its device alone, without NCCL. Undefined for
 * a plan without all-reduces.
 */
export function referenceSchedule(serial: Schedule): Schedule | undefined {
  if (!serial.body.some((op) => isCollectiveOp(op) && op.spec.collective === 'allreduce')) return undefined;
  return {
    ...serial,
    id: `${serial.id}:reference`,
    description: `${serial.description}, its collectives left out (the reference an all-reduce is checked against)`,
    body: serial.body.filter((op) => op.kind !== 'collective'),
    verify: false,
    bytes: { h2d: serial.bytes.h2d, d2h: serial.bytes.d2h },
  };
}

/** A reduce-scatter's outputs depend on the bucket count: each layout is checked against itself serialised. */
const bucketed = (body: readonly PlanOp[]) =>
  body.some((op) => isCollectiveOp(op) && op.spec.collective === 'reducescatter');

/** The all-reduce's check (the contract's `check`). */
export const reductionCheck: OutputCheck = {
  reference: referenceSchedule,
  outputs: reducedOutputs,
  compare: checkReduction,
  layoutDependent: bucketed,
};
