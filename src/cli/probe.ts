import { describeDevice, softwareVersions } from '../cuda/device.js';
import { LibraryOverrideError } from '../cuda/load.js';
import { openNvrtc, type Nvrtc } from '../cuda/nvrtc.js';
import { openRuntime } from '../cuda/runtime.js';
import { parseQuantity } from '../config/units.js';
import { type CudaPipeError, UsageError } from '../errors.js';
import { measureBandwidth } from '../measure/bandwidth.js';
import { packageVersion } from '../paths.js';
import { PROBE_SCHEMA_ID, PROBE_VERSION, type ProbeDocument } from '../result.js';
import { renderProbe } from '../report/probe.js';
import { makeStyle } from '../report/style.js';

export interface ProbeOptions {
  device: string;
  bandwidth?: boolean;
  size: string;
  reps: number;
  json?: boolean;
}

export async function probeCommand(options: ProbeOptions): Promise<0> {
  const bytes = parseQuantity(options.size, 'bytes');
  if (typeof bytes !== 'number' || bytes < 1) {
    throw new UsageError(`--size: ${typeof bytes === 'number' ? 'must be at least one byte' : bytes.error}.`);
  }
  const rt = openRuntime();
  const count = rt.deviceCount();
  const devices = selectDevices(options.device, count);
  const nvrtc = tryNvrtc();
  const document: ProbeDocument = {
    schema: PROBE_SCHEMA_ID,
    version: PROBE_VERSION,
    tool: { name: 'cuda-pipe', version: packageVersion() },
    software: softwareVersions(rt, nvrtc),
    devices: devices.map((index) => {
      const facts = describeDevice(rt, index);
      return { facts, bandwidth: options.bandwidth ? measureBandwidth(rt, facts, bytes, options.reps) : null };
    }),
  };
  process.stdout.write(options.json ? JSON.stringify(document, null, 2) + '\n' : renderProbe(document, makeStyle()) + '\n');
  return 0;
}

function selectDevices(selection: string, count: number): number[] {
  if (selection === 'all') return Array.from({ length: count }, (_, i) => i);
  const index = Number(selection);
  if (!Number.isInteger(index) || index < 0) throw new UsageError(`--device: expected a device index or "all", got "${selection}".`);
  if (index >= count) throw new UsageError(`--device ${index}: this machine has ${count} CUDA device${count === 1 ? '' : 's'} (0 to ${count - 1}).`);
  return [index];
}

/** probe reports NVRTC when it is there, and says so when it is not, rather than failing. */
function tryNvrtc(): Nvrtc | null {
  try {
    return openNvrtc();
  } catch (error) {
    // A missing NVRTC is a fact probe reports; a CUDA_PIPE_NVRTC that names the wrong file is a mistake to show.
    if ((error as CudaPipeError).exitCode === 3 && !(error instanceof LibraryOverrideError)) return null;
    throw error;
  }
}
