import koffi from 'koffi';

// NVML ships with the driver (libnvidia-ml.so.1), not with the toolkit: where it is missing the clocks are simply
// "not checked".

export interface SmClock {
  /** The SM clock now, in MHz; null when NVML stopped answering. */
  read(): number | null;
  close(): void;
}

export type SmClockOutcome = { readonly clock: SmClock } | { readonly unavailable: string };

const NVML_CLOCK_SM = 1;

export function openSmClock(pciBusId: string, cudaIndex: number): SmClockOutcome {
  let lib: ReturnType<typeof koffi.load>;
  try {
    lib = koffi.load('libnvidia-ml.so.1');
  } catch {
    return { unavailable: 'libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) could not be loaded' };
  }
  const init = lib.func('int nvmlInit_v2()');
  const shutdown = lib.func('int nvmlShutdown()');
  const byBusId = lib.func('int nvmlDeviceGetHandleByPciBusId_v2(const char *busId, _Out_ void **device)');
  const byIndex = lib.func('int nvmlDeviceGetHandleByIndex_v2(unsigned int index, _Out_ void **device)');
  const clockInfo = lib.func('int nvmlDeviceGetClockInfo(void *device, int type, _Out_ unsigned int *clock)');
  const code = init() as number;
  if (code !== 0) return { unavailable: `nvmlInit failed with NVML error ${code}` };
  const handle = new BigUint64Array(1);
  // The CUDA index and NVML's can differ (CUDA_VISIBLE_DEVICES, ordering); the PCI bus id names the same GPU.
  if ((byBusId(pciBusId, handle) as number) !== 0 && (byIndex(cudaIndex, handle) as number) !== 0) {
    shutdown();
    return { unavailable: `NVML does not know the GPU at ${pciBusId}` };
  }
  const device = handle[0];
  const out = new Uint32Array(1);
  return {
    clock: {
      read: () => ((clockInfo(device, NVML_CLOCK_SM, out) as number) === 0 ? (out[0] ?? null) : null),
      close: () => {
        shutdown();
      },
    },
  };
}
