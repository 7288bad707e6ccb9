import type { ConfigBuffer } from '../../src/config/types.js';
import type { RepOptions, RepRunner, RepTiming, TracedRepTiming } from '../../src/measure/runner.js';
import type { Schedule } from '../../src/plan/types.js';

export type FakeCall =
  | { readonly call: 'rep'; readonly id: string; readonly checked: boolean; readonly deadlineMs: number | undefined }
  | { readonly call: 'restore' }
  | { readonly call: 'poison'; readonly byte: number };

export interface FakeRunnerOptions {
  /** The GPU time of rep `n` (0-based, warm-ups included) of a schedule. */
  readonly gpuMs?: (schedule: Schedule, n: number) => number;
  /** What a rep writes into each output: by default every element gets 7, whatever the mode. */
  readonly write?: (schedule: Schedule, output: Uint8Array, buffer: ConfigBuffer) => void;
  /** Latency modes: what probe `i` of a rep measured (default 0.01 ms). */
  readonly probeMs?: (schedule: Schedule, i: number) => number;
  /** Host time a rep takes, so that time budgets can run out. */
  readonly delayMs?: number;
  /** Called as rep `n` of a schedule starts (to send an interrupt mid-loop, or to fail the rep by throwing). */
  readonly onRep?: (schedule: Schedule, n: number) => void;
  /** Schedules that verification runs but nothing measures (a plan's reference). */
  readonly unmeasured?: readonly Schedule[];
}

/**
 * A RepRunner on the CPU: it records every call in order, returns scripted GPU times, and "computes" outputs by a
 * rule, so the repetition loop and the verification order can be tested without a GPU.
 */
export class FakeRunner implements RepRunner {
  readonly calls: FakeCall[] = [];
  private readonly host = new Map<string, Uint8Array>();
  private readonly reps = new Map<string, number>();

  constructor(
    readonly schedules: readonly Schedule[],
    private readonly buffers: readonly ConfigBuffer[],
    private readonly options: FakeRunnerOptions = {},
  ) {
    for (const b of buffers) this.host.set(b.name, new Uint8Array(b.bytes));
  }

  async runRep(id: string, options: RepOptions = {}): Promise<RepTiming> {
    const schedule = this.schedules.find((s) => s.id === id) ?? this.options.unmeasured?.find((s) => s.id === id);
    if (!schedule) throw new Error(`no schedule ${id}`);
    this.calls.push({ call: 'rep', id, checked: options.checked ?? false, deadlineMs: options.deadlineMs });
    const n = this.reps.get(id) ?? 0;
    this.reps.set(id, n + 1);
    this.options.onRep?.(schedule, n);
    if (this.options.delayMs) await new Promise((resolve) => setTimeout(resolve, this.options.delayMs));
    for (const buffer of this.outputs()) {
      const bytes = this.hostView(buffer.name);
      if (this.options.write) this.options.write(schedule, bytes, buffer);
      else bytes.fill(7);
    }
    const probes = schedule.probes ?? [];
    return {
      gpuMs: this.options.gpuMs?.(schedule, n) ?? 1,
      hostIssueMs: 0.01,
      gateTimedOut: false,
      ...(probes.length ? { probesMs: probes.map((_, i) => this.options.probeMs?.(schedule, i) ?? 0.01) } : {}),
    };
  }

  async traceRep(id: string): Promise<TracedRepTiming> {
    throw new Error(`the fake runner does not trace (${id})`);
  }

  restoreInputs(): void {
    this.calls.push({ call: 'restore' });
  }

  poisonOutputs(byte: number): void {
    this.calls.push({ call: 'poison', byte });
    for (const b of this.outputs()) this.hostView(b.name).fill(byte);
  }

  outputs(): ConfigBuffer[] {
    return this.buffers.filter((b) => b.role === 'out' || b.role === 'inout');
  }

  hostWindows(name: string): Uint8Array[] {
    return [this.hostView(name)];
  }

  hostView(name: string): Uint8Array {
    const view = this.host.get(name);
    if (!view) throw new Error(`unknown buffer ${name}`);
    return view;
  }

  /** Reps of a schedule so far, warm-ups and checked reps included. */
  repsOf(id: string): number {
    return this.reps.get(id) ?? 0;
  }
}
