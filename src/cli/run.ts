import { join } from 'node:path';
import { runConfig, planConfig } from '../api/run.js';
import { loadConfigFile, type Overrides } from '../config/load.js';
import type { ExitCode } from '../errors.js';
import type { WaitStrategy } from '../exec/wait.js';
import { builtinConfigsDir } from '../paths.js';
import { renderHostMemoryTable } from '../report/host-memory.js';
import { renderPlan } from '../report/plan.js';
import type { HostMemoryKind } from '../vocabulary.js';
import { writeRunOutputs } from './outputs.js';

export interface RunFlags extends Omit<Overrides, 'hostMemory'> {
  hostMemory?: HostMemoryKind[];
  dryRun?: boolean;
  verify: boolean;
  tracing: boolean;
  gate?: boolean;
  wait: WaitStrategy;
  json?: string;
  md?: string;
  svg?: string;
  html?: string;
  trace?: string;
  timeline?: boolean;
}

export async function runCommand(configArg: string | undefined, flags: RunFlags): Promise<ExitCode> {
  const path = configArg ?? join(builtinConfigsDir(), 'balanced.yaml');
  const { hostMemory: kinds, ...overrides } = flags;
  // One config per host memory kind asked for, each a run of its own; without the flag, the config's own kinds.
  const loads = (kinds ?? [undefined]).map((hostMemory) => loadConfigFile(path, { ...overrides, hostMemory }));
  const gate = flags.gate ?? false;
  if (flags.dryRun) {
    process.stdout.write(loads.map((loaded) => renderPlan(planConfig(loaded, { gate }).plan)).join('\n\n') + '\n');
    return 0;
  }
  const results = [];
  for (const loaded of loads) results.push(await runConfig(loaded, { verify: flags.verify, gate, trace: flags.tracing, wait: flags.wait }));
  writeRunOutputs(results, flags, { table: true, gantt: flags.timeline ?? false });
  if (kinds && kinds.length > 1) process.stdout.write('\n' + renderHostMemoryTable(results) + '\n');
  return results.some((r) => r.verification.status === 'failed') ? 1 : 0;
}
