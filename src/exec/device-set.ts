import type { CudaRuntime } from '../cuda/runtime.js';
import type { DeviceFacts } from '../result/environment.js';
import type { DeviceBuffers } from './buffers.js';

/**
 * The devices a plan runs on, each with its facts and buffers; the first is the primary, whose host memory every
 * device's copies share and which is current between reps. One device is the common case and costs nothing extra.
 */
export class DeviceSet {
  private constructor(
    private readonly rt: CudaRuntime,
    readonly primary: number,
    private readonly entries: ReadonlyMap<number, { readonly facts: DeviceFacts; readonly buffers: DeviceBuffers }>,
  ) {}

  static of(
    rt: CudaRuntime,
    devices: ReadonlyArray<{ readonly facts: DeviceFacts; readonly buffers: DeviceBuffers }>,
  ): DeviceSet {
    const [first] = devices;
    if (!first) throw new RangeError('a device set needs a device');
    return new DeviceSet(rt, first.facts.index, new Map(devices.map((d) => [d.facts.index, d])));
  }

  /** More than one device: schedules then set their device before they issue. */
  get spans(): boolean {
    return this.entries.size > 1;
  }

  get indexes(): number[] {
    return [...this.entries.keys()];
  }

  facts(device: number): DeviceFacts {
    return this.entry(device).facts;
  }

  buffers(device: number = this.primary): DeviceBuffers {
    return this.entry(device).buffers;
  }

  /** The host inputs, each restored by the device whose buffers own it (the shared ones by the primary). */
  restoreInputs(): void {
    for (const { buffers } of this.entries.values()) buffers.restoreInputs();
  }

  /** The devices whose outputs land in host memory of their own: the primary, and each data-parallel rank. */
  get outputDevices(): number[] {
    return [...this.entries]
      .filter(([device, { buffers }]) => device === this.primary || buffers.ownsOutputs)
      .map(([device]) => device);
  }

  /** Poisons every device's outputs (the shared host ones once, by their owner), and leaves the primary current. */
  poisonOutputs(byte: number): void {
    for (const [device, { buffers }] of this.entries) {
      if (this.spans) this.rt.setDevice(device);
      buffers.poisonOutputs(byte);
    }
    if (this.spans) this.rt.setDevice(this.primary);
  }

  private entry(device: number) {
    const entry = this.entries.get(device);
    if (!entry) throw new Error(`device ${device} is not one of this run's devices (${this.indexes.join(', ')})`);
    return entry;
  }
}
