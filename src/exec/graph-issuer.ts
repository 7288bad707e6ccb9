import type { CudaRuntime } from '../cuda/runtime.js';
import type { Op, Schedule } from '../plan/types.js';
import type { Cleanup } from './cleanup.js';
import type { DirectIssuer } from './issue.js';
import type { Issuer, PreparedRep } from './prepared-rep.js';

/**
 * Replays a schedule's body as a CUDA graph: the body is captured once from the first stream, forking every other
 * stream from it with an event inside the capture and joining them back the same way, instantiated once, and each
 * rep issues the prologue, one graph launch and the epilogue. Capture and instantiation are timed apart (host
 * timers), since a program pays them once however many times it replays.
 */
export class GraphIssuer implements Issuer {
  constructor(
    private readonly rt: CudaRuntime,
    private readonly direct: DirectIssuer,
    private readonly cleanup: Cleanup,
  ) {}

  prepare(schedule: Schedule): PreparedRep {
    const { rt, cleanup } = this;
    const [origin, ...others] = schedule.streams;
    if (!origin) throw new Error(`schedule ${schedule.id} has no stream`);
    const forkJoin = [
      { id: 'capture:fork', timing: false },
      ...others.map((s) => ({ id: `capture:join:${s.id}`, timing: false })),
    ];
    const bound = this.direct.bind({ ...schedule, events: [...schedule.events, ...forkJoin] });
    const fork: Op[] = [
      { kind: 'record', stream: origin.id, event: 'capture:fork' },
      ...others.map((s): Op => ({ kind: 'wait', stream: s.id, event: 'capture:fork' })),
    ];
    const join: Op[] = others.flatMap((s): Op[] => [
      { kind: 'record', stream: s.id, event: `capture:join:${s.id}` },
      { kind: 'wait', stream: origin.id, event: `capture:join:${s.id}` },
    ]);
    const hostTags = new Map<number, number>();
    // Timing events of a traced schedule must be graph nodes to be recorded on replay; ordering events must not.
    const body = schedule.body.map((op, i) => {
      const thunk = bound.thunk(op, { external: op.kind === 'record' && op.event.startsWith('trace:') });
      if (thunk.hostTag !== null) hostTags.set(i, thunk.hostTag);
      return thunk.issue;
    });
    const captured = [...fork.map((op) => bound.thunk(op).issue), ...body, ...join.map((op) => bound.thunk(op).issue)];
    const originStream = bound.stream(origin.id);
    const captureStart = performance.now();
    rt.graphs.beginCapture(originStream, 'thread-local');
    try {
      for (const issue of captured) {
        const code = issue();
        if (code !== 0) throw rt.failure(code, 'capturing a graph', `schedule ${schedule.id}`);
      }
    } catch (error) {
      // End the capture so the stream is usable again; the capture's own error is the one to report.
      try {
        rt.graphs.destroy(rt.graphs.endCapture(originStream));
      } catch {
        /* an invalidated capture has no graph to destroy */
      }
      throw error;
    }
    const graph = rt.graphs.endCapture(originStream);
    cleanup.push(() => rt.graphs.destroy(graph));
    const instantiateStart = performance.now();
    const exec = rt.graphs.instantiate(graph);
    const instantiated = performance.now();
    cleanup.push(() => rt.graphs.destroyExec(exec));
    const prologue = schedule.prologue.map((op) => bound.thunk(op).issue);
    const epilogue = schedule.epilogue.map((op) => bound.thunk(op).issue);
    const ops = [...schedule.prologue, null, ...schedule.epilogue];
    return {
      schedule,
      ops,
      thunks: [...prologue, rt.graphs.launchThunk(exec, originStream), ...epilogue],
      opStreams: ops.map((op) => bound.stream(op?.stream ?? origin.id)),
      events: bound.events,
      start: bound.event(schedule.start),
      end: bound.event(schedule.end),
      startIndex: schedule.prologue.findIndex((op) => op.kind === 'record' && op.event === schedule.start),
      bodyThunkIndex: () => schedule.prologue.length,
      hostTags,
      // A graph replay records no event a worker could be handed a chunk by: the host stage's start refuses the pair.
      rep: null,
      setup: { captureMs: instantiateStart - captureStart, instantiateMs: instantiated - instantiateStart },
    };
  }
}
