// Which traced reps of the recorded Results get a floor term above the rep's own time, in the floor run's findings
// divide by (rep-findings.ts' repStep): the link terms (each direction's bytes over the rate taken from the device's
// traced copies) and the per-op cost. The kernels' term is left out: it sums kernels that may run side by side, and
// says so.
// Usage: node --import tsx scripts/bench/floor-terms.ts   (from the repository root; a line per rep over, then counts)
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repStep } from '../../src/analysis/rep-findings.js';
import { loadDocument } from '../../src/result/load.js';

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : [],
  );

let reps = 0;
const over = { link: 0, perOp: 0 };
for (const file of ['test/fixtures', 'baselines', 'docs/measurements'].flatMap(walk)) {
  let document: ReturnType<typeof loadDocument>;
  try {
    document = loadDocument(file);
  } catch {
    continue;
  }
  if (document.kind !== 'results') continue;
  for (const result of document.results) {
    for (const rep of result.timeline?.reps ?? []) {
      const { floor } = repStep(result, rep).step;
      reps++;
      const link = Math.max(floor.h2dMs ?? 0, floor.d2hMs ?? 0);
      if (link > rep.totalMs) over.link++;
      if (floor.opCostMs > rep.totalMs) over.perOp++;
      if (link > rep.totalMs || floor.opCostMs > rep.totalMs)
        console.log(
          `${file} ${rep.mode} GPU ${rep.device}: rep ${rep.totalMs.toFixed(3)} ms, H2D ${floor.h2dMs?.toFixed(3)}, ` +
            `D2H ${floor.d2hMs?.toFixed(3)}, per-op ${floor.opCostMs.toFixed(3)}`,
        );
    }
  }
}
console.log(`${reps} traced reps; a link term over the rep: ${over.link}; the per-op cost over: ${over.perOp}`);
