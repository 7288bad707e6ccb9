// Where analyze's memory goes (issue 40: peak RSS under 1 GiB on a 1 GB trace): the process's RSS sampled every
// 100 ms by a worker thread (it reads the process's RSS while the main thread is busy parsing), with the phases of
// `analyze` marked, and the live heap after each phase (a full GC first). Run after `npm run build`:
//
//   node --expose-gc scripts/bench/analyze-memory.mjs [--file /tmp/cuda-pipe-big/ddp-1g.pt.trace.json] [--dist dist]
//     [--timeline 5]
//
// Prints one line a phase (its end: seconds since start, RSS, heap used, external and array buffers, in MiB), the
// peak RSS seen within each phase, and the peak of the whole run; with --timeline S, the RSS every S seconds too.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const file = flag('file', '/tmp/cuda-pipe-big/ddp-1g.pt.trace.json');
const dist = resolve(flag('dist', 'dist'));
const load = (path) => import(pathToFileURL(`${dist}/${path}`).href);

const peaks = new SharedArrayBuffer(8);
const peak = new Float64Array(peaks);
const every = Number(flag('timeline', '0'));
const sampler = new Worker(
  `const { workerData: { peaks, every } } = require('node:worker_threads');
   const { writeSync } = require('node:fs');
   const peak = new Float64Array(peaks);
   const t0 = Date.now();
   let n = 0;
   setInterval(() => {
     const rss = process.memoryUsage.rss();
     if (rss > peak[0]) peak[0] = rss;
     if (every && ++n % (every * 10) === 0) writeSync(1, '  t ' + ((Date.now() - t0) / 1000).toFixed(0) + ' s rss ' + (rss / 1048576).toFixed(0) + ' MiB\\n');
   }, 100);`,
  { eval: true, workerData: { peaks, every } },
);
const MiB = (n) => (n / 1048576).toFixed(0);
const t0 = process.hrtime.bigint();
let phasePeak = 0;
function mark(phase) {
  const sampled = peak[0];
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  globalThis.gc?.();
  const m = process.memoryUsage();
  const within = Math.max(sampled, m.rss);
  console.log(
    `${phase.padEnd(10)} t ${seconds.toFixed(1)} s\tpeak RSS in phase ${MiB(within)} MiB\tafter GC: rss ${MiB(m.rss)}` +
      ` heap used ${MiB(m.heapUsed)} external ${MiB(m.external)} array buffers ${MiB(m.arrayBuffers)} MiB`,
  );
  phasePeak = Math.max(phasePeak, within);
  peak[0] = 0;
}

const { parseTraceFile } = await load('traces/parse.js');
const { analyzeTraces } = await load('analysis/analyze.js');
const { renderAnalysis } = await load('report/analyze.js');
mark('start');
const trace = await parseTraceFile(file);
mark('parse');
console.log(`  ${trace.gpu.length} GPU events, ${trace.host.length} host calls, ${trace.steps.length} steps`);
const document = analyzeTraces([trace], { rates: null, toolVersion: 'bench' });
mark('analysis');
const text = renderAnalysis(document, 100);
mark('render');
console.log(`  ${text.length} characters of text; peak RSS of the run ${MiB(phasePeak)} MiB`);
await sampler.terminate();
