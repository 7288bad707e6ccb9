import type { ZodRawShape, z } from 'zod';
import type { WorkOpBase } from '../../model/schedule.js';
import type { KindCheck } from './check.js';
import type { KindConfig } from './config.js';
import type { KindDescription } from './describe.js';
import type { KindFlags } from './flags.js';
import type { KindPlanning } from './plan.js';
import type { KindReport } from './report.js';
import type { KindResult } from './result.js';
import type { KindRun, RuntimePrimitives } from './run.js';

// The contract of a stage kind, one file per part of its life: what it is (describe), how it is planned (plan) and
// issued (run), how its outputs are checked (check), what it adds to a Result and the model (result), how it reads
// and looks (report), its config entry and section (config), and what it reads from the command line and
// environment (flags).
// A kind imports this, the model (src/model/), src/cuda and the shared kinds/blas/; the list of kinds
// (kinds/list.ts) is the only module that names one.

export type * from './check.js';
export type * from './config.js';
export type * from './describe.js';
export type * from './flags.js';
export type * from './plan.js';
export type * from './report.js';
export type * from './result.js';
export type * from './run.js';
export { NOT_LAUNCHED, PENDING } from './run.js';

/** The fields a kind's `result` shape adds to a Result, as its report reads them (none for a kind without one). */
export type ResultSections<R extends ZodRawShape> = ZodRawShape extends R ? unknown : z.infer<z.ZodObject<R>>;

/**
 * One stage kind. `Id` is the kind the Result's timeline gives its ops; `O` is the plan's op it issues; `P` the
 * device calls it issues it through; `R` the fields it adds to a Result.
 */
export interface StageKind<
  Id extends string = string,
  O extends WorkOpBase = WorkOpBase,
  P = RuntimePrimitives,
  R extends ZodRawShape = ZodRawShape,
> extends KindDescription<Id, O>,
    KindPlanning<O>,
    KindRun<O, P>,
    KindCheck<O>,
    KindResult<O, R>,
    KindReport<O, ResultSections<R>>,
    KindConfig,
    KindFlags {}
