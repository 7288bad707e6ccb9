import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configHash, loadConfigFile, type Overrides } from '../config/load.js';
import type { ExitCode } from '../errors.js';
import { resolveKernels } from '../kernels/resolve.js';
import { buildPlan } from '../plan/build.js';
import { builtinConfigsDir, packageVersion } from '../paths.js';
import { renderPlan } from '../report/plan.js';
import { renderRunTable } from '../report/run-table.js';
import { makeStyle } from '../report/style.js';
import { runPipeline } from '../exec/run-pipeline.js';
import { measureSchedules, verifySchedules } from '../measure/repeat.js';
import { buildRunResult } from '../measure/result.js';

export interface RunOptions extends Overrides {
  dryRun?: boolean;
  verify: boolean;
  json?: string;
}

export async function runCommand(configArg: string | undefined, options: RunOptions): Promise<ExitCode> {
  const path = configArg ?? join(builtinConfigsDir(), 'balanced.yaml');
  const { config, locate, raw } = loadConfigFile(path, options);
  const kernels = resolveKernels(config, locate);
  const plan = buildPlan(config, kernels);
  if (options.dryRun) {
    process.stdout.write(renderPlan(plan) + '\n');
    return 0;
  }
  const policy = config.repetitions;
  const outcome = runPipeline(plan, kernels, (session) => ({
    verification: verifySchedules(session, options.verify),
    measured: measureSchedules(session, policy),
  }));
  const result = buildRunResult({
    toolVersion: packageVersion(), config, configHash: configHash(config), rawConfig: raw, plan,
    device: outcome.device, software: outcome.software, compiles: outcome.compiles, policy,
    measured: outcome.value.measured, verification: outcome.value.verification,
  });
  const json = JSON.stringify(result, null, 2) + '\n';
  if (options.json === '-') {
    process.stdout.write(json);
    process.stderr.write(renderRunTable(result, makeStyle(process.stderr)) + '\n');
  } else {
    if (options.json) writeFileSync(options.json, json);
    process.stdout.write(renderRunTable(result, makeStyle()) + '\n');
  }
  return result.verification.status === 'failed' ? 1 : 0;
}
