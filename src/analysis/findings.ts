import { formatMs } from '../format.js';
import type { Finding, FindingCode } from './document.js';
import { KINETO_DEFAULT_STREAM } from '../analyze/kineto.js';
import type { StakeCode, StepMetrics } from './metrics.js';
import type { ParsedTrace } from './events.js';

// Closed codes, each with a sentence and the milliseconds at stake per step, largest first. A finding is listed
// when it is at stake in some step and its mean over the steps is at least LEAST_SHARE of the median step: smaller
// ones are within what a profiler's own timing moves.

export const LEAST_SHARE = 0.005;

/** Which stream is the legacy default one, as each format tells it: Kineto by an assumption, nsys by the export itself. */
const DEFAULT_STREAM: Readonly<Record<ParsedTrace['format'], string>> = {
  kineto: `stream ${KINETO_DEFAULT_STREAM}, as CUPTI numbers it; an assumption`,
  nsys: "the export's own null stream",
  'cuda-pipe': 'as the trace names it',
};

const SAY: Readonly<Record<FindingCode, (ms: string, format: ParsedTrace['format']) => string>> = {
  'pageable-copy': (ms) =>
    `Copies from or to pageable host memory take ${ms} a step: the driver stages them through a pinned buffer and the host waits for them. Pin the host tensors (pin_memory=True in the DataLoader, tensor.pin_memory()).`,
  'default-stream': (ms, format) =>
    `Work on the legacy default stream (${DEFAULT_STREAM[format]}) takes ${ms} a step: it waits for every other stream and holds them up. Issue it on a stream of its own.`,
  'serialised-copies': (ms) =>
    `Copies in one direction on different streams waited ${ms} a step for each other, each issued while the other ran: they could have overlapped. At most that much is at stake, since copies of one direction share a link.`,
  'copy-on-compute-stream': (ms) => `Copies on a stream that runs kernels take ${ms} a step with no kernel beside them: on a stream of their own they could run under the kernels.`,
  'exposed-communication': (ms) =>
    `NCCL communication runs ${ms} a step with no computation beside it: start it earlier (DDP's buckets, bucket_cap_mb) or give it more compute to hide under.`,
  'host-sync': (ms) =>
    `A synchronize in the middle of a step leaves the GPU idle ${ms} a step while the step goes on issuing work (.item(), .cpu() and printing a GPU tensor synchronize). Move it to the step's end or remove it.`,
  'host-bound': (ms) =>
    `The GPU waits ${ms} a step for launches: its work starts as soon as the host has issued it. Fewer, larger kernels or CUDA graphs (torch.compile's reduce-overhead mode) cut the launches.`,
};

export function findingsOf(place: Pick<Finding, 'file' | 'device' | 'rank'>, format: ParsedTrace['format'], steps: readonly StepMetrics[], medianStepMs: number): Finding[] {
  if (!steps.length) return [];
  const codes = Object.keys(SAY) as StakeCode[];
  return codes
    .flatMap((code): Finding[] => {
      const stakes = steps.map((s) => s.stakes[code]);
      const found = stakes.filter((ms) => ms > 0).length;
      const ms = stakes.reduce((a, b) => a + b, 0) / steps.length;
      if (!found || ms < LEAST_SHARE * medianStepMs) return [];
      return [{ code, ...place, ms, steps: found, message: SAY[code](formatMs(ms), format) }];
    })
    .sort((a, b) => b.ms - a.ms);
}
