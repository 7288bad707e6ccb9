import { EVENT_SHAPES } from '../kinds/index.js';
import type { TracedRep } from '../result/timeline.js';
import type { GpuEvent } from '../traces/events.js';

// A Result's traced rep in the analysis core's event model, so that `run`'s report reads its reps with the same
// rules, replay and findings as `analyze` reads a user's trace. Times stay on the rep's clock (ms from its start
// event); where CUPTI timed an op its engine's interval is taken, as the rest of the analysis does. A rep has no host
// calls: each op carries the host time it was issued at (on the rep's clock, as if the start event ran when it was
// issued), which holds it in a replay.

/** The rep's GPU work as events; a copy's host memory from its buffer, where the Result names one. */
export function eventsOfRep(rep: TracedRep, hostMemoryOf: (buffer: string) => string | undefined): GpuEvent[] {
  const legacy = new Set(rep.streams.filter((s) => s.flags === 'legacy-default').map((s) => s.id));
  return rep.ops.flatMap((op): GpuEvent[] => {
    const shape = EVENT_SHAPES.get(op.kind);
    if (!shape) return [];
    const memory = op.buffer === null ? undefined : hostMemoryOf(op.buffer);
    return [
      {
        device: op.device,
        stream: op.stream,
        kind: shape.kind,
        start: op.engineStartMs ?? op.startMs,
        end: op.engineEndMs ?? op.endMs,
        bytes: shape.kind === 'memcpy' ? op.bytes : null,
        direction: shape.direction,
        hostMemory: shape.kind === 'memcpy' && (memory === 'pinned' || memory === 'pageable') ? memory : null,
        name: op.kernel ?? op.buffer ?? op.kind,
        correlation: null,
        communication: shape.communication,
        issued: op.issuedMs,
        defaultStream: legacy.has(op.stream),
        label: op.kernel ?? (op.buffer === null ? null : `buffer ${op.buffer}`),
      },
    ];
  });
}
