import { join } from 'node:path';
import { describeDevice, softwareVersions } from '../cuda/device.js';
import { openSmClock } from '../cuda/nvml.js';
import { openRuntime, type CudaRuntime } from '../cuda/runtime.js';
import type { KernelHandle } from '../cuda/types.js';
import { UsageError } from '../errors.js';
import { readKernelSource } from '../kernels/catalog.js';
import { compileKernelSource } from '../kernels/compile.js';
import { builtinKernelsDir } from '../paths.js';
import type { ResolvedKernel } from '../kernels/resolve.js';
import type { CompileRecord } from '../measure/result.js';
import type { Plan } from '../plan/types.js';
import type { DeviceFacts, SoftwareVersions } from '../result.js';
import { Cleanup } from './cleanup.js';
import { PipelineSession } from './session.js';

export interface PipelineOutcome<T> {
  readonly device: DeviceFacts;
  /** Why the SM clock was not read, or null when it was. */
  readonly clockUnavailable: string | null;
  readonly software: SoftwareVersions;
  readonly compiles: CompileRecord[];
  readonly value: T;
}

/** Picks the device, checks that it exists, and describes it. */
export function openDevice(rt: CudaRuntime, device: number): DeviceFacts {
  const count = rt.deviceCount();
  if (device >= count) {
    throw new UsageError(`Device ${device} does not exist: this machine has ${count} CUDA device${count === 1 ? '' : 's'} (0 to ${count - 1}).`, {
      hint: 'Pick one with --device, or see them all with `cuda-pipe probe`.',
    });
  }
  return describeDevice(rt, device);
}

export interface PipelineContext {
  /** Reads the SM clock through NVML; undefined where NVML is not available. */
  readonly smClock: (() => number | null) | undefined;
}

/**
 * Everything between a Plan and its measurements: open the device, compile (or fetch from the cache) and load each
 * kernel for the device's architecture, bind the plan in a session, hand it to `body`, and release it all.
 */
export function runPipeline<T>(
  plan: Plan,
  kernels: readonly ResolvedKernel[],
  body: (session: PipelineSession, context: PipelineContext) => T,
): PipelineOutcome<T> {
  const rt = openRuntime();
  const device = openDevice(rt, plan.device);
  const arch = `sm_${device.computeCapability.major}${device.computeCapability.minor}`;
  return Cleanup.use((cleanup) => {
    const handles = new Map<string, KernelHandle>();
    const compiles: CompileRecord[] = [];
    for (const kernel of kernels) {
      const compiled = compileKernelSource({ sourcePath: kernel.sourcePath, source: kernel.sourceText, options: kernel.options, arch });
      const library = rt.loadLibrary(compiled.cubin);
      cleanup.push(() => library.unload());
      handles.set(kernel.label, rt.getKernel(library.library, kernel.entry));
      compiles.push({ label: kernel.label, cached: compiled.cached, ms: compiled.ms, arch, nvrtc: compiled.nvrtcVersion });
    }
    let gate: KernelHandle | null = null;
    if (plan.schedules.some((s) => s.gated)) {
      const source = readKernelSource(join(builtinKernelsDir(), 'internal', 'gate.cu'));
      const compiled = compileKernelSource({ sourcePath: source.path, source: source.text, options: [], arch });
      const library = rt.loadLibrary(compiled.cubin);
      cleanup.push(() => library.unload());
      gate = rt.getKernel(library.library, 'cuda_pipe_gate');
    }
    const session = PipelineSession.open(rt, plan, device, handles, gate);
    cleanup.push(() => session.close());
    const clock = openSmClock(device.pciBusId, device.index);
    if ('clock' in clock) cleanup.push(() => clock.clock.close());
    const value = body(session, { smClock: 'clock' in clock ? clock.clock.read : undefined });
    const software = softwareVersions(rt, null);
    return {
      device, clockUnavailable: 'unavailable' in clock ? clock.unavailable : null,
      software: { ...software, nvrtc: compiles[0]?.nvrtc ?? null }, compiles, value,
    };
  });
}
