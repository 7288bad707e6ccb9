import { hostBytes } from '../cuda/host.js';
import type { CudaRuntime } from '../cuda/runtime.js';
import type { DevicePtr, KernelArgValue, KernelHandle } from '../cuda/types.js';
import type { Cleanup } from './cleanup.js';

// The gate of a gated schedule: a kernel that holds its first stream until the host has issued the whole rep (a
// flag in host-mapped memory), and the empty kernel of launch-cost modes: cuda-pipe's own kernels.

/** Generous: a rep's ops are issued in milliseconds; only a host that never releases the gate meets it. */
const GATE_TIMEOUT_NS = 2_000_000_000;

/** cuda-pipe's own kernels (kernels/internal/gate.cu), loaded when a plan has gated schedules or empty launches. */
export interface InternalKernels {
  readonly gate: KernelHandle;
  readonly empty: KernelHandle;
}

/** [release, timed out] in host-mapped memory, read by the gate kernel. */
export interface GateFlags {
  readonly host: Uint32Array;
  readonly device: DevicePtr;
}

export function allocateGate(rt: CudaRuntime, cleanup: Cleanup): GateFlags {
  const host = rt.memory.hostAlloc(8, 'mapped');
  cleanup.push(() => rt.memory.freeHost(host));
  const bytes = hostBytes(host, 8);
  return { host: new Uint32Array(bytes.buffer, bytes.byteOffset, 2), device: rt.memory.devicePointerOf(host) };
}

/** The gate kernel's arguments: its flags, and how long it waits for the host before it lets the stream go. */
export const gateArgs = (gate: GateFlags): KernelArgValue[] => [
  { kind: 'pointer', value: gate.device },
  { kind: 'scalar', type: 'uint64', value: GATE_TIMEOUT_NS },
];
