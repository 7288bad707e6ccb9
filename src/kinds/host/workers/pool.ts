import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Interrupted, UsageError } from '../../../errors.js';
import { HostStageFailure } from './failure.js';
import { checkStageModules } from './modules.js';
import { loadedIn, tooSlow } from './loading.js';
import { packageRoot } from '../../../paths.js';
import { defaultWorkers, MODULE_LOAD_TIMEOUT_MS, type PoolOptions, TASK_TIMEOUT_MS } from './options.js';
import type { TaskResult } from './timing.js';
import { CONTROL_HEADER, type WorkerMessage, type WorkerSetup, type WorkerTask } from './types.js';

const DEFAULT_QUEUE_LIMIT = 256;

/**
 * The worker script, compiled into dist/ beside this module. Found from the package root rather than from
 * import.meta.url, which inside the CLI's build (dist/cli/, scripts/bundle-cli.mjs) is a chunk's.
 */
const WORKER_SCRIPT = () => pathToFileURL(join(packageRoot(), 'dist', 'src', 'kinds', 'host', 'workers', 'worker.js'));
/**
 * Tasks sent to a worker before it answered: with two, the next task already waits in the worker when one ends,
 * so a worker does not idle for a round trip through the main thread between tasks (milliseconds on a busy host).
 */
const IN_FLIGHT = 2;

interface Pending {
  readonly id: number;
  readonly task: WorkerTask;
  readonly queuedMs: number;
  readonly resolve: (result: TaskResult) => void;
  readonly reject: (error: unknown) => void;
  /** How long its function may run. */
  readonly timeoutMs: number;
  /** Its deadline's timer, cleared once it is answered. */
  timer?: NodeJS.Timeout;
}

export interface Thread {
  readonly index: number;
  readonly worker: Worker;
  /** Tasks sent and not answered, in the order sent: the worker runs the first. */
  readonly sent: Pending[];
  busyMs: number;
  alive: boolean;
  /** The user's module the worker is loading, from its 'loading' message; null before and after. */
  loading: { readonly fn: string; readonly path: string } | null;
  /** Resolves once the worker is past its own imports (koffi among them): it sent a message, or it ended. */
  readonly native: Promise<void>;
}

/** A time a worker sent (ms since the epoch) on this thread's performance.now() clock. */
const fromEpoch = (epochMs: number) => epochMs - performance.timeOrigin;

const interrupted = (workers: number) =>
  new Interrupted(`interrupted: ended the host stage's ${workers} worker threads`);

const chunkName = (task: WorkerTask) => (task.chunk === null ? 'the whole buffers' : `chunk ${task.chunk}`);

/**
 * A pool of worker threads running a host stage's functions over chunks of pinned memory; each worker runs one task
 * at a time, and tasks start in submission order. A function that throws fails its task (HostStageFailure, exit 4) and
 * the pool stays
 * usable; a worker that dies fails every unfinished task and closes the pool. Idle workers do not keep the process
 * alive; a worker with a task does.
 */
export class WorkerPool {
  private readonly threads: Thread[];
  private readonly queue: Pending[] = [];
  private readonly queueLimit: number;
  private nextId = 0;
  private closing: Promise<void> | null = null;
  private closedBy: unknown = null;
  private generation = 0;
  // A pool left open when nothing else keeps the process alive (its idle workers are unref'd) is closed before the
  // process exits: Node tearing down live threads that loaded koffi at exit can abort the process (seen under load).
  private readonly onBeforeExit = () => void this.close();

  private readonly runningTasks: Int32Array;
  private readonly originMs: number;

  private constructor(
    threads: Thread[],
    private readonly options: PoolOptions,
    private readonly control: Int32Array,
    shared: { readonly running: SharedArrayBuffer; readonly originMs: number },
  ) {
    this.threads = threads;
    this.queueLimit = options.queueLimit ?? DEFAULT_QUEUE_LIMIT;
    this.runningTasks = new Int32Array(shared.running);
    this.originMs = shared.originMs;
  }

  /**
   * Starts the workers and waits until every one loaded its functions. A user's module that does not load is a
   * UsageError naming the file and the loader's message; every worker is ended first.
   */
  static async open(options: PoolOptions): Promise<WorkerPool> {
    const count = options.workers ?? defaultWorkers();
    if (!Number.isInteger(count) || count < 1)
      throw new UsageError(`workers: ${count} is not a whole number of at least 1`);
    if (options.signal?.aborted) throw interrupted(0);
    checkStageModules(options.functions);
    const control = new SharedArrayBuffer(
      4 * (CONTROL_HEADER + (options.flags ?? options.queueLimit ?? DEFAULT_QUEUE_LIMIT)),
    );
    const shared = {
      running: new SharedArrayBuffer(4 * 2 * count),
      originMs: Math.floor(performance.timeOrigin + performance.now()),
    };
    const threads = Array.from({ length: count }, (_, index): Thread => {
      const setup: WorkerSetup = { index, functions: options.functions, control, ...shared };
      const worker = new Worker(WORKER_SCRIPT(), { workerData: setup });
      const native = new Promise<void>((resolve) =>
        worker
          .once('message', () => resolve())
          .once('exit', () => resolve())
          .once('error', () => resolve()),
      );
      return { index, worker, sent: [], busyMs: 0, alive: true, loading: null, native };
    });
    const pool = new WorkerPool(threads, options, new Int32Array(control), shared);
    const timeoutMs = options.loadTimeoutMs ?? MODULE_LOAD_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => {};
    const stopped = new Promise<unknown>((resolve) => {
      timer = setTimeout(() => resolve(tooSlow(threads, timeoutMs)), timeoutMs);
      onAbort = () => resolve(interrupted(count));
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
    const loaded = Promise.allSettled(threads.map((thread) => loadedIn(thread))).then(
      (starts) => starts.find((start): start is PromiseRejectedResult => start.status === 'rejected')?.reason ?? null,
    );
    const failed = await Promise.race([loaded, stopped]);
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (failed) {
      // Terminating a worker while it loads koffi aborts the whole process (a fatal napi_throw): every worker gets
      // past its own imports first. One stuck in a user's module is past them, and terminate() ends a spinning one.
      await Promise.all(threads.map((thread) => thread.native));
      await pool.close(failed);
      throw failed;
    }
    if (options.signal?.aborted) {
      await pool.close();
      throw interrupted(count);
    }
    for (const thread of threads) pool.attach(thread);
    process.once('beforeExit', pool.onBeforeExit);
    return pool;
  }

  private attach(thread: Thread): void {
    const { worker } = thread;
    worker.on('message', (message: WorkerMessage) => this.received(thread, message));
    worker.on('error', (error: Error) => this.died(thread, `threw outside its function: ${error.message}`));
    worker.on('exit', (code: number) => {
      thread.alive = false;
      this.died(thread, `exited with code ${code}`);
    });
    // After the listeners: adding a 'message' listener refs the worker's port again.
    worker.unref();
  }

  /** How many worker threads are still running: 0 once close() resolved. */
  get running(): number {
    return this.threads.filter((thread) => thread.alive).length;
  }

  /** Each worker's time spent in functions, in ms, by worker index. */
  busyMs(): number[] {
    return this.threads.map((thread) => thread.busyMs);
  }

  /** A new generation for the tasks of one rep that wait (`waitFor`): `cancel` abandons exactly those. */
  nextGeneration(): number {
    this.generation += 1;
    return this.generation;
  }

  /**
   * Tasks of `generation` (and earlier) still waiting for their event or flag fail at once instead of waiting for
   * ever: a rep that failed will not complete their events. Tasks already running finish.
   */
  cancel(generation: number): void {
    if (Atomics.load(this.control, 0) < generation) Atomics.store(this.control, 0, generation);
    for (let flag = CONTROL_HEADER; flag < this.control.length; flag++) Atomics.notify(this.control, flag);
  }

  /** Lets the tasks of `generation` waiting for `flag` run. */
  raise(flag: number, generation: number): void {
    if (!Number.isInteger(flag) || flag < 0 || flag >= this.control.length - CONTROL_HEADER)
      throw new Error(`the pool has no flag ${flag}`);
    Atomics.store(this.control, CONTROL_HEADER + flag, generation);
    Atomics.notify(this.control, CONTROL_HEADER + flag);
  }

  /**
   * Runs `task` on the next free worker; resolves with the function's return value and the task's timing. Its
   * function may run `timeoutMs` (the pool's `taskTimeoutMs` by default): past that its worker is ended, and the task
   * and the pool fail (exit 4) naming the stage, the function and the chunk. The time it waits for its chunk's event
   * does not count: the rep's own deadline bounds the GPU.
   */
  submit(task: WorkerTask, bound: { readonly timeoutMs?: number } = {}): Promise<TaskResult> {
    if (this.closing) return Promise.reject(this.closedBy ?? new Error('the worker pool is closed'));
    if (this.queue.length >= this.queueLimit) {
      return Promise.reject(
        new Error(
          `the worker pool's queue is full (${this.queueLimit} tasks wait): a caller submits more tasks than it has slots`,
        ),
      );
    }
    const timeoutMs = bound.timeoutMs ?? this.options.taskTimeoutMs ?? TASK_TIMEOUT_MS;
    return new Promise<TaskResult>((resolve, reject) => {
      const pending: Pending = { id: this.nextId++, task, queuedMs: performance.now(), resolve, reject, timeoutMs };
      this.arm(pending, timeoutMs);
      this.queue.push(pending);
      this.dispatch();
    });
  }

  /** Checks `pending` again in `ms`: a timer per task, which keeps no idle process alive. */
  private arm(pending: Pending, ms: number): void {
    pending.timer = setTimeout(() => this.deadline(pending), Math.max(1, Math.min(ms, 2 ** 31 - 1)));
    pending.timer.unref();
  }

  /**
   * A task's deadline came. Its function has run `timeoutMs` (its worker says so through shared memory): the worker
   * is ended, since nothing else stops a function that loops or awaits for ever, and the pool closes with the
   * failure. A task still waiting (for a worker, or in one for its chunk's event) is checked again later.
   */
  private deadline(pending: Pending): void {
    if (this.closing) return;
    const thread = this.threads.find((t) => t.sent.includes(pending));
    if (!thread && !this.queue.includes(pending)) return;
    const slot = 2 * (thread?.index ?? 0);
    const runningId = thread ? Atomics.load(this.runningTasks, slot) - 1 : -1;
    const ranMs = this.originMs + Atomics.load(this.runningTasks, slot + 1);
    const left = ranMs + pending.timeoutMs - (performance.timeOrigin + performance.now());
    if (runningId !== pending.id) this.arm(pending, pending.timeoutMs);
    else if (left > 0) this.arm(pending, left);
    else void this.close(this.overdue(pending, thread as Thread));
  }

  private overdue(pending: Pending, thread: Thread): HostStageFailure {
    const { task, timeoutMs } = pending;
    const spec = this.options.functions[task.fn];
    const what = spec?.kind === 'module' ? ` (export '${spec.export}' of ${spec.path})` : spec ? ` (${spec.kind})` : '';
    const stage = this.options.stage === undefined ? 'host stage' : `host stage ${this.options.stage}:`;
    return new HostStageFailure(
      `${stage} function '${task.fn}'${what} did not return within ${timeoutMs / 1000} s on ${chunkName(task)} in worker ${thread.index} ` +
        '(a loop that never ends, or a promise that never settles): its worker was ended and every task of the stage stopped.',
      {
        hint: 'A stage function must return, or settle the promise it returns, for every chunk; --timeout bounds the first rep of each mode.',
      },
    );
  }

  /** Sends waiting tasks to the workers with the fewest unanswered: idle workers first, then each one's next. */
  private dispatch(): void {
    for (let depth = 0; depth < IN_FLIGHT; depth++) {
      for (const thread of this.threads) {
        if (this.queue.length === 0) return;
        if (thread.sent.length !== depth || !thread.alive) continue;
        const pending = this.queue.shift() as Pending;
        thread.sent.push(pending);
        // A worker with a task keeps the process alive until it answers; an idle one does not.
        thread.worker.ref();
        thread.worker.postMessage({ id: pending.id, task: pending.task });
      }
    }
  }

  private received(thread: Thread, message: WorkerMessage): void {
    const pending = thread.sent[0];
    if (!pending || (message.kind !== 'done' && message.kind !== 'failed') || message.id !== pending.id) return;
    clearTimeout(pending.timer);
    thread.sent.shift();
    if (thread.sent.length === 0) thread.worker.unref();
    thread.busyMs += message.endedAt - message.startedAt;
    if (message.kind === 'done') {
      const timing = {
        worker: thread.index,
        queuedMs: pending.queuedMs,
        startedMs: fromEpoch(message.startedAt),
        endedMs: fromEpoch(message.endedAt),
      };
      pending.resolve({ value: message.value, timing });
    } else {
      pending.reject(
        new HostStageFailure(
          `host stage function '${pending.task.fn}' failed on ${chunkName(pending.task)} in worker ${thread.index}: ${message.message}`,
        ),
      );
    }
    this.dispatch();
  }

  /**
   * A worker ended on its own: its task fails, and so does the pool, since a stage short of a worker is not the stage
   * measured.
   */
  private died(thread: Thread, how: string): void {
    if (this.closing) return;
    const task = thread.sent[0]?.task;
    const failure = new HostStageFailure(
      `host stage worker ${thread.index} ${how}${task ? `, running function '${task.fn}' on ${chunkName(task)}` : ''}`,
    );
    void this.close(failure);
  }

  /**
   * Ends every worker, also one in the middle of a function; tasks not finished reject with `reason` (by default,
   * that the pool closed). Resolves once every thread exited. Calling it again returns the same promise.
   */
  close(reason?: unknown): Promise<void> {
    if (this.closing) return this.closing;
    this.closedBy = reason ?? null;
    process.off('beforeExit', this.onBeforeExit);
    const unfinished = [...this.threads.flatMap((thread) => thread.sent.splice(0)), ...this.queue.splice(0)];
    const why = reason ?? new Error('the worker pool closed before the task ran');
    for (const pending of unfinished) {
      clearTimeout(pending.timer);
      pending.reject(why);
    }
    this.closing = Promise.all(
      this.threads.map(async (thread) => {
        await thread.worker.terminate();
        thread.alive = false;
      }),
    ).then(() => undefined);
    return this.closing;
  }
}
