import { type ActivityCollection, CuptiActivity, openCupti, recordingCupti } from '../cuda/cupti.js';
import { CUDA_ERROR } from '../cuda/error.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import type { StreamHandle } from '../cuda/types.js';
import { engineTimes, startCupti, untraced } from './engine-times.js';
import { DRAIN_MS, RepWaits } from './rep-waits.js';
import type { KindRepEnd, RepOptions, RepRunner, RepTiming, TracedRepTiming } from '../measure/runner.js';
import type { TracedSchedule } from '../plan/trace.js';
import { type Op, type Plan, type Schedule, streamDevices } from '../plan/types.js';
import type { Agreement, KindRep, KindRuntimes } from '../kinds/index.js';
import type { DeviceSet } from './device-set.js';
import type { HostCalls } from './host-calls.js';
import type { GateFlags } from './gate.js';
import type { Issuer, PreparedRep } from './prepared-rep.js';
import { PreparedSchedules } from './prepared-schedules.js';
import { opTimeout } from './timeouts.js';
import { TIMED_OUT, type Waiter } from './wait.js';

/**
 * Runs reps of a plan's schedules on one device, each prepared on first use and kept with every event
 * (prepared-schedules.ts), so a traced rep can read the time of any op. Waits never block the JS thread.
 */
export class CudaRepRunner implements RepRunner {
  private readonly kept: PreparedSchedules;
  private cuptiWarm = false;
  /** How its waits end and its failures are named. */
  private readonly waits: RepWaits;

  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Plan,
    private readonly devices: DeviceSet,
    issuers: { readonly stream: Issuer; readonly graph: Issuer },
    private readonly waiter: Waiter,
    private readonly gate: GateFlags | null,
    private readonly hostCalls: HostCalls,
    /**
     * The runtimes of the plan's library kinds: what each wait on their ops watches, and the ranks' agreement under a
     * launcher.
     */
    runtimes: KindRuntimes = new Map(),
  ) {
    this.kept = new PreparedSchedules(rt, plan, devices, issuers);
    this.agreement = [...runtimes.values()].find((r) => r.agreement)?.agreement;
    this.waits = new RepWaits(rt, plan, waiter, runtimes, hostCalls, this.agreement);
  }

  /** The ranks' agreement where this process is one rank of a launch; absent: it decides alone. */
  readonly agreement: Agreement | undefined;

  get schedules(): readonly Schedule[] {
    return this.plan.schedules;
  }

  async runRep(id: string, options: RepOptions = {}): Promise<RepTiming> {
    // CUPTI stays on from one traced rep to the next (switching it on costs each rep a wait), never into a timed one.
    recordingCupti()?.stop();
    this.kept.useDeviceOf(id);
    const prepared = this.kept.prepare(id);
    const { thunks } = prepared;
    const gate = prepared.schedule.gated ? this.gate : null;
    const rep = this.beginRep(prepared, options.deadlineMs);
    const issueStart = performance.now();
    const deadline = issueStart + (options.deadlineMs ?? Infinity);
    // A kind's hooks (a loader's fills) get a loop of their own; the loop without any stays as tight as it was.
    const issue = rep
      ? () => this.issueHooked(prepared, rep, options, deadline)
      : async () => {
          for (let i = 0; i < thunks.length; i++) {
            const code = (thunks[i] as () => number)();
            if (code !== 0) await this.waits.notIssued(prepared, i, code, deadline, options.signal);
            if (options.checked) await this.checkOp(prepared, i, deadline, options);
          }
        };
    await this.issueBehindGate(prepared, gate, issue, rep);
    const issueEnd = performance.now();
    const hostIssueMs = issueEnd - issueStart;
    // A timed rep's deadline starts once it is issued: issuing thousands of ops is the host's time, not the GPU's.
    const endBy = options.checked ? deadline : performance.now() + (options.deadlineMs ?? Infinity);
    // A gated rep's GPU starts when the gate opens, at the end of issue; another at once.
    const kindRep = await this.endRep(prepared, rep, endBy, options, gate ? issueEnd : issueStart);
    const probes = prepared.schedule.probes ?? [];
    const eventsMs = this.rt.streams.elapsedMs(prepared.start, prepared.end);
    return {
      gpuMs: kindRep ? Math.max(eventsMs, kindRep.endMs) : eventsMs,
      ...(kindRep ? { kindRep } : {}),
      hostIssueMs,
      gateTimedOut: gate !== null && gate.host[1] === 1,
      ...(probes.length
        ? {
            probesMs: probes.map((p) =>
              this.rt.streams.elapsedMs(this.event(prepared, p.begin), this.event(prepared, p.end)),
            ),
          }
        : {}),
    };
  }

  async traceRep(id: string, options: Pick<RepOptions, 'deadlineMs' | 'signal'> = {}): Promise<TracedRepTiming> {
    this.kept.useDeviceOf(id);
    const { prepared, traced } = this.kept.prepareTraced(id);
    const gate = prepared.schedule.gated ? this.gate : null;
    // CUPTI's first recording sets itself up inside the first calls it sees, for milliseconds, with the GPU waiting:
    // a first pass, thrown away, pays that so the kept one shows the pipeline.
    if (
      !this.cuptiWarm &&
      untraced(prepared) === null &&
      prepared.schedule.issue !== 'graph' &&
      openCupti() instanceof CuptiActivity
    ) {
      this.cuptiWarm = true;
      await this.tracedPass(prepared, traced, gate, options);
    }
    const { issuedAt, issueEnd, cupti, collection, kindRep } = await this.tracedPass(prepared, traced, gate, options);
    const engine = engineTimes(cupti, collection, traced);
    const origin = issuedAt[prepared.startIndex] ?? 0;
    const schedule = this.kept.scheduleById(id);
    // Each device's ops from its own start event: the schedule's probes pair each device with its start and end.
    const probes = schedule.probes?.filter((p) => p.device !== undefined) ?? [];
    const deviceOf = streamDevices(schedule);
    const startOf = (stream: string) => {
      const probe = probes.find((p) => p.device === deviceOf(stream));
      return probe ? this.event(prepared, probe.begin) : prepared.start;
    };
    const since = (stream: string, event: string) =>
      this.rt.streams.elapsedMs(startOf(stream), this.event(prepared, event));
    return {
      schedule,
      totalMs: this.rt.streams.elapsedMs(prepared.start, prepared.end),
      ...(probes.length
        ? {
            deviceTotalsMs: probes.map((p) => ({
              device: p.device as number,
              totalMs: this.rt.streams.elapsedMs(this.event(prepared, p.begin), this.event(prepared, p.end)),
            })),
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
            : {
                hostStartedMs: (this.hostCalls.startedAt[tag] ?? Number.NaN) - origin,
                hostEndedMs: (this.hostCalls.endedAt[tag] ?? Number.NaN) - origin,
              }),
          ...(engine.spans[index] ? { engineNs: engine.spans[index] } : {}),
        };
      }),
      engine: engine.source,
      ...(kindRep ? { kindRep } : {}),
    };
  }

  /** One traced rep, with CUPTI recording around it where it can. */
  private async tracedPass(
    prepared: PreparedRep,
    traced: TracedSchedule,
    gate: GateFlags | null,
    options: Pick<RepOptions, 'deadlineMs' | 'signal'>,
  ) {
    const { deadlineMs, signal } = options;
    const issuedAt = new Float64Array(prepared.thunks.length);
    const cupti = startCupti(this.rt, prepared);
    // The span each thunk issues, so its API call can carry the span's index to CUPTI's records.
    const spanOfThunk = new Map(traced.spans.map((span, index) => [prepared.bodyThunkIndex(span.bodyIndex), index]));
    const correlate = cupti instanceof CuptiActivity ? cupti.correlationThunks() : null;
    let issueEnd = 0;
    let kindRep: KindRepEnd | undefined;
    let collection: ActivityCollection | string = 'CUPTI was not used';
    const rep = this.beginRep(prepared, deadlineMs);
    const call = (i: number) => {
      issuedAt[i] = performance.now();
      const span = correlate ? spanOfThunk.get(i) : undefined;
      if (span !== undefined) correlate?.push(span + 1);
      const code = (prepared.thunks[i] as () => number)();
      if (span !== undefined) correlate?.pop();
      return code;
    };
    try {
      await this.issueBehindGate(
        prepared,
        gate,
        async () => {
          const issueBy = performance.now() + (deadlineMs ?? Number.POSITIVE_INFINITY);
          if (rep) return this.issueHooked(prepared, rep, { signal }, issueBy, call);
          for (let i = 0; i < prepared.thunks.length; i++) {
            const code = call(i);
            if (code !== 0) await this.waits.notIssued(prepared, i, code, issueBy, signal);
          }
        },
        rep,
      );
      issueEnd = performance.now();
      // The kind's work on the traced rep's own clock, from issuing its start event, as every op of it is.
      kindRep = await this.endRep(
        prepared,
        rep,
        issueEnd + (deadlineMs ?? Infinity),
        options,
        issuedAt[prepared.startIndex] ?? 0,
      );
      if (cupti instanceof CuptiActivity)
        collection = await cupti
          .collect()
          .catch((error: unknown) => `CUPTI did not hand its records back (${(error as Error).message})`);
    } catch (error) {
      if (cupti instanceof CuptiActivity) cupti.stop();
      throw error;
    }
    return { issuedAt, issueEnd, cupti, collection, kindRep };
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
    return this.kept.setupCost(id);
  }

  /**
   * Issues a rep through `issue` with the gate (if any) holding its first stream. On a failure the gate is released
   * and the host calls already queued are let through before the error goes up: CUDA's thread would otherwise wait
   * on them for ever.
   */
  private async issueBehindGate(
    prepared: PreparedRep,
    gate: GateFlags | null,
    issue: () => void | Promise<void>,
    rep: KindRep | null,
  ): Promise<void> {
    if (gate) gate.host.fill(0);
    this.hostCalls.beginRep();
    try {
      await issue();
    } catch (error) {
      if (gate) Atomics.store(gate.host, 0, 1);
      await this.drain(prepared);
      // What a kind handed out (tasks waiting for events that may never complete) ends before clean-up.
      await rep?.abandon();
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

  /** A kind's hooks in this rep of the schedule, where one takes part in it (kinds/api/run.ts's RepHooks). */
  private beginRep(prepared: PreparedRep, deadlineMs: number | undefined): KindRep | null {
    return (
      prepared.rep?.begin((error) => this.waits.repFailure(prepared, error), deadlineMs ?? Number.POSITIVE_INFINITY) ??
      null
    );
  }

  /** Waits for the rep's end: through the kind's hooks where one takes part, which return what its own work came to. */
  private async endRep(
    prepared: PreparedRep,
    rep: KindRep | null,
    deadline: number,
    options: Pick<RepOptions, 'deadlineMs' | 'signal'>,
    gpuStartMs: number,
  ) {
    const waitEnd = () => this.waits.waitEnd(prepared, deadline, options);
    if (rep) return rep.end(waitEnd, gpuStartMs);
    await waitEnd();
    return undefined;
  }

  /** A checked rep waits for each op before the next: a failure is then the op's. */
  private async checkOp(
    prepared: PreparedRep,
    i: number,
    deadline: number,
    options: Pick<RepOptions, 'deadlineMs' | 'signal'>,
  ): Promise<void> {
    const done = await this.waiter.stream(
      prepared.opStreams[i] as StreamHandle,
      deadline,
      this.waits.watchCheck(prepared, options.signal),
    );
    if (done === TIMED_OUT)
      throw opTimeout(prepared.schedule, prepared.ops[i] as Op, this.plan.kernels, options.deadlineMs ?? 0);
    if (done !== 0) throw this.waits.opFailure(prepared, i, done, 'running');
  }

  /**
   * Issues a rep a kind takes part in: thunk i once the kind is ready for it (a loader's chunk once its fill
   * finished), the kind told of each issued. `call` issues thunk i (a traced rep stamps and correlates it).
   */
  private async issueHooked(
    prepared: PreparedRep,
    rep: KindRep,
    options: Pick<RepOptions, 'checked' | 'deadlineMs' | 'signal'>,
    deadline: number,
    call: (i: number) => number = (i) => (prepared.thunks[i] as () => number)(),
  ): Promise<void> {
    for (let i = 0; i < prepared.thunks.length; i++) {
      const ready = rep.ready(i);
      if (ready) await ready;
      const code = call(i);
      if (code !== 0) await this.waits.notIssued(prepared, i, code, deadline, options.signal);
      rep.issued(i);
      if (options.checked) await this.checkOp(prepared, i, deadline, options);
    }
  }
}
