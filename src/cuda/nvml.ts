import koffi from 'koffi';

// NVML ships with the driver (libnvidia-ml.so.1), not with the toolkit: where it is missing the clocks are simply
// "not checked".

export interface SmClock {
  /** The SM clock now, in MHz; null when NVML stopped answering. */
  read(): number | null;
  /**
   * PIDs of the compute processes NVML sees on the GPU (this one included, possibly under another PID namespace's
   * number), and how many there are (more than the PIDs when over the buffer); null when NVML cannot say.
   */
  computeProcesses(): { readonly pids: readonly number[]; readonly count: number } | null;
  close(): void;
}

export type SmClockOutcome = { readonly clock: SmClock } | { readonly unavailable: string };

const NVML_CLOCK_SM = 1;
const NVML_ERROR_INSUFFICIENT_SIZE = 7;
/** nvmlProcessInfo_v2_t and the _v3 call's nvmlProcessInfo_t: pid (uint, padded to 8), usedGpuMemory, two uints. */
const PROCESS_INFO_BYTES = 24;
const MAX_PROCESSES = 64;

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
  const processes = runningProcesses(lib);
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
      computeProcesses: () => processes?.(device) ?? null,
      close: () => {
        shutdown();
      },
    },
  };
}

/** nvmlDeviceGetComputeRunningProcesses, _v3 where the driver has it, else _v2 (same record); null with neither. */
function runningProcesses(
  lib: ReturnType<typeof koffi.load>,
): ((device: unknown) => { pids: number[]; count: number } | null) | null {
  type Call = (device: unknown, count: Uint32Array, infos: Uint8Array) => number;
  let call: Call | null = null;
  for (const name of ['nvmlDeviceGetComputeRunningProcesses_v3', 'nvmlDeviceGetComputeRunningProcesses_v2']) {
    try {
      call = lib.func(
        `int ${name}(void *device, _Inout_ unsigned int *infoCount, _Out_ uint8_t *infos)`,
      ) as unknown as Call;
      break;
    } catch {
      // An older driver: try the next version.
    }
  }
  if (!call) return null;
  const get = call;
  const infos = new Uint8Array(MAX_PROCESSES * PROCESS_INFO_BYTES);
  const view = new DataView(infos.buffer);
  return (device) => {
    const count = new Uint32Array([MAX_PROCESSES]);
    let code: number;
    try {
      code = get(device, count, infos);
    } catch {
      // A warning's input is not worth failing a run over: say "not checked" instead.
      return null;
    }
    if (code !== 0 && code !== NVML_ERROR_INSUFFICIENT_SIZE) return null;
    const total = count[0] ?? 0;
    // On INSUFFICIENT_SIZE NVML fills nothing in and sets the count it needs: the count alone is known.
    const filled = code === 0 ? Math.min(total, MAX_PROCESSES) : 0;
    const pids = Array.from({ length: filled }, (_, i) => view.getUint32(i * PROCESS_INFO_BYTES, true));
    return { pids, count: total };
  };
}
