// What zod/mini saves in building schemas against zod's classic API, the one cuda-pipe uses: 100 objects of ten
// optional non-negative numbers (2,200 schemas), built in a fresh process for each API and each of 5 rounds, the time
// to build them and the heap they hold. Usage, from the checkout: node docs/measurements/2026-11-29-report-start-2/zod-mini.mjs
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const [, , which] = process.argv;
if (which) {
  const z = await import(which === 'mini' ? 'zod/mini' : 'zod');
  const heap = process.memoryUsage().heapUsed;
  const started = performance.now();
  const kept = [];
  for (let i = 0; i < 100; i++) {
    const shape = {};
    for (let f = 0; f < 10; f++)
      shape[`f${f}`] = which === 'mini' ? z.optional(z.number().check(z.minimum(0))) : z.number().min(0).optional();
    kept.push(z.object(shape));
  }
  const ms = performance.now() - started;
  console.log(`${which}: ${ms.toFixed(1)} ms, ${((process.memoryUsage().heapUsed - heap) / 1e6).toFixed(1)} MB`);
} else {
  for (let round = 1; round <= 5; round++)
    for (const api of ['classic', 'mini'])
      process.stdout.write(spawnSync(process.execPath, [fileURLToPath(import.meta.url), api], { encoding: 'utf8' }).stdout);
}
