import { describeDevice, softwareVersions } from '../cuda/device.js';
import { openRuntime, type CudaRuntime } from '../cuda/runtime.js';
import type { KernelHandle } from '../cuda/types.js';
import { UsageError } from '../errors.js';
import { compileKernelSource } from '../kernels/compile.js';
import type { ResolvedKernel } from '../kernels/resolve.js';
import type { CompileRecord } from '../measure/result.js';
import type { Plan } from '../plan/types.js';
import type { DeviceFacts, SoftwareVersions } from '../result.js';
import { Cleanup } from './cleanup.js';
import { PipelineSession } from './session.js';

export interface PipelineOutcome<T> {
  readonly device: DeviceFacts;
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

/**
 * Everything between a Plan and its measurements: open the device, compile (or fetch from the cache) and load each
 * kernel for the device's architecture, bind the plan in a session, hand it to `body`, and release it all.
 */
export function runPipeline<T>(plan: Plan, kernels: readonly ResolvedKernel[], body: (session: PipelineSession) => T): PipelineOutcome<T> {
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
    const session = PipelineSession.open(rt, plan, device, handles);
    cleanup.push(() => session.close());
    const value = body(session);
    const software = softwareVersions(rt, null);
    return { device, software: { ...software, nvrtc: compiles[0]?.nvrtc ?? null }, compiles, value };
  });
}
