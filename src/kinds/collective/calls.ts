import type { Schedule } from '../../model/schedule.js';
import type { ModeResult } from '../../model/mode.js';
import { type CollectiveOp, messageBytes } from './spec.js';

/**
 * A mode's collectives a rep (the first one's kind: a config runs one): the calls one rank makes and their per-rank
 * message bytes together, from which the report gives the collective's bandwidths as nccl-tests does. A
 * data-parallel schedule over several devices holds every rank's calls; each device is one rank, so only the
 * schedule's own device's are counted (counting all of them doubled the bandwidth on two GPUs).
 */
export function collectiveCalls(
  schedule: Pick<Schedule, 'body' | 'device'>,
  deviceOf: (stream: string) => number,
): Pick<ModeResult, 'collective'> {
  const ops = schedule.body.filter(
    (o): o is CollectiveOp => o.kind === 'collective' && deviceOf(o.stream) === schedule.device,
  );
  const kind = ops[0]?.spec.collective;
  if (kind === undefined) return {};
  const same = ops.filter((o) => o.spec.collective === kind);
  return {
    collective: { collective: kind, calls: same.length, bytes: same.reduce((sum, o) => sum + messageBytes(o), 0) },
  };
}
