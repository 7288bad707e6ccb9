import { readFileSync } from 'node:fs';
import type { DeviceFacts, PcieLink, SoftwareVersions } from '../result/environment.js';
import type { Nvrtc } from '../cuda/nvrtc.js';
import type { CudaRuntime } from '../cuda/runtime.js';

/** Everything `probe` reports about one device, and what a Result records to make numbers comparable. */
export function describeDevice(rt: CudaRuntime, device: number): DeviceFacts {
  rt.setDevice(device);
  const { name, uuid } = rt.nameAndUuid(device);
  const memory = rt.memory.info();
  const pciBusId = rt.pciBusId(device);
  const attr = (name: Parameters<CudaRuntime['attribute']>[0]) => rt.attribute(name, device);
  return {
    index: device,
    name,
    uuid,
    computeCapability: { major: attr('computeCapabilityMajor'), minor: attr('computeCapabilityMinor') },
    multiprocessors: attr('multiProcessorCount'),
    maxThreadsPerMultiprocessor: attr('maxThreadsPerMultiProcessor'),
    memoryBytes: memory.total,
    l2CacheBytes: attr('l2CacheSize'),
    asyncEngineCount: attr('asyncEngineCount'),
    concurrentKernels: attr('concurrentKernels') === 1,
    gpuOverlap: attr('gpuOverlap') === 1,
    unifiedAddressing: attr('unifiedAddressing') === 1,
    canMapHostMemory: attr('canMapHostMemory') === 1,
    integrated: attr('integrated') === 1,
    streamPriority: rt.streamPriorityRange(),
    pciBusId,
    pcie: readPcieLink(pciBusId),
  };
}

export function softwareVersions(rt: CudaRuntime, nvrtc: Nvrtc | null): SoftwareVersions {
  const nvrtcVersion = nvrtc?.version();
  return {
    driver: formatCudaVersion(rt.driverVersion()),
    runtime: formatCudaVersion(rt.runtimeVersion()),
    nvrtc: nvrtcVersion ? `${nvrtcVersion.major}.${nvrtcVersion.minor}` : null,
    nvrtcArchitectures: nvrtc ? nvrtc.supportedArchs().map((a) => `sm_${a}`) : [],
    cudartPath: rt.libraryPath,
    nvrtcPath: nvrtc?.libraryPath ?? null,
  };
}

/** 13000 → "13.0", 12040 → "12.4"; CUDA encodes versions as 1000 × major + 10 × minor. */
export function formatCudaVersion(encoded: number): string {
  if (encoded === 0) return 'none';
  return `${Math.floor(encoded / 1000)}.${Math.floor((encoded % 1000) / 10)}`;
}

const GENERATION_BY_RATE: ReadonlyArray<[number, number]> = [
  [2.5, 1],
  [5, 2],
  [8, 3],
  [16, 4],
  [32, 5],
  [64, 6],
  [128, 7],
];

/** "32.0 GT/s PCIe" → 5. */
export function pcieGeneration(speed: string): number | null {
  const rate = Number.parseFloat(speed);
  if (!Number.isFinite(rate)) return null;
  const match = GENERATION_BY_RATE.find(([gt]) => Math.abs(gt - rate) < 0.01);
  return match ? match[1] : null;
}

/** The link as sysfs reports it; null where sysfs is not readable (containers, non-Linux). */
export function readPcieLink(pciBusId: string, sysfsRoot = '/sys/bus/pci/devices'): PcieLink | null {
  // cudaDeviceGetPCIBusId gives "00000000:65:00.0" or "0000:65:00.0"; sysfs names the device "0000:65:00.0".
  const [domain = '', bus = '', rest = ''] = pciBusId.toLowerCase().split(':');
  const dir = `${sysfsRoot}/${domain.slice(-4).padStart(4, '0')}:${bus}:${rest}`;
  const read = (file: string) => readFileSync(`${dir}/${file}`, 'utf8').trim();
  try {
    const speed = read('current_link_speed');
    const maxSpeed = read('max_link_speed');
    return {
      generation: pcieGeneration(speed),
      width: Number.parseInt(read('current_link_width'), 10),
      maxGeneration: pcieGeneration(maxSpeed),
      maxWidth: Number.parseInt(read('max_link_width'), 10),
      speed,
    };
  } catch {
    return null;
  }
}
