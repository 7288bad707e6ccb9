import { z } from 'zod';

// Where a Result was measured: the devices as CUDA describes them, the software, the launcher's rank, the SM clock and
// whoever else was on the GPU, and the NCCL communicator. Facts about the machine, not about the pipeline.

export const PcieLinkSchema = z.object({
  generation: z.number().nullable(),
  width: z.number(),
  maxGeneration: z.number().nullable(),
  maxWidth: z.number(),
  speed: z.string(),
});
export type PcieLink = z.infer<typeof PcieLinkSchema>;

export const DeviceFactsSchema = z.object({
  index: z.number().int(),
  name: z.string(),
  uuid: z.string(),
  computeCapability: z.object({ major: z.number().int(), minor: z.number().int() }),
  multiprocessors: z.number().int(),
  maxThreadsPerMultiprocessor: z.number().int(),
  memoryBytes: z.number(),
  l2CacheBytes: z.number(),
  asyncEngineCount: z.number().int(),
  concurrentKernels: z.boolean(),
  gpuOverlap: z.boolean(),
  unifiedAddressing: z.boolean(),
  canMapHostMemory: z.boolean(),
  integrated: z.boolean(),
  streamPriority: z.object({ least: z.number().int(), greatest: z.number().int() }),
  pciBusId: z.string(),
  pcie: PcieLinkSchema.nullable(),
});
export type DeviceFacts = z.infer<typeof DeviceFactsSchema>;

export const SoftwareVersionsSchema = z.object({
  driver: z.string(),
  runtime: z.string(),
  nvrtc: z.string().nullable(),
  nvrtcArchitectures: z.array(z.string()),
  cudartPath: z.string(),
  nvrtcPath: z.string().nullable(),
});
export type SoftwareVersions = z.infer<typeof SoftwareVersionsSchema>;

export const RunIdentitySchema = z.object({
  hostname: z.string(),
  /** The launcher's rank and size (OpenMPI, Slurm, MVAPICH, MPICH/PMI, torchrun); null when not launched by one. */
  rank: z.number().int().nullable(),
  localRank: z.number().int().nullable(),
  size: z.number().int().nullable(),
  jobId: z.string().nullable(),
  launcher: z.string().nullable(),
});
export type RunIdentity = z.infer<typeof RunIdentitySchema>;

/** Whether other compute processes shared the GPU during the run, as NVML listed them. */
export const SharingRecordSchema = z.object({
  checked: z.boolean(),
  /** The most compute processes other than this run seen at once; null when not checked. */
  otherProcesses: z.number().int().nullable(),
  note: z.string(),
});
export type SharingRecord = z.infer<typeof SharingRecordSchema>;

/** What results written before the check say: nothing is known. */
export const SHARING_NOT_CHECKED: SharingRecord = {
  checked: false,
  otherProcesses: null,
  note: 'not checked: written before cuda-pipe looked for other processes on the GPU',
};

/**
 * Whether the SM clock was watched during the run, and the range it was read in; and whether anything else was
 * running on the GPU (added within version 2: absent in older files, which read as not checked).
 */
export const ClocksRecordSchema = z.object({
  checked: z.boolean(),
  note: z.string(),
  minMHz: z.number().nullable(),
  maxMHz: z.number().nullable(),
  sharing: SharingRecordSchema.default(SHARING_NOT_CHECKED),
});
