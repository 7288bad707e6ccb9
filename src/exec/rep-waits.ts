import { CudaError } from '../cuda/error.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import { DeviceFailure, Interrupted } from '../errors.js';
import { type Agreement, type KindRuntimes, PENDING, type RepWatch, stageOf, workNames } from '../kinds/index.js';
import type { RepOptions } from '../measure/runner.js';
import { describeOp } from '../plan/describe.js';
import { isWorkOp, type Plan, scheduleOps } from '../plan/types.js';
import type { HostCalls } from './host-calls.js';
import type { PreparedRep } from './prepared-rep.js';
import { repTimeout } from './timeouts.js';
import { TIMED_OUT, type WaitCheck, type Waiter } from './wait.js';

// How a rep's waits end and how its failures are named: the end event awaited within the deadline, a kind's watch
// polled on the way (a collective's communicators), an op that answered PENDING waited for, and a CUDA error turned
// into the op or the mode it happened in.

/** How long a failed rep's queued work may take to drain before clean-up goes ahead regardless. */
export const DRAIN_MS = 10_000;

/**
 * How long a rep whose kind's work may never end by itself (a collective) may go on after Ctrl-C or SIGTERM before that
 * work is aborted.
 */
const SIGNAL_GRACE_MS = 1_000;

export class RepWaits {
  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Pick<Plan, 'kernels'>,
    private readonly waiter: Waiter,
    private readonly runtimes: KindRuntimes,
    private readonly hostCalls: HostCalls,
    /** The ranks' agreement where this process is one rank of a launch, for whose words a failure uses. */
    private readonly agreement: Agreement | undefined,
  ) {}

  /** The watch of the first kind among the rep's ops whose runtime has one (a collective's communicators). */
  watchOf(prepared: PreparedRep): RepWatch | undefined {
    for (const op of prepared.ops) {
      if (!op || !isWorkOp(op)) continue;
      const watch = this.runtimes.get(stageOf(op).id)?.watch;
      if (watch) return watch;
    }
    return undefined;
  }

  /**
   * What a wait on a rep with collectives asks as it polls: a communicator's asynchronous error (a peer that failed)
   * ends it at once, and a signal ends it after SIGNAL_GRACE_MS, with the communicators aborted so that NCCL's
   * kernels let go of the GPU: a collective whose peer stopped never ends by itself. Null for a plan without one.
   */
  watchCheck(prepared: PreparedRep, signal: AbortSignal | undefined): WaitCheck | undefined {
    const watch = this.watchOf(prepared);
    if (!watch) return undefined;
    let signalledAt: number | null = null;
    return () => {
      const failure = watch.failure();
      if (failure) {
        watch.abortAll();
        throw new DeviceFailure(`${failure.message}, during the ${prepared.schedule.description} mode.`, {
          hint: failure.hint,
          cause: failure,
          contextLost: true,
        });
      }
      if (!signal?.aborted) return;
      signalledAt ??= performance.now();
      if (performance.now() - signalledAt < SIGNAL_GRACE_MS) return;
      watch.abortAll();
      throw new Interrupted(
        `Interrupted (${String(signal.reason)}) during a rep of the ${prepared.schedule.description} mode, whose ${watch.words.work} had not ended ${SIGNAL_GRACE_MS / 1000} s later (${watch.words.waiting}): ${watch.words.aborted} and nothing was written.`,
        { contextLost: true },
      );
    };
  }

  /**
   * Op `index` answered `code`, not success: a failure, or a nonblocking communicator's call that NCCL finishes on
   * its own thread, which the next op waits for until it is enqueued. Called only off the issue loop's fast path.
   */
  async notIssued(
    prepared: PreparedRep,
    index: number,
    code: number,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (code !== PENDING) throw this.opFailure(prepared, index, code, 'issuing');
    const watch = this.watchOf(prepared);
    if (!watch)
      throw new Error(
        `schedule ${prepared.schedule.id}: op ${index} answered that its library finishes it, but no kind's runtime watches it`,
      );
    const op = prepared.ops[index];
    await watch.settle(
      `Issuing ${op ? describeOp(op, prepared.schedule, this.plan.kernels) : 'a collective'} in the ${prepared.schedule.description} mode`,
      {
        timeoutMs: Number.isFinite(deadline) ? Math.max(0, deadline - performance.now()) : DRAIN_MS,
        signal,
      },
    );
  }

  async waitEnd(
    prepared: PreparedRep,
    deadline: number,
    options: Pick<RepOptions, 'deadlineMs' | 'signal'>,
  ): Promise<void> {
    const { deadlineMs } = options;
    const code = await this.waiter.event(prepared.end, deadline, this.watchCheck(prepared, options.signal));
    if (code === TIMED_OUT) {
      // Event queries never block, so asking which streams got through is safe behind a runaway kernel.
      const completed = (event: string) => {
        const handle = prepared.events.get(event);
        return handle !== undefined && this.rt.streams.eventQueryCode(handle) === 0;
      };
      const error = repTimeout(
        prepared.schedule,
        scheduleOps(prepared.schedule),
        this.plan.kernels,
        deadlineMs ?? 0,
        completed,
      );
      const watch = this.watchOf(prepared);
      if (!watch) throw error;
      // A collective past its deadline waits for a rank that is not coming: aborting lets NCCL's kernels go.
      watch.abortAll();
      throw new DeviceFailure(
        `${error.message} ${this.agreement ? 'This rank' : 'This process'} waited for the other ranks in that collective; ${watch.words.aborted}.`,
        {
          hint: 'Look at the other ranks’ output for one that failed, stopped or ran another config; every rank must run the same config with the same flags.',
          cause: error,
          contextLost: true,
        },
      );
    }
    if (code !== 0) throw this.repFailure(prepared, this.rt.failure(code, 'waiting for the end of a rep'));
    this.hostCalls.endRep();
  }

  opFailure(prepared: PreparedRep, index: number, code: number, phase: 'issuing' | 'running'): Error {
    const op = prepared.ops[index];
    const error = this.rt.failure(code, phase === 'issuing' ? 'issuing an op' : 'cudaStreamQuery');
    if (!op) return error;
    const what = describeOp(op, prepared.schedule, this.plan.kernels);
    const message =
      `${error instanceof CudaError ? `${error.errorName} (${error.code}): ${error.errorMessage}` : error.message} ` +
      `while ${phase} ${what} on stream ${op.stream} of the ${prepared.schedule.description} mode.`;
    return new DeviceFailure(message, {
      hint: isWorkOp(op) ? stageOf(op).failureHint : undefined,
      cause: error,
    });
  }

  repFailure(prepared: PreparedRep, error: unknown): Error {
    if (error instanceof CudaError) {
      const kernels = workNames(prepared.ops.filter((o) => o !== null));
      return new DeviceFailure(
        `${error.errorName} (${error.code}): ${error.errorMessage} during the ${prepared.schedule.description} mode` +
          (kernels.length ? ` (kernels in flight: ${kernels.join(', ')}).` : '.'),
        { cause: error },
      );
    }
    return error as Error;
  }
}
