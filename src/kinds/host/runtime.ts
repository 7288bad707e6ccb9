import type { HostFn } from '../../model/buffers.js';
import { UsageError } from '../../errors.js';
import type { PlanOp, Plan, Schedule } from '../../model/schedule.js';
import type { RuntimeStart, StartContext } from '../api/index.js';
import type { IssueSite, KindRuntime, KindRuntimeModule } from '../api/index.js';
import { HostBinding } from './binding.js';
import type { HostOp } from './op.js';
import { precomputeDecode } from './workers/functions.js';
import { WorkerPool } from './workers/pool.js';
import type { StageFunctionSpec } from './workers/types.js';

// The host stage on the device: its worker pool, started before any device so that a module that does not load is
// the config's error (exit 2) before anything is compiled or allocated, and closed before the run's clean-up frees
// the pinned memory the workers read; and each host op's call (binding.ts) and part in each rep (rep.ts).

/** The worker pool of a host stage on workers; null for a stage on the JS thread. */
class HostStart implements RuntimeStart {
  constructor(readonly pool: WorkerPool | null) {}

  async stop(): Promise<void> {
    await this.pool?.close();
  }
}

const hasHostOp = (s: Schedule) => s.body.some((op) => op.kind === 'host');

/** Refuses what a stage on workers cannot do, then opens its pool, every worker past loading its functions. */
async function start({ plan, signal }: StartContext): Promise<HostStart> {
  const host = plan.host;
  if (host?.thread !== 'workers') return new HostStart(null);
  const graphed = plan.schedules.find((s) => s.issue === 'graph' && hasHostOp(s));
  if (graphed) {
    throw new UsageError(
      `The host stage ${host.name} runs on worker threads, which a graph replay cannot hand chunks to (${graphed.description}).`,
      {
        hint: 'Use pipeline.mode: stream with a host stage, or host.thread: js to run it through cudaLaunchHostFunc.',
      },
    );
  }
  const gated = plan.schedules.find((s) => s.gated && hasHostOp(s));
  if (host.before && gated) {
    throw new UsageError(
      `The host stage ${host.name} has a loader, which issues each chunk once its fill finished; --gate holds the GPU until a whole rep is issued (${gated.description}).`,
      {
        hint: 'Leave out --gate with a loader: its rep times include issue, as a loader feeding a GPU does.',
      },
    );
  }
  // A task per chunk after its D2H and one per chunk before its H2D, at most, wait at once.
  const tasks = Math.max(1, ...plan.schedules.map((s) => 2 * s.body.filter((op) => op.kind === 'host').length));
  const functions: Record<string, StageFunctionSpec> = {};
  if (host.after) functions.after = workerFunction(host.after, plan);
  if (host.before) functions.before = workerFunction(host.before, plan);
  const pool = await WorkerPool.open({
    ...(host.workers === null ? {} : { workers: host.workers }),
    functions,
    stage: host.name,
    queueLimit: tasks,
    ...(signal ? { signal } : {}),
  });
  return new HostStart(pool);
}

/** A config's function as the pool runs it; decode writes each input buffer's own seeded pattern. */
function workerFunction(fn: HostFn, plan: Plan): StageFunctionSpec {
  if (fn.kind === 'module') return { kind: 'module', path: fn.path, export: fn.export };
  if (fn.kind !== 'decode') return fn;
  const inputs = plan.buffers.filter((b) => b.role === 'in' || b.role === 'inout');
  return precomputeDecode(
    {
      kind: 'decode',
      msPerMiB: fn.msPerMiB,
      buffers: Object.fromEntries(inputs.map((b) => [b.name, { type: b.type, init: b.init }])),
    },
    Object.fromEntries(inputs.map((b) => [b.name, b.bytes])),
  );
}

export class HostRuntime implements KindRuntime<HostOp> {
  constructor(readonly binding: HostBinding) {}

  issue(op: HostOp, site: IssueSite) {
    return this.binding.call(op, site);
  }

  prepareSchedule(schedule: Schedule, ops: readonly PlanOp[]) {
    return this.binding.prepare(schedule, ops);
  }
}

export const runtime: KindRuntimeModule<HostOp> = {
  start,
  open: (context) => {
    const { plan, hostBuffers } = context;
    if (!plan || !hostBuffers) throw new Error('the host stage opens with the plan and its buffers in host memory');
    // The pool `start` opened before the device; its `stop` closes it once the run is over.
    const started = context.started?.get('host');
    const pool = started instanceof HostStart ? started.pool : null;
    return new HostRuntime(new HostBinding(context.rt, plan, hostBuffers, context.cleanup, pool));
  },
};
