import { probe, type ProbeOptions } from '../api/probe.js';
import { parseQuantity } from '../config/units.js';
import { UsageError } from '../errors.js';
import type { WaitStrategy } from '../exec/wait.js';
import { renderProbe } from '../report/probe.js';
import { makeStyle } from '../report/style.js';
import { fitLines, outputColumns } from '../report/width.js';
import { withInterrupts } from './interrupt.js';
import { writeDocuments } from './write-file.js';

export interface ProbeFlags {
  device: 'all' | number[];
  bandwidth?: boolean;
  size: string;
  reps: number;
  json?: string;
  wait: WaitStrategy;
  timeout?: number;
}

export async function probeCommand(flags: ProbeFlags): Promise<0> {
  const bytes = parseQuantity(flags.size, 'bytes');
  if (typeof bytes !== 'number' || bytes < 1) {
    throw new UsageError(`--size: ${typeof bytes === 'number' ? 'must be at least one byte' : bytes.error}.`);
  }
  const options: ProbeOptions = {
    devices: flags.device,
    bandwidthBytes: flags.bandwidth ? bytes : null,
    reps: flags.reps,
    wait: flags.wait,
    ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout * 1000 }),
  };
  // Only the bandwidth measurement runs work on the GPU, so only it stops at a rep boundary; describing devices ends at
  // once on a signal.
  const document = flags.bandwidth
    ? await withInterrupts((signal) => probe({ ...options, signal }))
    : await probe(options);
  const out = await writeDocuments([
    { flag: 'json', target: flags.json, render: () => JSON.stringify(document, null, 2) + '\n' },
  ]);
  const columns = outputColumns(out);
  out.write(fitLines(renderProbe(document, makeStyle(out), columns), columns) + '\n');
  return 0;
}
