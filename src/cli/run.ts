import { join } from 'node:path';
import { runConfig, planConfig } from '../api/run.js';
import { loadConfigFile, type Overrides } from '../config/load.js';
import type { ExitCode } from '../errors.js';
import type { WaitStrategy } from '../exec/wait.js';
import { builtinConfigsDir } from '../paths.js';
import { renderPlan } from '../report/plan.js';
import { withInterrupts } from './interrupt.js';
import { writeRunOutputs } from './outputs.js';

export interface RunFlags extends Overrides {
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
  timeout?: number;
}

export async function runCommand(configArg: string | undefined, flags: RunFlags): Promise<ExitCode> {
  const loaded = loadConfigFile(configArg ?? join(builtinConfigsDir(), 'balanced.yaml'), flags);
  const gate = flags.gate ?? false;
  if (flags.dryRun) {
    process.stdout.write(renderPlan(planConfig(loaded, { gate }).plan) + '\n');
    return 0;
  }
  const result = await withInterrupts((signal) => runConfig(loaded, {
    verify: flags.verify, gate, trace: flags.tracing, wait: flags.wait, signal, timeoutMs: seconds(flags.timeout),
    // One line on stderr, so that whoever waits for the run (a person, a test sending it a signal) sees it start.
    onMeasuring: () => process.stderr.write(`measuring ${loaded.config.name} (Ctrl-C stops after the current rep)\n`),
  }));
  writeRunOutputs([result], flags, { table: true, gantt: flags.timeline ?? false });
  return result.verification.status === 'failed' ? 1 : 0;
}

const seconds = (value: number | undefined) => (value === undefined ? undefined : value * 1000);
