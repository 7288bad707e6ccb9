import { probe } from '../api/probe.js';
import { parseQuantity } from '../config/units.js';
import { UsageError } from '../errors.js';
import type { WaitStrategy } from '../exec/wait.js';
import { renderProbe } from '../report/probe.js';
import { makeStyle } from '../report/style.js';

export interface ProbeFlags {
  device: string;
  bandwidth?: boolean;
  size: string;
  reps: number;
  json?: boolean;
  wait: WaitStrategy;
}

export async function probeCommand(flags: ProbeFlags): Promise<0> {
  const bytes = parseQuantity(flags.size, 'bytes');
  if (typeof bytes !== 'number' || bytes < 1) {
    throw new UsageError(`--size: ${typeof bytes === 'number' ? 'must be at least one byte' : bytes.error}.`);
  }
  const devices = flags.device === 'all' ? 'all' : Number(flags.device);
  if (devices !== 'all' && (!Number.isInteger(devices) || devices < 0)) {
    throw new UsageError(`--device: expected a device index or "all", got "${flags.device}".`);
  }
  const document = await probe({ devices, bandwidthBytes: flags.bandwidth ? bytes : null, reps: flags.reps, wait: flags.wait });
  process.stdout.write(flags.json ? JSON.stringify(document, null, 2) + '\n' : renderProbe(document, makeStyle()) + '\n');
  return 0;
}
