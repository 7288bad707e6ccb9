import type { CudaRuntime } from '../cuda/runtime.js';
import { type TracedSchedule, traceSchedule } from '../plan/trace.js';
import type { Plan, Schedule } from '../plan/types.js';
import type { DeviceSet } from './device-set.js';
import type { Issuer, PreparedRep } from './prepared-rep.js';

/**
 * A plan's schedules on one device, by id, each prepared on first use and kept with every event (a traced rep reads
 * the time of any op), the traced form of each apart from the timed one.
 */
export class PreparedSchedules {
  private readonly prepared = new Map<string, PreparedRep>();
  private readonly traced = new Map<string, { prepared: PreparedRep; traced: TracedSchedule }>();

  constructor(
    private readonly rt: CudaRuntime,
    private readonly plan: Plan,
    private readonly devices: DeviceSet,
    private readonly issuers: { readonly stream: Issuer; readonly graph: Issuer },
  ) {}

  setupCost(id: string): { captureMs: number; instantiateMs: number } | null {
    return this.prepared.get(id)?.setup ?? null;
  }

  /**
   * Over several devices, the schedule's own device current before it is prepared (a graph captures launches on the
   * current device) and issued (its first ops need no device change of their own): the rep before may have ended
   * on another.
   */
  useDeviceOf(id: string): void {
    if (this.devices.spans) this.rt.setDevice(this.scheduleById(id).device);
  }

  scheduleById(id: string): Schedule {
    // The reference of an all-reduce's check is run by verification and never measured: not among the schedules.
    const schedule =
      this.plan.schedules.find((s) => s.id === id) ??
      (this.plan.reference?.id === id ? this.plan.reference : undefined);
    if (!schedule) throw new Error(`no schedule ${id} in plan ${this.plan.name}`);
    return schedule;
  }

  prepare(id: string): PreparedRep {
    let prepared = this.prepared.get(id);
    if (!prepared) {
      const schedule = this.scheduleById(id);
      prepared = this.issuers[schedule.issue].prepare(schedule);
      this.prepared.set(id, prepared);
    }
    return prepared;
  }

  prepareTraced(id: string): { prepared: PreparedRep; traced: TracedSchedule } {
    let entry = this.traced.get(id);
    if (!entry) {
      const traced = traceSchedule(this.scheduleById(id));
      entry = { prepared: this.issuers[traced.schedule.issue].prepare(traced.schedule), traced };
      this.traced.set(id, entry);
    }
    return entry;
  }
}
