import { DeviceFailure } from '../errors.js';
import { describeContext, describeOp, modeName } from '../plan/describe.js';
import { workOpWhat } from '../kinds/index.js';
import { isWorkOp, type Op, type PlanKernel, type Schedule, type WorkOp } from '../plan/types.js';

// A rep past its deadline: what had not finished, in words. Nothing here calls CUDA but the event queries it is
// handed, which never block.

export interface UnfinishedStream {
  readonly stream: string;
  /** The work ops issued to the stream after its last completed event. */
  readonly ops: readonly WorkOp[];
}

/**
 * Per stream, the work issued after the last of its events that completed, for the streams whose next event has
 * not. A timed rep records one event per stream (its join), so this names all of a stuck stream's work; a traced rep
 * records one around every op, so this names the very op. The first stream records `end` after waiting for every
 * join: when another stream is stuck it proves nothing about the first, so it is named only when it alone is stuck.
 */
export function unfinishedStreams(
  ops: readonly Op[],
  origin: string,
  completed: (event: string) => boolean,
): UnfinishedStream[] {
  const byStream = new Map<string, { pending: WorkOp[]; stuck: boolean }>();
  for (const op of ops) {
    let state = byStream.get(op.stream);
    if (!state) byStream.set(op.stream, (state = { pending: [], stuck: false }));
    if (state.stuck) continue;
    if (isWorkOp(op)) state.pending.push(op);
    else if (op.kind === 'record') {
      if (completed(op.event)) state.pending = [];
      else state.stuck = true;
    }
  }
  const stuck = [...byStream].filter(([, s]) => s.stuck).map(([stream, s]) => ({ stream, ops: s.pending }));
  const others = stuck.filter((s) => s.stream !== origin);
  return others.length ? others : stuck;
}

/** "kernel spin (spin_forever), chunks 1, 5 and 9 of 16; D2H of "y", chunks 1, 5 and 9 of 16". */
export function summariseOps(
  ops: readonly WorkOp[],
  schedule: Pick<Schedule, 'ranges'>,
  kernels: readonly Pick<PlanKernel, 'label' | 'entry'>[],
): string {
  if (ops.length === 1) return describeOp(ops[0] as WorkOp, schedule, kernels);
  const context = describeContext(schedule, kernels);
  const groups = new Map<string, Array<number | null>>();
  for (const op of ops) {
    const what = workOpWhat(op, context);
    groups.set(what, [...(groups.get(what) ?? []), op.chunk]);
  }
  return [...groups]
    .map(([what, chunks]) => {
      const numbered = chunks.filter((c): c is number => c !== null);
      if (!numbered.length) return `${what}, whole buffers`;
      const list =
        numbered.length === 1
          ? `chunk ${numbered[0]}`
          : `chunks ${numbered.slice(0, -1).join(', ')} and ${numbered[numbered.length - 1]}`;
      return `${what}, ${list} of ${schedule.ranges.length}`;
    })
    .join('; ');
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

const TIMEOUT_HINT =
  'A kernel that never ends (a loop waiting for something that never comes) or one far slower than it was: ' +
  'the first reps of a mode wait up to --timeout seconds (default 60), later ones 20 times the slowest rep seen. ' +
  'Nothing more was run on the device; its memory is released as cuda-pipe exits.';

/** A checked rep waits after every op, so its deadline names the op. */
export function opTimeout(
  schedule: Schedule,
  op: Op,
  kernels: readonly Pick<PlanKernel, 'label' | 'entry'>[],
  deadlineMs: number,
): DeviceFailure {
  return new DeviceFailure(
    `A rep of ${modeName(schedule)} ran past its deadline of ${seconds(deadlineMs)}: ` +
      `${describeOp(op, schedule, kernels)} on stream ${op.stream} had not finished.`,
    { hint: TIMEOUT_HINT, contextLost: true },
  );
}

/** A timed or traced rep is awaited at its end: name the streams that had not got there and their work. */
export function repTimeout(
  schedule: Schedule,
  ops: readonly Op[],
  kernels: readonly Pick<PlanKernel, 'label' | 'entry'>[],
  deadlineMs: number,
  completed: (event: string) => boolean,
): DeviceFailure {
  const origin = ops.find((op) => op.kind === 'record' && op.event === schedule.end)?.stream ?? '';
  const stuck = unfinishedStreams(ops, origin, completed);
  const where = stuck.length
    ? stuck
        .map(
          (s) =>
            `stream ${s.stream} (${s.ops.length ? summariseOps(s.ops, schedule, kernels) : 'no work of its own: it waits on the others'})`,
        )
        .join('; ')
    : 'every stream reached its last event, yet the rep had not ended';
  return new DeviceFailure(
    `A rep of ${modeName(schedule)} ran past its deadline of ${seconds(deadlineMs)}; unfinished: ${where}.`,
    { hint: TIMEOUT_HINT, contextLost: true },
  );
}
