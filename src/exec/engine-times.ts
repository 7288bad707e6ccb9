import { type ActivityCollection, CuptiActivity, matchActivity, openCupti, recordingCupti } from '../cuda/cupti.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import { type CuptiRecord, isWorkOp, stageOf } from '../kinds/index.js';
import type { EngineSource } from '../measure/runner.js';
import type { TracedSchedule, TracedSpan } from '../plan/trace.js';
import type { PreparedRep } from './prepared-rep.js';

// A traced rep's engine times: whether CUPTI may record it, its recording started, and each span's engine interval
// from CUPTI's records.

/** Why CUPTI must not record a rep: the first of its kinds that says so (the contract's `untraced`); null: it may. */
export const untraced = (prepared: PreparedRep): string | null => {
  for (const op of prepared.ops) if (op && isWorkOp(op) && stageOf(op).untraced) return stageOf(op).untraced ?? null;
  return null;
};

/** CUPTI recording for a traced rep issued op by op; for a graph replay, or where CUPTI will not start, why not. */
export function startCupti(rt: CudaRuntime, prepared: PreparedRep): CuptiActivity | { readonly unavailable: string } {
  if (prepared.schedule.issue === 'graph')
    return { unavailable: 'a graph replay: CUPTI ties its ops to the graph launch, not to each op' };
  const reason = untraced(prepared);
  if (reason !== null) {
    // Recording stays on from one traced rep to the next: off before the library's own threads run.
    recordingCupti()?.stop();
    return { unavailable: reason };
  }
  const cupti = openCupti();
  if (!(cupti instanceof CuptiActivity)) return cupti;
  try {
    cupti.begin();
    // The first call CUPTI sees after it starts recording, and the first correlated one, pay for its set-up: a
    // harmless query, correlated with an id no span has (0), before the rep.
    const { push, pop } = cupti.correlationThunks();
    push(0);
    rt.streams.eventQueryCode(prepared.start);
    pop();
    return cupti;
  } catch (error) {
    return { unavailable: `CUPTI would not start recording (${(error as Error).message})` };
  }
}

/** The records each span's op makes on the GPU; null for ops CUPTI is not asked about (host functions, peer copies). */
function expectedKind(span: TracedSpan): CuptiRecord | null {
  return stageOf(span.op).cupti;
}

/**
 * Each span's engine time from CUPTI's records, and the source the rep used: CUPTI when every copy and kernel got
 * its record, events otherwise, with what went wrong (a partial set would mix two clocks in one picture).
 */
export function engineTimes(
  cupti: CuptiActivity | { readonly unavailable: string },
  collection: ActivityCollection | string,
  traced: TracedSchedule,
): { spans: ReadonlyArray<{ start: number; end: number } | null>; source: EngineSource } {
  const none = (reason: string) => ({ spans: [], source: { source: 'events' as const, reason } });
  if (!(cupti instanceof CuptiActivity)) return none(`CUPTI not used: ${cupti.unavailable}`);
  if (typeof collection === 'string') return none(collection);
  const expected = traced.spans.map(expectedKind);
  const matched = matchActivity(collection, expected);
  const missing = expected.filter((kind, i) => kind !== null && !matched.spans[i]).length;
  const faults = [
    ...(missing ? [`${missing} of ${expected.filter((k) => k !== null).length} ops had no record`] : []),
    ...(matched.wrongKind ? [`${matched.wrongKind} records of an unexpected kind`] : []),
    ...(collection.dropped ? [`${collection.dropped} records dropped`] : []),
    ...(collection.malformed ? [`${collection.malformed} records unreadable`] : []),
  ];
  if (faults.length) return none(`CUPTI's records did not cover the rep (${faults.join(', ')})`);
  return { spans: matched.spans, source: { source: 'cupti' } };
}
