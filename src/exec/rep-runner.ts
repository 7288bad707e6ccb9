import { type ActivityCollection, CuptiActivity, matchActivity, openCupti, recordingCupti } from '../cuda/cupti.js';
import { CUDA_ERROR, CudaError } from '../cuda/error.js';
import { loadedLibraryPath } from '../cuda/load.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import type { EventHandle, StreamHandle } from '../cuda/types.js';
import { onClock, type WorkerPool } from '../workers/pool.js';
import { HandoverRun } from './handover.js';
import { LoaderRun } from './loader.js';
import { DeviceFailure, Interrupted } from '../errors.js';
import type { CpuStageTiming, EngineSource, RepOptions, RepRunner, RepTiming, TracedRepTiming } from '../measure/runner.js';
import { describeOp } from '../plan/describe.js';
import { type TracedSchedule, type TracedSpan, traceSchedule } from '../plan/trace.js';
import { isWorkOp, type Op, type Plan, type Schedule, scheduleOps, streamDevices } from '../plan/types.js';
import { type Agreement, type CuptiRecord, type KindRuntimes, PENDING, type RepWatch, stageOf, workNames } from '../kinds/index.js';
import type { DeviceSet } from './device-set.js';
import type { HostCalls } from './host-calls.js';
import type { GateFlags, Issuer, PreparedRep } from './issue.js';
import { opTimeout, repTimeout } from './timeouts.js';
import { TIMED_OUT, type WaitCheck, type Waiter } from './wait.js';

/** How long a failed rep's queued work may take to drain before clean-up goes ahead regardless. */
const DRAIN_MS = 10_000;

/** How long a rep whose kind's work may never end by itself (a collective) may go on after Ctrl-C or SIGTERM before that work is aborted. */
export const SIGNAL_GRACE_MS = 1_000;

/**
 * Runs reps of a plan's schedules on one device. Schedules are prepared on first use and kept, every event with
 * them, so a traced rep can read the time of any op. Waits never block the JS thread.
 */
export class CudaRepRunner implements RepRunner {
  private readonly prepared = new Map<string, PreparedRep>();
  private readonly traced = new Map<string, { prepared: PreparedRep; traced: TracedSchedule }>();
  private cuptiWarm = false;
  /** Per prepared rep, the handover each thunk's event starts (-1 for none): a typed read in the issue loop. */
  private readonly handoverThunks = new WeakMap<PreparedRep, Int32Array>();

  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Plan,
    private readonly devices: DeviceSet,
    private readonly issuers: { readonly stream: Issuer; readonly graph: Issuer },
    private readonly waiter: Waiter,
    private readonly gate: GateFlags | null,
    private readonly hostCalls: HostCalls,
    private readonly pool: WorkerPool | null = null,
    /** The runtimes of the plan's library kinds: what each wait on their ops watches, and the ranks' agreement under a launcher. */
    private readonly runtimes: KindRuntimes = new Map(),
  ) {
    this.agreement = [...runtimes.values()].find((r) => r.agreement)?.agreement;
  }

  /** The ranks' agreement where this process is one rank of a launch; absent: it decides alone. */
  readonly agreement: Agreement | undefined;

  /** The watch of the first kind among the rep's ops whose runtime has one (a collective's communicators). */
  private watchOf(prepared: PreparedRep): RepWatch | undefined {
    for (const op of prepared.ops) {
      if (!op || !isWorkOp(op)) continue;
      const watch = this.runtimes.get(stageOf(op).id)?.watch;
      if (watch) return watch;
    }
    return undefined;
  }

  get schedules(): readonly Schedule[] {
    return this.plan.schedules;
  }

  /**
   * What a wait on a rep with collectives asks as it polls: a communicator's asynchronous error (a peer that failed)
   * ends it at once, and a signal ends it after SIGNAL_GRACE_MS, with the communicators aborted so that NCCL's
   * kernels let go of the GPU: a collective whose peer stopped never ends by itself. Null for a plan without one.
   */
  private watchCheck(prepared: PreparedRep, signal: AbortSignal | undefined): WaitCheck | undefined {
    const watch = this.watchOf(prepared);
    if (!watch) return undefined;
    let signalledAt: number | null = null;
    return () => {
      const failure = watch.failure();
      if (failure) {
        watch.abortAll();
        throw new DeviceFailure(`${failure.message}, during the ${prepared.schedule.description} mode.`, { hint: failure.hint, cause: failure, contextLost: true });
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
  private async notIssued(prepared: PreparedRep, index: number, code: number, deadline: number, signal: AbortSignal | undefined): Promise<void> {
    if (code !== PENDING) throw this.opFailure(prepared, index, code, 'issuing');
    const watch = this.watchOf(prepared);
    if (!watch) throw new Error(`schedule ${prepared.schedule.id}: op ${index} answered that its library finishes it, but no kind's runtime watches it`);
    const op = prepared.ops[index];
    await watch.settle(`Issuing ${op ? describeOp(op, prepared.schedule, this.plan.kernels) : 'a collective'} in the ${prepared.schedule.description} mode`, {
      timeoutMs: Number.isFinite(deadline) ? Math.max(0, deadline - performance.now()) : DRAIN_MS,
      signal,
    });
  }

  async runRep(id: string, options: RepOptions = {}): Promise<RepTiming> {
    // CUPTI stays on from one traced rep to the next (switching it on costs each rep a wait), never into a timed one.
    recordingCupti()?.stop();
    this.useDeviceOf(id);
    const prepared = this.prepare(id);
    const { thunks } = prepared;
    const gate = prepared.schedule.gated ? this.gate : null;
    const busyBefore = this.pool?.busyMs() ?? [];
    const issueStart = performance.now();
    const deadline = issueStart + (options.deadlineMs ?? Infinity);
    const loading: { loader: LoaderRun | null } = { loader: null };
    const handing = this.handoverRun(prepared);
    const handoverAt = this.handoverIndex(prepared);
    // A loader makes issue wait for each chunk's fill; the loop without one stays as tight as it was.
    const issue = this.loads(prepared)
      ? async () => {
          loading.loader = await this.issueLoading(prepared, options, deadline, handing);
        }
      : async () => {
          for (let i = 0; i < thunks.length; i++) {
            const code = (thunks[i] as () => number)();
            if (code !== 0) await this.notIssued(prepared, i, code, deadline, options.signal);
            if (handing && (handoverAt[i] as number) >= 0) handing.issued(handoverAt[i] as number);
            if (options.checked) {
              const done = await this.waiter.stream(prepared.opStreams[i] as StreamHandle, deadline, this.watchCheck(prepared, options.signal));
              if (done === TIMED_OUT) throw opTimeout(prepared.schedule, prepared.ops[i] as Op, this.plan.kernels, options.deadlineMs ?? 0);
              if (done !== 0) throw this.opFailure(prepared, i, done, 'running');
            }
          }
        };
    await this.issueBehindGate(prepared, gate, issue, handing);
    const issueEnd = performance.now();
    const hostIssueMs = issueEnd - issueStart;
    // A timed rep's deadline starts once it is issued: issuing thousands of ops is the host's time, not the GPU's.
    const endBy = options.checked ? deadline : performance.now() + (options.deadlineMs ?? Infinity);
    // A gated rep's GPU starts when the gate opens, at the end of issue; another at once.
    const cpuStage = await this.endWithHandovers(prepared, endBy, options, gate ? issueEnd : issueStart, { loader: loading.loader, handing, busyBefore });
    const probes = prepared.schedule.probes ?? [];
    const eventsMs = this.rt.streams.elapsedMs(prepared.start, prepared.end);
    return {
      gpuMs: cpuStage ? Math.max(eventsMs, cpuStage.endMs) : eventsMs,
      ...(cpuStage ? { cpuStage } : {}),
      hostIssueMs,
      gateTimedOut: gate !== null && gate.host[1] === 1,
      ...(probes.length ? { probesMs: probes.map((p) => this.rt.streams.elapsedMs(this.event(prepared, p.begin), this.event(prepared, p.end))) } : {}),
    };
  }

  async traceRep(id: string, options: Pick<RepOptions, 'deadlineMs' | 'signal'> = {}): Promise<TracedRepTiming> {
    this.useDeviceOf(id);
    const { prepared, traced } = this.prepareTraced(id);
    const gate = prepared.schedule.gated ? this.gate : null;
    // CUPTI's first recording sets itself up inside the first calls it sees, for milliseconds, with the GPU waiting:
    // a first pass, thrown away, pays that so the kept one shows the pipeline.
    if (!this.cuptiWarm && untraced(prepared) === null && prepared.schedule.issue !== 'graph' && openCupti() instanceof CuptiActivity) {
      this.cuptiWarm = true;
      await this.tracedPass(prepared, traced, gate, options);
    }
    const { issuedAt, issueEnd, cupti, collection, cpuStage } = await this.tracedPass(prepared, traced, gate, options);
    const engine = engineTimes(cupti, collection, traced);
    const origin = issuedAt[prepared.startIndex] ?? 0;
    const schedule = this.scheduleById(id);
    // Each device's ops from its own start event: the schedule's probes pair each device with its start and end.
    const probes = schedule.probes?.filter((p) => p.device !== undefined) ?? [];
    const deviceOf = streamDevices(schedule);
    const startOf = (stream: string) => {
      const probe = probes.find((p) => p.device === deviceOf(stream));
      return probe ? this.event(prepared, probe.begin) : prepared.start;
    };
    const since = (stream: string, event: string) => this.rt.streams.elapsedMs(startOf(stream), this.event(prepared, event));
    return {
      schedule,
      totalMs: this.rt.streams.elapsedMs(prepared.start, prepared.end),
      ...(probes.length
        ? {
            deviceTotalsMs: probes.map((p) => ({ device: p.device as number, totalMs: this.rt.streams.elapsedMs(this.event(prepared, p.begin), this.event(prepared, p.end)) })),
          }
        : {}),
      issueMs: issueEnd - origin,
      originEpochMs: performance.timeOrigin + origin,
      ops: traced.spans.map((span, index) => {
        const tag = prepared.hostTags.get(span.bodyIndex);
        return {
          span,
          startMs: since(span.op.stream, span.begin),
          endMs: since(span.op.stream, span.end),
          issuedMs: (issuedAt[prepared.bodyThunkIndex(span.bodyIndex)] ?? origin) - origin,
          ...(tag === undefined
            ? {}
            : { hostStartedMs: (this.hostCalls.startedAt[tag] ?? Number.NaN) - origin, hostEndedMs: (this.hostCalls.endedAt[tag] ?? Number.NaN) - origin }),
          ...(engine.spans[index] ? { engineNs: engine.spans[index] } : {}),
        };
      }),
      engine: engine.source,
      ...(cpuStage ? { cpuStage } : {}),
    };
  }

  /** One traced rep, with CUPTI recording around it where it can. */
  private async tracedPass(prepared: PreparedRep, traced: TracedSchedule, gate: GateFlags | null, options: Pick<RepOptions, 'deadlineMs' | 'signal'>) {
    const { deadlineMs, signal } = options;
    const issuedAt = new Float64Array(prepared.thunks.length);
    const cupti = this.startCupti(prepared);
    // The span each thunk issues, so its API call can carry the span's index to CUPTI's records.
    const spanOfThunk = new Map(traced.spans.map((span, index) => [prepared.bodyThunkIndex(span.bodyIndex), index]));
    const correlate = cupti instanceof CuptiActivity ? cupti.correlationThunks() : null;
    let issueEnd = 0;
    let cpuStage: CpuStageTiming | undefined;
    let collection: ActivityCollection | string = 'CUPTI was not used';
    const busyBefore = this.pool?.busyMs() ?? [];
    const call = (i: number) => {
      issuedAt[i] = performance.now();
      const span = correlate ? spanOfThunk.get(i) : undefined;
      if (span !== undefined) correlate?.push(span + 1);
      const code = (prepared.thunks[i] as () => number)();
      if (span !== undefined) correlate?.pop();
      return code;
    };
    let loader: LoaderRun | null = null;
    const handing = this.handoverRun(prepared);
    const handoverAt = this.handoverIndex(prepared);
    try {
      await this.issueBehindGate(
        prepared,
        gate,
        async () => {
          if (this.loads(prepared)) {
            loader = await this.issueLoading(prepared, { signal }, Number.POSITIVE_INFINITY, handing, call);
            return;
          }
          const issueBy = performance.now() + (deadlineMs ?? Number.POSITIVE_INFINITY);
          for (let i = 0; i < prepared.thunks.length; i++) {
            const code = call(i);
            if (code !== 0) await this.notIssued(prepared, i, code, issueBy, signal);
            if (handing && (handoverAt[i] as number) >= 0) handing.issued(handoverAt[i] as number);
          }
        },
        handing,
      );
      issueEnd = performance.now();
      // The tasks on the traced rep's own clock, from issuing its start event, as every op of it is.
      cpuStage = await this.endWithHandovers(prepared, issueEnd + (deadlineMs ?? Infinity), options, issuedAt[prepared.startIndex] ?? 0, { loader, handing, busyBefore });
      if (cupti instanceof CuptiActivity) collection = await cupti.collect().catch((error: unknown) => `CUPTI did not hand its records back (${(error as Error).message})`);
    } catch (error) {
      if (cupti instanceof CuptiActivity) cupti.stop();
      throw error;
    }
    return { issuedAt, issueEnd, cupti, collection, cpuStage };
  }

  /** CUPTI recording for a traced rep issued op by op; for a graph replay, or where CUPTI will not start, why not. */
  private startCupti(prepared: PreparedRep): CuptiActivity | { readonly unavailable: string } {
    if (prepared.schedule.issue === 'graph') return { unavailable: 'a graph replay: CUPTI ties its ops to the graph launch, not to each op' };
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
      this.rt.streams.eventQueryCode(prepared.start);
      pop();
      return cupti;
    } catch (error) {
      return { unavailable: `CUPTI would not start recording (${(error as Error).message})` };
    }
  }

  /**
   * After a rep failed half-issued, lets what it did enqueue finish without blocking the JS thread: a host function
   * still queued would otherwise deadlock the first synchronous CUDA call of the clean-up (cudaFree waits for the
   * device, the device for the host function, the host function for the JS thread). Gives up after DRAIN_MS.
   */
  private async drain(prepared: PreparedRep): Promise<void> {
    if (!prepared.hostTags.size) return;
    const deadline = performance.now() + DRAIN_MS;
    for (const stream of new Set(prepared.opStreams)) {
      while (this.rt.streams.queryCode(stream) === CUDA_ERROR.notReady) {
        if (performance.now() > deadline) return;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    this.hostCalls.endRepQuietly();
  }

  private event(prepared: PreparedRep, id: string) {
    const handle = prepared.events.get(id);
    if (handle === undefined) throw new Error(`schedule ${prepared.schedule.id} has no event ${id}`);
    return handle;
  }

  setupCost(id: string): { captureMs: number; instantiateMs: number } | null {
    return this.prepared.get(id)?.setup ?? null;
  }

  /**
   * Issues a rep through `issue` with the gate (if any) holding its first stream. On a failure the gate is released
   * and the host calls already queued are let through before the error goes up: CUDA's thread would otherwise wait
   * on them for ever.
   */
  private async issueBehindGate(prepared: PreparedRep, gate: GateFlags | null, issue: () => void | Promise<void>, handing: HandoverRun | null = null): Promise<void> {
    if (gate) gate.host.fill(0);
    this.hostCalls.beginRep();
    try {
      await issue();
    } catch (error) {
      if (gate) Atomics.store(gate.host, 0, 1);
      await this.drain(prepared);
      // Tasks already handed over stop waiting for events that may never complete, and end before clean-up.
      await handing?.finish(true).catch(() => undefined);
      throw error;
    } finally {
      // Released on failure too, so that a rep that dies half-issued does not leave the gate spinning.
      if (gate) Atomics.store(gate.host, 0, 1);
    }
  }

  restoreInputs(): void {
    this.devices.restoreInputs();
  }

  poisonOutputs(byte: number): void {
    this.devices.poisonOutputs(byte);
  }

  outputs() {
    return this.devices.buffers().outputs();
  }

  outputDevices(): readonly number[] {
    return this.devices.outputDevices;
  }

  hostWindows(name: string, device?: number): Uint8Array[] {
    return this.devices.buffers(device).hostWindows(name);
  }

  /**
   * Over several devices, the schedule's own device current before it is prepared (a graph captures launches on the
   * current device) and issued (its first ops need no device change of their own): the rep before may have ended
   * on another.
   */
  private useDeviceOf(id: string): void {
    if (this.devices.spans) this.rt.setDevice(this.scheduleById(id).device);
  }

  private scheduleById(id: string): Schedule {
    // The reference of an all-reduce's check is run by verification and never measured: not among the schedules.
    const schedule = this.plan.schedules.find((s) => s.id === id) ?? (this.plan.reference?.id === id ? this.plan.reference : undefined);
    if (!schedule) throw new Error(`no schedule ${id} in plan ${this.plan.name}`);
    return schedule;
  }

  private prepare(id: string): PreparedRep {
    let prepared = this.prepared.get(id);
    if (!prepared) {
      const schedule = this.scheduleById(id);
      prepared = this.issuers[schedule.issue].prepare(schedule);
      this.prepared.set(id, prepared);
    }
    return prepared;
  }

  private prepareTraced(id: string): { prepared: PreparedRep; traced: TracedSchedule } {
    let entry = this.traced.get(id);
    if (!entry) {
      const traced = traceSchedule(this.scheduleById(id));
      entry = { prepared: this.issuers[traced.schedule.issue].prepare(traced.schedule), traced };
      this.traced.set(id, entry);
    }
    return entry;
  }

  /**
   * Waits for the rep's end event and, where the schedule hands chunks to the worker pool, for every chunk's task:
   * the rep ends when the GPU is done and every task finished. The next rep's D2H cannot overwrite a chunk's output
   * bytes before its task read them, since the next rep is issued only after this returns.
   */
  private async endWithHandovers(
    prepared: PreparedRep,
    deadline: number,
    options: Pick<RepOptions, 'deadlineMs' | 'signal'>,
    gpuStartMs: number,
    stage: { readonly loader: LoaderRun | null; readonly handing: HandoverRun | null; readonly busyBefore: readonly number[] },
  ): Promise<CpuStageTiming | undefined> {
    const { pool } = this;
    const { loader, handing, busyBefore } = stage;
    if (!pool || (!handing && !loader)) {
      await this.waitEnd(prepared, deadline, options);
      return undefined;
    }
    // Both settle before either's error goes up: no task may still read the host memory when clean-up frees it. A
    // rep that failed abandons the tasks still waiting for their events.
    const watching = handing?.watch();
    const ended = await this.waitEnd(prepared, deadline, options).then(
      () => null,
      (error: unknown) => ({ error }),
    );
    const handed = await (handing?.finish(ended !== null) ?? Promise.resolve({ tasks: [] })).then(
      (outcome) => ({ outcome }),
      (error: unknown) => ({ error }),
    );
    await watching;
    if (ended) throw ended.error;
    if ('error' in handed) throw handed.error;
    // Every fill finished before its chunk was issued: this only collects their timings.
    const tasks = [...((await loader?.finish()) ?? []), ...handed.outcome.tasks];
    const lastEndedMs = tasks.reduce((last, t) => Math.max(last, t.timing.endedMs), Number.NEGATIVE_INFINITY);
    const busyAfter = pool.busyMs();
    return {
      endMs: lastEndedMs - gpuStartMs,
      gpuMs: this.rt.streams.elapsedMs(prepared.start, prepared.end),
      bytes: [...prepared.handovers, ...(loader ? (prepared.loader?.fills ?? []) : [])].reduce((sum, t) => sum + t.task.regions.reduce((s, r) => s + r.bytes, 0), 0),
      taskMs: tasks.map((t) => t.timing.endedMs - t.timing.startedMs),
      afterTasks: handed.outcome.tasks.length,
      busyMs: busyAfter.map((ms, i) => ms - (busyBefore[i] ?? 0)),
      tasks: tasks.map((t) => ({ chunk: t.chunk, ...onClock(t.timing, gpuStartMs) })),
    };
  }

  private loads(prepared: PreparedRep): boolean {
    return this.pool !== null && prepared.loader !== null;
  }

  /** This rep's hand-over of chunks to the pool, each waiting in its worker for the event after its D2H; null without one. */
  private handoverRun(prepared: PreparedRep): HandoverRun | null {
    const { pool } = this;
    if (!pool || !prepared.handovers.length) return null;
    const library = loadedLibraryPath('cudart');
    if (library === null) throw new Error('a host stage hands chunks to workers, but no libcudart was loaded');
    const eventOf = (index: number) => (prepared.handovers[index] as { event: EventHandle }).event;
    return new HandoverRun(prepared.handovers, {
      submit: (task) => pool.submit(task),
      waitFor: (index, generation) => ({ kind: 'event', event: eventOf(index), library, flag: index, generation }),
      generation: pool.nextGeneration(),
      cancel: (generation) => pool.cancel(generation),
      query: (index) => this.rt.streams.eventQueryCode(eventOf(index)),
      notReady: CUDA_ERROR.notReady,
      raise: (index, generation) => pool.raise(index, generation),
    });
  }

  /** The handover whose event each thunk records, or -1: a host op of a stage on workers records one, in op order. */
  private handoverIndex(prepared: PreparedRep): Int32Array {
    let at = this.handoverThunks.get(prepared);
    if (!at) {
      at = new Int32Array(prepared.thunks.length).fill(-1);
      let next = 0;
      if (prepared.handovers.length) prepared.ops.forEach((op, i) => op?.kind === 'host' && ((at as Int32Array)[i] = next++));
      if (next !== prepared.handovers.length) throw new Error(`schedule ${prepared.schedule.id} has ${next} host ops for ${prepared.handovers.length} handovers`);
      this.handoverThunks.set(prepared, at);
    }
    return at;
  }

  /** The rep's loader, its first fills submitted. */
  private startLoader(prepared: PreparedRep): LoaderRun {
    const pool = this.pool as WorkerPool;
    const spec = prepared.loader as NonNullable<PreparedRep['loader']>;
    return new LoaderRun(spec.fills, {
      slots: spec.slots,
      submit: (task) => pool.submit(task),
      released: (fill) => {
        const event = spec.releasedBy[fill];
        if (!event) return true;
        const code = this.rt.streams.eventQueryCode(event);
        if (code === CUDA_ERROR.notReady) return false;
        if (code !== 0) throw this.repFailure(prepared, this.rt.failure(code, "waiting for a chunk's H2D"));
        return true;
      },
    });
  }

  /**
   * Issues a rep whose chunks wait for their fills: each chunk's first op once its fill finished. The loader starts
   * once the start event is issued, so the first fill is inside the rep's time, as a loader's first batch is.
   * `call` issues thunk i (a traced rep stamps and correlates it). Returns the loader, every fill submitted.
   */
  private async issueLoading(
    prepared: PreparedRep,
    options: Pick<RepOptions, 'checked' | 'deadlineMs' | 'signal'>,
    deadline: number,
    handing: HandoverRun | null,
    call: (i: number) => number = (i) => (prepared.thunks[i] as () => number)(),
  ): Promise<LoaderRun> {
    const { thunks } = prepared;
    const handoverAt = this.handoverIndex(prepared);
    const spec = prepared.loader as NonNullable<PreparedRep['loader']>;
    let loader: LoaderRun | null = null;
    for (let i = 0; i < thunks.length; i++) {
      const fill = spec.waitAt.get(i);
      if (fill !== undefined) {
        loader ??= this.startLoader(prepared);
        await loader.ready(fill);
      }
      const code = call(i);
      if (i === prepared.startIndex) loader ??= this.startLoader(prepared);
      if (code !== 0) await this.notIssued(prepared, i, code, deadline, options.signal);
      if (handing && (handoverAt[i] as number) >= 0) handing.issued(handoverAt[i] as number);
      const recorded = spec.recordedAt.get(i);
      if (recorded !== undefined) loader?.recorded(recorded);
      if (options.checked) {
        const done = await this.waiter.stream(prepared.opStreams[i] as StreamHandle, deadline, this.watchCheck(prepared, options.signal));
        if (done === TIMED_OUT) throw opTimeout(prepared.schedule, prepared.ops[i] as Op, this.plan.kernels, options.deadlineMs ?? 0);
        if (done !== 0) throw this.opFailure(prepared, i, done, 'running');
      }
    }
    return loader ?? this.startLoader(prepared);
  }

  private async waitEnd(prepared: PreparedRep, deadline: number, options: Pick<RepOptions, 'deadlineMs' | 'signal'>): Promise<void> {
    const { deadlineMs } = options;
    const code = await this.waiter.event(prepared.end, deadline, this.watchCheck(prepared, options.signal));
    if (code === TIMED_OUT) {
      // Event queries never block, so asking which streams got through is safe behind a runaway kernel.
      const completed = (event: string) => {
        const handle = prepared.events.get(event);
        return handle !== undefined && this.rt.streams.eventQueryCode(handle) === 0;
      };
      const error = repTimeout(prepared.schedule, scheduleOps(prepared.schedule), this.plan.kernels, deadlineMs ?? 0, completed);
      const watch = this.watchOf(prepared);
      if (!watch) throw error;
      // A collective past its deadline waits for a rank that is not coming: aborting lets NCCL's kernels go.
      watch.abortAll();
      throw new DeviceFailure(`${error.message} ${this.agreement ? 'This rank' : 'This process'} waited for the other ranks in that collective; ${watch.words.aborted}.`, {
        hint: 'Look at the other ranks’ output for one that failed, stopped or ran another config; every rank must run the same config with the same flags.',
        cause: error,
        contextLost: true,
      });
    }
    if (code !== 0) throw this.repFailure(prepared, this.rt.failure(code, 'waiting for the end of a rep'));
    this.hostCalls.endRep();
  }

  private opFailure(prepared: PreparedRep, index: number, code: number, phase: 'issuing' | 'running'): Error {
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

  private repFailure(prepared: PreparedRep, error: unknown): Error {
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

/** Why CUPTI must not record a rep: the first of its kinds that says so (kind.ts's `untraced`); null: it may. */
const untraced = (prepared: PreparedRep): string | null => {
  for (const op of prepared.ops) if (op && isWorkOp(op) && stageOf(op).untraced) return stageOf(op).untraced ?? null;
  return null;
};

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
