import type { KindDescription, RuntimePrimitives, StageKind } from './api/index.js';
import { collective } from './collective/index.js';
import { d2h, h2d } from './copy/index.js';
import { gemm } from './gemm/index.js';
import { host } from './host/index.js';
import { kernel } from './kernel/index.js';
import { matmul } from './matmul/index.js';
import { peer } from './peer/index.js';

// The list of stage kinds: the one place that names them. Everything else (the planner's work ops, the issuer and
// the runtimes it opens, the timeline, every picture's legend, letters, colours and engine rows, the Result's op
// kinds and sections, messages) reads it, through the modules beside this one that the core reaches by
// ./index.ts. A new kind is a folder beside these (kinds/api/ says what it holds) and a row in STAGE_KINDS.

/** The ops that do the workload's work (and show on a timeline), as opposed to ordering and timing ops. */
export type WorkOp = (typeof STAGE_KINDS)[number] extends infer K
  ? K extends KindDescription<string, infer O>
    ? O
    : never
  : never;

/** Every stage kind, in the order pictures list them: load, compute, communication, store, host work, peer copies. */
export const STAGE_KINDS = [h2d, kernel, gemm, matmul, collective, d2h, host, peer] as const;

/** A stage kind's id: the kind the Result's timeline gives an op. */
export type Stage = (typeof STAGE_KINDS)[number]['id'];

export const STAGES: readonly Stage[] = STAGE_KINDS.map((s) => s.id);

/** The ids as a non-empty tuple, for a schema's enum. */
export const STAGE_IDS = STAGE_KINDS.map((s) => s.id) as unknown as readonly [Stage, ...Stage[]];

const WORK_OP_KINDS: ReadonlySet<string> = new Set(STAGE_KINDS.map((s) => s.opKind));

export const isWorkOp = <O extends { readonly kind: string }>(op: O): op is Extract<O, WorkOp> =>
  WORK_OP_KINDS.has(op.kind);

/** A stage kind with its op type erased, so the table can be searched by a work op of any kind. */
export type AnyStage = StageKind<Stage, WorkOp, RuntimePrimitives, Record<never, never>>;

/** The list as the modules beside this one search it: each kind with its op type erased, in the list's order. */
export const table = STAGE_KINDS as unknown as readonly AnyStage[];

/** The stage kind of a work op. */
export function stageOf(op: WorkOp): AnyStage {
  const found = table.find((s) => s.opKind === op.kind && s.owns(op));
  if (!found) throw new Error(`no stage kind issues a ${op.kind} op`);
  return found;
}

/** The stage kind of a timeline kind. */
export function stage(id: Stage): AnyStage {
  const found = table.find((s) => s.id === id);
  if (!found) throw new Error(`unknown stage kind ${id}`);
  return found;
}

/** Whether some op among `ops` is of `kind`. */
export const holds = (kind: AnyStage, ops: readonly { readonly kind: string }[]) =>
  ops.some((op) => isWorkOp(op) && stageOf(op) === kind);
