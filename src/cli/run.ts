import { join } from 'node:path';
import { configHash, loadConfigFile, type Overrides } from '../config/load.js';
import type { ExitCode } from '../errors.js';
import { runPipeline } from '../exec/run-pipeline.js';
import { resolveKernels } from '../kernels/resolve.js';
import { policyFromConfig } from '../measure/policy.js';
import { measureSchedules, verifySchedules } from '../measure/repeat.js';
import { buildRunResult } from '../measure/result.js';
import { buildPlan } from '../plan/build.js';
import { builtinConfigsDir, packageVersion } from '../paths.js';
import { renderPlan } from '../report/plan.js';
import { writeRunOutputs } from './outputs.js';

export interface RunOptions extends Overrides {
  dryRun?: boolean;
  verify: boolean;
  gate?: boolean;
  json?: string;
  md?: string;
}

export async function runCommand(configArg: string | undefined, options: RunOptions): Promise<ExitCode> {
  const path = configArg ?? join(builtinConfigsDir(), 'balanced.yaml');
  const { config, locate, raw } = loadConfigFile(path, options);
  const kernels = resolveKernels(config, locate);
  const gate = options.gate ?? false;
  const plan = buildPlan(config, kernels, { gate });
  if (options.dryRun) {
    process.stdout.write(renderPlan(plan) + '\n');
    return 0;
  }
  const policy = policyFromConfig(config.repetitions);
  const outcome = runPipeline(plan, kernels, (session, context) => ({
    verification: verifySchedules(session, options.verify),
    measured: measureSchedules(session, policy, { smClock: context.smClock }),
  }));
  const result = buildRunResult({
    toolVersion: packageVersion(), config, configHash: configHash(config), rawConfig: raw, plan,
    device: outcome.device, software: outcome.software, compiles: outcome.compiles, policy, gate,
    clockUnavailable: outcome.clockUnavailable, measured: outcome.value.measured, verification: outcome.value.verification,
  });
  writeRunOutputs(result, options);
  return result.verification.status === 'failed' ? 1 : 0;
}
