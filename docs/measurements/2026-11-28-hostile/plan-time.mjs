// How long building a plan holds the JS thread (and so a signal) for each shipped config with many ops a chunk, at
// chunk counts around the plan limit: planConfig alone (kernels resolved, the plan built), no compile, no output.
// Run from the repository root after `npm run build`: node docs/measurements/2026-11-28-hostile/plan-time.mjs >> plan-time.log
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { planConfig } from '../../../dist/src/api/run.js';
import { loadConfigFile } from '../../../dist/src/config/load.js';

for (const chunks of [4096, 16384]) {
  for (const name of ['balanced', 'host-stage', 'priorities', 'stage-per-stream']) {
    const loaded = loadConfigFile(join('configs', `${name}.yaml`), { chunks });
    const started = performance.now();
    const { plan } = planConfig(loaded, { gate: false, devices: null });
    const ms = performance.now() - started;
    const ops = plan.schedules.reduce((sum, s) => sum + s.body.length, 0);
    process.stdout.write(`${new Date().toISOString()} ${name} ${chunks} chunks: planned in ${ms.toFixed(0)} ms, ${ops} ops; load ${loadavg()[0].toFixed(2)}\n`);
  }
}
